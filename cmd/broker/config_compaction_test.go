package main

import (
	"strings"
	"testing"

	"github.com/sediment-io/sediment/storage/partition"
)

func TestCompactionRateFlag(t *testing.T) {
	cfg, err := parseServe(nil, noEnv)
	if err != nil || cfg.CompactRate != partition.DefaultCompactBytesPerSec {
		t.Fatalf("default --compaction-bytes-per-sec = %d (%v), want %d", cfg.CompactRate, err, partition.DefaultCompactBytesPerSec)
	}
	for _, v := range []string{"0", "-1", "1000", "lots"} {
		_, err := parseServe([]string{"--compaction-bytes-per-sec", v}, noEnv)
		if err == nil || !strings.Contains(err.Error(), "compaction-bytes-per-sec") {
			t.Errorf("--compaction-bytes-per-sec %s: err = %v, want a message naming the flag", v, err)
		}
	}
	cfg, err = parseServe([]string{"--compaction-bytes-per-sec", "1048576"}, noEnv)
	if err != nil || cfg.CompactRate != 1<<20 {
		t.Fatalf("--compaction-bytes-per-sec 1048576: %d, %v", cfg.CompactRate, err)
	}
}
