package main

import (
	"strings"
	"testing"

	"github.com/sediment-io/sediment/storage/partition"
)

func TestIndexFoldKeysFlag(t *testing.T) {
	cfg, err := parseServe(nil, noEnv)
	if err != nil || cfg.IndexFoldKeys != partition.DefaultIndexFoldKeys {
		t.Fatalf("default --index-fold-keys = %d (%v), want %d", cfg.IndexFoldKeys, err, partition.DefaultIndexFoldKeys)
	}
	for _, v := range []string{"0", "-1", "7", "many"} {
		_, err := parseServe([]string{"--index-fold-keys", v}, noEnv)
		if err == nil || !strings.Contains(err.Error(), "index-fold-keys") {
			t.Errorf("--index-fold-keys %s: err = %v, want a message naming the flag", v, err)
		}
	}
	cfg, err = parseServe([]string{"--index-fold-keys", "500"}, noEnv)
	if err != nil || cfg.IndexFoldKeys != 500 {
		t.Fatalf("--index-fold-keys 500: %d, %v", cfg.IndexFoldKeys, err)
	}
}
