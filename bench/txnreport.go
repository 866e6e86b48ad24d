package bench

import (
	"fmt"
	"strings"
)

// TxnFigure is a transactional workload's figures beyond the usual ones,
// whose produce rate and end-to-end latency are then the committed
// records' as read by read_committed consumers.
type TxnFigure struct {
	Commits       int64   `json:"commits"`
	CommitsPerSec float64 `json:"commits_per_s"` // after the warmup, over the produce figure's seconds
	Aborts        int64   `json:"aborts"`        // commits that failed (and were aborted)
	// CommitLatency is, per transaction, its producer's flush of the
	// records still buffered plus EndTxn.
	CommitLatency Latency `json:"commit_latency"`
	// ReadUncommitted is the end-to-end latency of the read_uncommitted
	// consumers of the same partitions, and UncommittedConsumed what
	// they received.
	ReadUncommitted     Latency `json:"end_to_end_read_uncommitted"`
	UncommittedConsumed int64   `json:"records_consumed_read_uncommitted"`
	// Idempotent is the same workload produced by idempotent producers
	// in every round just before (compare_idempotent).
	Idempotent *LegFigure `json:"idempotent,omitempty"`
}

// LegFigure is the compared idempotent leg's figures.
type LegFigure struct {
	Produced   int64    `json:"records_produced"`
	Consumed   int64    `json:"records_consumed"`
	Complete   bool     `json:"complete"`
	Produce    Rate     `json:"produce"`
	ProduceAck Latency  `json:"produce_ack_latency"`
	EndToEnd   Latency  `json:"end_to_end_latency"`
	Errors     []string `json:"errors,omitempty"`
}

// mergeTxn adds up the transactional figures of a target's rounds into
// tr (whose other figures are merged), nil for another workload. The
// read_uncommitted consumers and the idempotent leg count towards tr's
// completeness.
func mergeTxn(spec TargetSpec, rounds []*roundResult, loopbackMBps float64, tr *TargetResult) *TxnFigure {
	var f *TxnFigure
	var steadyCommits int64
	var idem []*roundResult
	commit, unc := newHistogram(), newHistogram()
	for _, r := range rounds {
		if r.txn == nil {
			continue
		}
		if f == nil {
			f = &TxnFigure{}
		}
		commit.Merge(r.txn.commit)
		unc.Merge(r.txn.e2eUncommitted)
		f.Commits += r.txn.commits
		f.Aborts += r.txn.aborts
		f.UncommittedConsumed += r.txn.uncommitted
		steadyCommits += r.txn.steadyCommits
		if r.txn.idempotent != nil {
			idem = append(idem, r.txn.idempotent)
		}
	}
	if f == nil {
		return nil
	}
	if tr.Produce.Seconds > 0 {
		f.CommitsPerSec = float64(steadyCommits) / tr.Produce.Seconds
	}
	f.CommitLatency, f.ReadUncommitted = summarize(commit), summarize(unc)
	if f.UncommittedConsumed < tr.Produced {
		tr.Complete = false
	}
	if len(idem) > 0 {
		it := mergeRounds(spec, idem, loopbackMBps)
		f.Idempotent = &LegFigure{Produced: it.Produced, Consumed: it.Consumed, Complete: it.Complete,
			Produce: it.Produce, ProduceAck: it.ProduceAck, EndToEnd: it.EndToEnd, Errors: it.Errors}
		if !it.Complete {
			tr.Complete = false
			for _, e := range it.Errors {
				tr.Errors = append(tr.Errors, "idempotent leg: "+e)
			}
		}
	}
	return f
}

// txnRatios adds b's transactional figures over a's to out.
func txnRatios(out map[string]float64, a, b *TxnFigure) {
	if a == nil || b == nil {
		return
	}
	put := func(name string, x, y float64) {
		if x > 0 {
			out[name] = y / x
		}
	}
	put("commits_per_s", a.CommitsPerSec, b.CommitsPerSec)
	put("commit_p50", a.CommitLatency.P50Ms, b.CommitLatency.P50Ms)
	put("end_to_end_read_uncommitted_p50", a.ReadUncommitted.P50Ms, b.ReadUncommitted.P50Ms)
	if a.Idempotent != nil && b.Idempotent != nil {
		put("idempotent_produce_mb_per_s", a.Idempotent.Produce.MBPerSec, b.Idempotent.Produce.MBPerSec)
	}
}

// txnSummary is the transactional table, one row per target, or "" for
// another workload.
func txnSummary(res *Results) string {
	t := res.Workload.Transactions
	if t == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nTransactions: each producer commits %s; every partition is read by read_committed and by read_uncommitted consumers", t)
	if t.CompareIdempotent {
		b.WriteString("; before each transactional round the same round ran with idempotent producers (read_uncommitted consumers) on topics of its own")
	}
	b.WriteString(".\n\n| target | idempotent produce MB/s (rec/s) | transactional produce MB/s (rec/s) | commits/s | commit p50 / p99 ms | e2e idempotent p50 / p99 ms | e2e read_uncommitted p50 / p99 ms | e2e read_committed p50 / p99 ms |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, tr := range res.Targets {
		f := tr.Transactions
		if f == nil {
			continue
		}
		idem, idemE2E := "—", "—"
		if f.Idempotent != nil {
			idem = fmt.Sprintf("%.1f (%.0f)%s", f.Idempotent.Produce.MBPerSec, f.Idempotent.Produce.RecordsPerSec, check(f.Idempotent.Complete))
			idemE2E = p50p99(f.Idempotent.EndToEnd)
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f (%.0f) | %.1f | %s | %s | %s | %s |\n", tr.Target, idem,
			tr.Produce.MBPerSec, tr.Produce.RecordsPerSec, f.CommitsPerSec, p50p99(f.CommitLatency),
			idemE2E, p50p99(f.ReadUncommitted), p50p99(tr.EndToEnd))
	}
	return b.String()
}

func p50p99(l Latency) string {
	if l.Count == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f / %.2f", l.P50Ms, l.P99Ms)
}
