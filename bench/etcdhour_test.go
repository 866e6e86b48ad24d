package bench

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEtcdHourDriver runs the driver for a few rounds over a few
// partitions on a real etcd process, without the fold and with a small
// one side by side: every round commits an index entry per partition, the
// unfolded variant keeps them all, the folded one replaces runs of them by
// manifests, and both end with a compaction and defragmentation, saved in
// results.json and summary.md.
func TestEtcdHourDriver(t *testing.T) {
	if _, err := etcdBinary(); err != nil {
		t.Fatalf("%v (make test builds it: make .bin/etcd)", err)
	}
	cfg := DefaultEtcdHourConfig()
	cfg.Partitions, cfg.PartitionsPerTopic, cfg.Rounds = 6, 3, 24
	cfg.MaintainEvery, cfg.EtcdCompactEvery, cfg.SweepEvery, cfg.CheckpointEvery = 4, 8, 12, 8
	cfg.FoldKeys, cfg.RecordBytes = []int{1 << 20, 8}, 10
	cfg.OutDir = t.TempDir()
	res, err := RunEtcdHour(context.Background(), cfg)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	const entries = 6 * 24 // one index entry per partition per round
	unfolded, folded := res.Variants[0], res.Variants[1]
	for _, v := range res.Variants {
		if v.Rounds != 24 || len(v.Points) != 3 || v.Points[2].Round != 24 || v.End == nil || v.Growth == nil {
			t.Fatalf("fold %d: %d rounds, points %+v, end %+v: want 24 rounds, checkpoints at 8, 16, 24 and an end", v.FoldKeys, v.Rounds, v.Points, v.End)
		}
		last := v.Points[2]
		if last.Keys["parts"] != 6 || last.Keys["topics"] != 2 || last.Compactions != 3 || last.Maintenances != 6 {
			t.Errorf("fold %d: last checkpoint %+v: want 6 parts, 2 topics, 3 etcd compactions, 6 maintenance passes", v.FoldKeys, last)
		}
		if v.End.Keys != last.KeysTotal || v.End.DBSizeAfter <= 0 || v.End.DBSizeAfter > v.End.DBSizeBefore {
			t.Errorf("fold %d: end %+v after %d live keys: want the same keys and a database no larger after defragmentation", v.FoldKeys, v.End, last.KeysTotal)
		}
	}
	if n := unfolded.Points[2].Keys["index"]; n != entries {
		t.Errorf("unfolded: %d index keys, want %d", n, entries)
	}
	if f := folded.Points[2]; f.Manifests <= 0 || f.Keys["index"] >= entries/2 {
		t.Errorf("folded at 8 keys: %d index keys with %d manifests: want manifests and fewer than %d keys", f.Keys["index"], f.Manifests, entries/2)
	}
	if r := res.Ratios["index_keys"]; r <= 2 {
		t.Errorf("ratio of index keys unfolded/folded = %.2f, want > 2", r)
	}
	var saved EtcdHourResults
	b, err := os.ReadFile(filepath.Join(cfg.OutDir, "results.json"))
	if err == nil {
		err = json.Unmarshal(b, &saved)
	}
	if err != nil || len(saved.Variants) != 2 || saved.Variants[1].Points[2].Manifests != folded.Points[2].Manifests {
		t.Fatalf("results.json: %v, %+v", err, saved.Variants)
	}
	md, err := os.ReadFile(filepath.Join(cfg.OutDir, "summary.md"))
	if err != nil || !strings.Contains(string(md), "--index-fold-keys 8: 24 rounds") {
		t.Fatalf("summary.md: %v\n%s", err, md)
	}
}

// TestParseEtcdHourArgs: the defaults are the hour at 1,000 partitions
// without and with the default fold; bad values are refused.
func TestParseEtcdHourArgs(t *testing.T) {
	cfg, err := ParseEtcdHourArgs([]string{"--out", "x"}, io.Discard)
	if err != nil || cfg.Partitions != 1000 || cfg.Rounds != 14400 || cfg.MaintainEvery != 120 ||
		cfg.EtcdCompactEvery != 1200 || len(cfg.FoldKeys) != 2 || cfg.FoldKeys[0] != 1<<20 || cfg.FoldKeys[1] != 64 {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	for _, args := range [][]string{
		{"--fold-keys", "4"},
		{"--partitions", "150"},
		{"--partitions-per-topic", "200"},
		{"--rounds", "0"},
		{"extra"},
	} {
		if _, err := ParseEtcdHourArgs(args, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
