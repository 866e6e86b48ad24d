package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dustin/go-humanize"
)

// Report file names inside the output directory.
const (
	ResultsFile = "results.json"
	SummaryFile = "summary.md"
)

// WriteReports writes results.json, summary.md and the plots into dir.
func WriteReports(dir string, res *Results) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ResultsFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(Markdown(res)), 0o644); err != nil {
		return fmt.Errorf("bench: summary: %w", err)
	}
	return WritePlots(dir, res)
}

// Rerender rewrites summary.md and the plots of dir from its
// results.json (after a change to the report's layout, say).
func Rerender(dir string) (*Results, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	if err != nil {
		return nil, fmt.Errorf("bench: rerender: %w", err)
	}
	res := &Results{}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, fmt.Errorf("bench: rerender %s: %w", ResultsFile, err)
	}
	if res.Workload == nil || len(res.Targets) == 0 {
		return nil, fmt.Errorf("bench: rerender: %s has no workload or targets", ResultsFile)
	}
	for _, t := range res.Targets {
		if t.Broker != nil {
			t.Broker.TableLag = tableLag(t.Broker.TableMetricsLast) // absent from older files
		}
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(Markdown(res)), 0o644); err != nil {
		return nil, fmt.Errorf("bench: summary: %w", err)
	}
	return res, WritePlots(dir, res)
}

// Markdown is the report's summary page.
func Markdown(res *Results) string {
	var b strings.Builder
	w := res.Workload
	fmt.Fprintf(&b, "# %s\n\n", w.Name)
	if w.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", w.Description)
	}
	fmt.Fprintf(&b, "%s\n\n", workloadLine(w, res.Rounds))
	if len(w.BrokerFlags) > 0 {
		fmt.Fprintf(&b, "Launched Sediment brokers ran with `%s`.\n\n", strings.Join(w.BrokerFlags, " "))
	}
	m := res.Machine
	fmt.Fprintf(&b, "Machine: %s, %d cores, %.0f GiB, Linux %s, %s; load average at start %s. ",
		m.CPU, m.Cores, m.MemoryGiB, m.Kernel, m.Go, m.LoadAvg)
	if m.Note != "" {
		fmt.Fprintf(&b, "%s. ", strings.TrimSuffix(m.Note, "."))
	}
	fmt.Fprintf(&b, "Raw loopback TCP throughput (the ceiling): **%.0f MB/s**.\n\n", res.Loopback.MBPerSec)
	b.WriteString(SummaryText(res))
	writeBroker(&b, res)
	writeCluster(&b, res)
	writeCost(&b, res)
	writeNotes(&b, res)
	b.WriteString("\nPlots: `throughput.svg`, `latency.svg`")
	if len(res.Targets) > 1 {
		b.WriteString(", `vs.svg`")
	}
	b.WriteString(" (and `.png`).\n")
	return b.String()
}

func workloadLine(w *Workload, rounds int) string {
	end := ""
	switch {
	case w.BacklogBytes > 0:
		end = fmt.Sprintf("backlog of %s produced first, then read from the start", w.BacklogBytes)
	case w.Count > 0 && w.Duration > 0:
		end = fmt.Sprintf("%d records or %s", w.Count, w.Duration)
	case w.Count > 0:
		end = fmt.Sprintf("%d records", w.Count)
	default:
		end = w.Duration.String()
	}
	rate := "as fast as acknowledged"
	if w.ProducerRate > 0 {
		rate = fmt.Sprintf("%d records/s", w.ProducerRate)
	}
	return fmt.Sprintf("Workload: %d topic(s) × %d partitions, %d B records (%.0f%% random, %s), %d producers (%s, acks=%s, linger %s, batch %s, %s), %d consumers; %s; %d round(s) per target.",
		w.Topics, w.Partitions, w.MessageSize, 100*w.RandomShare, w.Payload, w.Producers, rate, w.Acks, w.Linger,
		w.BatchSize, w.Compression, w.Consumers, end, rounds)
}

// SummaryText is the table of headline figures, one row per target.
func SummaryText(res *Results) string {
	var b strings.Builder
	b.WriteString("| target | produced | consumed | produce MB/s (rec/s) | consume MB/s | ack p50 / p99 / p99.9 / max ms | end-to-end p50 / p99 / p99.9 / max ms |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, t := range res.Targets {
		fmt.Fprintf(&b, "| %s | %d | %d%s | %.1f (%.0f) | %.1f | %s | %s |\n", t.Target, t.Produced, t.Consumed,
			check(t.Complete), t.Produce.MBPerSec, t.Produce.RecordsPerSec, t.Consume.MBPerSec,
			latencyCells(t.ProduceAck), latencyCells(t.EndToEnd))
	}
	b.WriteString(txnSummary(res))
	return b.String()
}

func check(ok bool) string {
	if ok {
		return ""
	}
	return " (INCOMPLETE)"
}

func latencyCells(l Latency) string {
	if l.Count == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f / %.2f / %.2f / %.1f", l.P50Ms, l.P99Ms, l.P999Ms, l.MaxMs)
}

func writeBroker(b *strings.Builder, res *Results) {
	header := false
	for _, t := range res.Targets {
		f := t.Broker
		if f == nil {
			continue
		}
		if !header {
			b.WriteString("\nFrom the broker's /metrics (a broker without one, such as a launched Apache Kafka, from /proc: CPU and peak RSS only):\n\n| target | CPU s per GB | peak RSS | fsyncs/s | object PUTs per GB written | object GETs per GB read | fetches served from |\n|---|---|---|---|---|---|---|\n")
			header = true
		}
		if f.ProcOnly {
			fmt.Fprintf(b, "| %s | %.1f | %s | — | — | — | — |\n", t.Target, f.CPUSecondsPerGB, humanize.IBytes(uint64(f.PeakRSSBytes)))
			continue
		}
		fmt.Fprintf(b, "| %s | %.1f | %s | %.1f | %.1f | %.1f | %s |\n", t.Target, f.CPUSecondsPerGB,
			humanize.IBytes(uint64(f.PeakRSSBytes)), f.FsyncsPerSec, f.PutsPerGB, f.GetsPerGB, sources(f.FetchReads))
	}
	for _, t := range res.Targets {
		if t.Broker == nil || len(t.Broker.TableMetricsLast) == 0 {
			continue
		}
		fmt.Fprintf(b, "\nTable lag of %s at the end: **%g**. Its table-topic metrics then:\n\n", t.Target, t.Broker.TableLag)
		keys := make([]string, 0, len(t.Broker.TableMetricsLast))
		for k := range t.Broker.TableMetricsLast {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(b, "- `%s` = %g\n", k, t.Broker.TableMetricsLast[k])
		}
	}
}

func writeCost(b *strings.Builder, res *Results) {
	header := false
	for _, t := range res.Targets {
		c := t.Cost
		if c == nil {
			continue
		}
		if !header {
			fmt.Fprintf(b, "\nMonthly cost of 1 GB/s of produce from the request counts measured (US East list prices checked %s; storage left out):\n\n", res.Prices.Checked)
			b.WriteString("| target | PUTs/GB | S3 Standard requests | S3 Express requests + transfer | 3-replica disk cluster, replication across zones | same, with clients in 3 zones |\n|---|---|---|---|---|---|\n")
			header = true
		}
		fmt.Fprintf(b, "| %s | %.1f | $%s | $%s | $%s | $%s |\n", t.Target, c.PutsPerGB,
			humanize.Commaf(round2(c.S3Standard)), humanize.Commaf(round2(c.S3Express)),
			humanize.Commaf(round2(c.DiskReplica)), humanize.Commaf(round2(c.DiskWithClients)))
	}
	if header {
		b.WriteString("\nThe request counts are scaled linearly from the rate measured: a broker that cuts objects by time " +
			"(Sediment every --upload-interval, 250 ms by default) makes more PUTs per GB at a low rate than at 1 GB/s, " +
			"where objects are cut by size (--upload-bytes), so a low-rate run overstates the request cost.\n")
	}
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

func writeNotes(b *strings.Builder, res *Results) {
	var notes []string
	notes = append(notes, res.Notes...)
	for _, t := range res.Targets {
		for _, n := range t.Notes {
			notes = append(notes, t.Target+": "+n)
		}
		for _, e := range t.Errors {
			notes = append(notes, t.Target+": ERROR: "+e)
		}
	}
	for i, t := range res.Targets {
		vs := t.VsFirst
		if i == 1 && len(vs) == 0 {
			vs = res.Ratios // results.json written before VsFirst
		}
		if i > 0 && len(vs) > 0 {
			notes = append(notes, fmt.Sprintf("%s over %s: %s", t.Target, res.Targets[0].Target, ratioList(vs)))
		}
	}
	if len(notes) == 0 {
		return
	}
	b.WriteString("\nNotes:\n\n")
	for _, n := range notes {
		fmt.Fprintf(b, "- %s\n", n)
	}
}

func ratioList(r map[string]float64) string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, r[k]))
	}
	return strings.Join(parts, ", ")
}

// sources formats fetch reads by source as shares: "memory 97%, object 3%".
func sources(reads map[string]float64) string {
	var total float64
	keys := make([]string, 0, len(reads))
	for k, v := range reads {
		total += v
		keys = append(keys, k)
	}
	if total == 0 {
		return "—"
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*reads[k]/total))
	}
	return strings.Join(parts, ", ")
}
