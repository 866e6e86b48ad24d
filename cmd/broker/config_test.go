package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func noEnv(string) string { return "" }

func TestBadFlagsNameTheFlag(t *testing.T) {
	cases := map[string][]string{
		"--listen":            {"--listen", "nonsense"},
		"--advertise":         {"--advertise", "host-without-port"},
		"--durability":        {"--durability", "maybe"},
		"--upload-interval":   {"--upload-interval", "0s"},
		"--upload-bytes":      {"--upload-bytes", "12"},
		"--max-request-bytes": {"--max-request-bytes", "-5"},
		"--node-id":           {"--node-id", "-1"},
		"--object-store":      {"--object-store", "ftp://x"},
		"--metadata":          {"--metadata", "zookeeper"},
		"--log-level":         {"--log-level", "loud"},
		"--tail-cache-bytes":  {"--tail-cache-bytes", "10"},
		"--session-timeout":   {"--session-timeout", "10ms"},
	}
	for flagName, args := range cases {
		_, err := parseServe(args, noEnv)
		if err == nil || !strings.Contains(err.Error(), flagName) {
			t.Errorf("%v: err = %v, want a message naming %s", args, err, flagName)
		}
	}
	if _, err := parseServe([]string{"--upload-bytes", "lots"}, noEnv); err == nil {
		t.Error("a non-numeric --upload-bytes was accepted")
	}
}

func TestConfigPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sediment.conf")
	os.WriteFile(file, []byte("# comment\nupload-interval = 2s\nnode-id = 3\ndurability = \"object\"\n"), 0o644)
	env := map[string]string{"SEDIMENT_NODE_ID": "5", "SEDIMENT_CONFIG": file}
	cfg, err := parseServe([]string{"--durability", "wal"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.UploadInterval != 2*time.Second || cfg.NodeID != 5 || cfg.Durability != "wal" {
		t.Fatalf("file < env < flag not respected: %+v", cfg)
	}
	if cfg.Advertise != cfg.Listen || !strings.HasPrefix(cfg.ObjectStore, "file://") {
		t.Fatalf("derived defaults: advertise %q object store %q", cfg.Advertise, cfg.ObjectStore)
	}
	os.WriteFile(file, []byte("no-such-flag = 1\n"), 0o644)
	if _, err := parseServe([]string{"--config", file}, noEnv); err == nil || !strings.Contains(err.Error(), "--config") {
		t.Fatalf("unknown flag in the config file: %v", err)
	}
	if _, err := parseServe(nil, func(k string) string {
		if k == "SEDIMENT_UPLOAD_BYTES" {
			return "many"
		}
		return ""
	}); err == nil || !strings.Contains(err.Error(), "SEDIMENT_UPLOAD_BYTES") {
		t.Fatalf("bad environment value: %v", err)
	}
}

func TestRunExitCodes(t *testing.T) {
	if code := run([]string{"frobnicate"}); code != 2 {
		t.Errorf("unknown command: exit %d, want 2", code)
	}
	if code := run([]string{"serve", "--durability", "nope"}); code != 2 {
		t.Errorf("bad flag: exit %d, want 2", code)
	}
	if code := run([]string{"--help"}); code != 0 {
		t.Errorf("--help: exit %d, want 0", code)
	}
}

func TestBadUploadFlagsNameTheFlag(t *testing.T) {
	for flagName, value := range map[string]string{
		"--upload-concurrency": "0", "--flush-timeout": "1ms", "--block-load-timeout": "0s",
		"--stream-stall-timeout": "2h", "--stream-idle-timeout": "-1s",
	} {
		_, err := parseServe([]string{flagName, value}, noEnv)
		if err == nil || !strings.Contains(err.Error(), flagName) {
			t.Errorf("%s %s: err = %v, want a message naming it", flagName, value, err)
		}
	}
}

// TestClusterFlagDefaults: etcd metadata acknowledges after the object
// commit unless told otherwise, and refuses a local folder as its bucket,
// which other machines cannot share.
func TestClusterFlagDefaults(t *testing.T) {
	etcd := []string{"--metadata", "etcd://127.0.0.1:2379/x"}
	if _, err := parseServe(etcd, noEnv); err == nil || !strings.Contains(err.Error(), "--object-store") ||
		!strings.Contains(err.Error(), "not shared") {
		t.Fatalf("etcd with the default file:// bucket: err = %v, want a refusal naming --object-store", err)
	}
	cfg, err := parseServe(append(etcd, "--object-store", "s3://bucket/p?endpoint=http://127.0.0.1:9000"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Durability != "object" || cfg.SessionTimeout != 10*time.Second {
		t.Errorf("etcd defaults: durability %q, session timeout %s; want object, 10s", cfg.Durability, cfg.SessionTimeout)
	}
	cfg, err = parseServe(append(etcd, "--shared-local-store", "--durability", "wal"), noEnv)
	if err != nil || cfg.Durability != "wal" {
		t.Fatalf("etcd, --shared-local-store, --durability wal: %v, durability %q", err, cfg.Durability)
	}
	cfg, err = parseServe(nil, noEnv)
	if err != nil || cfg.Durability != "wal" {
		t.Fatalf("defaults: %v, durability %q; want wal", err, cfg.Durability)
	}
}
