package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// EtcdHourResults is what the etcd-hour driver measured: OUT/results.json.
type EtcdHourResults struct {
	Schema   int               `json:"schema"`
	Kind     string            `json:"kind"` // "etcd-hour"
	Started  time.Time         `json:"started"`
	Command  []string          `json:"command,omitempty"`
	Machine  Machine           `json:"machine"`
	Config   EtcdHourConfig    `json:"config"`
	Variants []EtcdHourVariant `json:"variants"`
	// Ratios are the first variant's end figures over the last's (without
	// the fold over with it, in the default run).
	Ratios map[string]float64 `json:"ratios,omitempty"`
	Notes  []string           `json:"notes"`
}

// EtcdHourVariant is one --index-fold-keys.
type EtcdHourVariant struct {
	FoldKeys int     `json:"index_fold_keys"`
	Rounds   int     `json:"rounds_done"`
	Hours    float64 `json:"hour_equivalents"`
	// Points are the checkpoints; the last is the end, before the
	// bench's compaction and defragmentation (End).
	Points []EtcdHourPoint `json:"checkpoints"`
	End    *EtcdCompaction `json:"end_compact_defrag,omitempty"`
	Growth *EtcdHourGrowth `json:"per_round,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// EtcdHourGrowth is the variant's cost per upload round and per
// partition, over its whole run.
type EtcdHourGrowth struct {
	SecondsPerRound           float64 `json:"wall_s_per_round"`
	TxnsPerRound              float64 `json:"etcd_txns_per_round"`
	ReceivedBytesPerRound     float64 `json:"etcd_received_bytes_per_round"`
	ReceivedBytesPerPartRound float64 `json:"etcd_received_bytes_per_partition_round"`
	KeysPerPartition          float64 `json:"live_keys_per_partition_end"`
	DBInUsePerPartition       float64 `json:"db_in_use_bytes_per_partition_end"`
}

func newEtcdHourResults(cfg EtcdHourConfig) *EtcdHourResults {
	m := DescribeMachine()
	r := &EtcdHourResults{Schema: ResultsSchema, Kind: "etcd-hour", Started: time.Now().UTC(), Command: cfg.Command,
		Machine: m, Config: cfg, Variants: make([]EtcdHourVariant, len(cfg.FoldKeys))}
	for i, k := range cfg.FoldKeys {
		r.Variants[i].FoldKeys = k
	}
	r.Notes = []string{
		fmt.Sprintf("One round stands for one upload interval of %d ms: an hour is %d rounds. Each writes one %d B record to each of %d partitions (%d idempotent producers taking turns) and uploads and commits them through storage/partition.Log (Flush), in objects of at most %d partitions as a broker on etcd cuts them.",
			roundMs, roundsPerHour, cfg.RecordBytes, cfg.Partitions, cfg.Producers, etcdHourObjectPartitions),
		fmt.Sprintf("Maintenance (retention, compaction, index fold, producer-state fold, garbage) every %d rounds, the orphan sweep every %d, etcd's history compacted every %d rounds to the revision of the pass before, as etcdkv.Maintain does. Variants run side by side, each on its own etcd process in its default configuration.",
			cfg.MaintainEvery, cfg.SweepEvery, cfg.EtcdCompactEvery),
		"Wall-time ages are not the rounds': compaction's MinAge (10 minutes) and the GC grace (1 minute) are measured on the object keys' wall-clock timestamps, so on a machine slower than 250 ms a round, a run of small segments reaches compaction's age in fewer rounds than a broker would take (wall_s_per_round says by how much). The broker's clock (producer expiration) is the rounds'.",
	}
	return r
}

func (v *EtcdHourVariant) addPoint(pt EtcdHourPoint) {
	if n := len(v.Points); n > 0 && v.Points[n-1].Round == pt.Round {
		v.Points[n-1] = pt
	} else {
		v.Points = append(v.Points, pt)
	}
	v.Rounds = max(v.Rounds, pt.Round)
	v.Hours = float64(v.Rounds) / roundsPerHour
}

// finish computes the per-round figures and the ratios.
func (r *EtcdHourResults) finish() {
	for i := range r.Variants {
		v := &r.Variants[i]
		if len(v.Points) == 0 || v.Rounds == 0 {
			continue
		}
		last := v.Points[len(v.Points)-1]
		n, parts := float64(last.Round), float64(r.Config.Partitions)
		v.Growth = &EtcdHourGrowth{
			SecondsPerRound: last.WallSeconds / n, TxnsPerRound: last.Txns / n,
			ReceivedBytesPerRound: last.ReceivedBytes / n, ReceivedBytesPerPartRound: last.ReceivedBytes / n / parts,
			KeysPerPartition: float64(last.KeysTotal) / parts, DBInUsePerPartition: float64(last.DBInUse) / parts,
		}
	}
	if len(r.Variants) < 2 {
		return
	}
	a, b := r.Variants[0], r.Variants[len(r.Variants)-1]
	if len(a.Points) == 0 || len(b.Points) == 0 || a.End == nil || b.End == nil {
		return
	}
	pa, pb := a.Points[len(a.Points)-1], b.Points[len(b.Points)-1]
	r.Ratios = map[string]float64{
		"db_size_end":          ratio(float64(pa.DBSize), float64(pb.DBSize)),
		"db_in_use_end":        ratio(float64(pa.DBInUse), float64(pb.DBInUse)),
		"db_size_after_defrag": ratio(a.End.DBSizeAfter, b.End.DBSizeAfter),
		"live_keys":            ratio(float64(pa.KeysTotal), float64(pb.KeysTotal)),
		"index_keys":           ratio(float64(pa.Keys["index"]), float64(pb.Keys["index"])),
		"etcd_txns":            ratio(pa.Txns, pb.Txns),
		"etcd_received_bytes":  ratio(pa.ReceivedBytes, pb.ReceivedBytes),
	}
	if pa.Round != pb.Round {
		r.Notes = append(r.Notes, fmt.Sprintf("The variants ran different rounds (%d and %d): the ratios compare unequal spans.", pa.Round, pb.Round))
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// err joins the variants' errors.
func (r *EtcdHourResults) err() error {
	var errs []error
	for _, v := range r.Variants {
		if v.Error != "" {
			errs = append(errs, fmt.Errorf("fold %d: %s", v.FoldKeys, v.Error))
		}
	}
	return errors.Join(errs...)
}

// write saves results.json and summary.md in dir.
func (r *EtcdHourResults) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bench: etcd-hour: %w", err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: etcd-hour: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: etcd-hour: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(r.Summary()), 0o644); err != nil {
		return fmt.Errorf("bench: etcd-hour: %w", err)
	}
	return nil
}

const mib = 1 << 20

// Summary is summary.md: every variant's checkpoints, its end after
// compaction and defragmentation, and the ratios.
func (r *EtcdHourResults) Summary() string {
	var s strings.Builder
	fmt.Fprintf(&s, "# etcd after an hour-equivalent of uploads: %d partitions\n\n", r.Config.Partitions)
	fmt.Fprintf(&s, "Started %s on %s (%d cores, %.0f GiB), load average at start %s.\n\n",
		r.Started.Format(time.RFC3339), r.Machine.CPU, r.Machine.Cores, r.Machine.MemoryGiB, r.Machine.LoadAvg)
	if len(r.Command) > 0 {
		fmt.Fprintf(&s, "Command: `%s`\n\n", strings.Join(r.Command, " "))
	}
	for _, v := range r.Variants {
		v.summary(&s, r.Config.Partitions)
	}
	if len(r.Ratios) > 0 {
		fmt.Fprintf(&s, "## fold %d over fold %d\n\n| figure | ratio |\n|---|---|\n", r.Variants[0].FoldKeys, r.Variants[len(r.Variants)-1].FoldKeys)
		keys := make([]string, 0, len(r.Ratios))
		for k := range r.Ratios {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&s, "| %s | %.2f |\n", k, r.Ratios[k])
		}
		s.WriteString("\n")
	}
	s.WriteString("## Notes\n\n")
	for _, n := range r.Notes {
		fmt.Fprintf(&s, "- %s\n", n)
	}
	return s.String()
}

func (v EtcdHourVariant) summary(s *strings.Builder, parts int) {
	fmt.Fprintf(s, "## --index-fold-keys %d: %d rounds (%.3f of an hour)\n\n", v.FoldKeys, v.Rounds, v.Hours)
	if v.Error != "" {
		fmt.Fprintf(s, "**Failed**: %s\n\n", v.Error)
	}
	s.WriteString("| round | hours | wall | db MiB | in use MiB | live keys | index | manifests | objects | parts | producers | producer deltas | etcd txns | received MB | load |\n")
	s.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range v.Points {
		fmt.Fprintf(s, "| %d | %.3f | %s | %.1f | %.1f | %d | %d | %d | %d | %d | %d | %d | %.0f | %.1f | %s |\n",
			p.Round, p.Hours, time.Duration(p.WallSeconds*float64(time.Second)).Round(time.Second),
			float64(p.DBSize)/mib, float64(p.DBInUse)/mib, p.KeysTotal, p.Keys["index"], p.Manifests,
			p.Keys["objects"], p.Keys["parts"], p.Keys["producers"], p.Keys["producers (deltas)"],
			p.Txns, p.ReceivedBytes/1e6, p.LoadAvg)
	}
	s.WriteString("\n")
	if v.End != nil {
		fmt.Fprintf(s, "After compaction to revision %d and defragmentation (%.1f s): **%.1f MiB** (in use %.1f MiB; before: %.1f MiB, in use %.1f MiB), %d keys, %.1f per partition.\n\n",
			v.End.Revision, v.End.Seconds, v.End.DBSizeAfter/mib, v.End.DBInUseAfter/mib,
			v.End.DBSizeBefore/mib, v.End.DBInUseBefore/mib, v.End.Keys, float64(v.End.Keys)/float64(parts))
	}
	if g := v.Growth; g != nil {
		fmt.Fprintf(s, "Per round: %.3f s of wall time, %.1f etcd transactions, %.0f B received by etcd (%.0f B per partition). At the end: %.1f live keys and %.0f B of etcd in use per partition.\n\n",
			g.SecondsPerRound, g.TxnsPerRound, g.ReceivedBytesPerRound, g.ReceivedBytesPerPartRound, g.KeysPerPartition, g.DBInUsePerPartition)
	}
}
