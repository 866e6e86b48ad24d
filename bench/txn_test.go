package bench

import (
	"strings"
	"testing"
	"time"
)

// TestParseWorkloadTransactions: the transactions block's keys, and its
// bad input named.
func TestParseWorkloadTransactions(t *testing.T) {
	w, err := ParseWorkload([]byte("duration: 1s\ntransactions:\n  commit_records: 500\n  commit_interval: 50ms\n  compare_idempotent: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tx := w.Transactions; tx == nil || tx.CommitRecords != 500 || tx.CommitInterval != 50*time.Millisecond || !tx.CompareIdempotent {
		t.Fatalf("transactions: %+v", w.Transactions)
	}
	if got := w.Transactions.String(); got != "every 500 records or 50ms, the first reached" {
		t.Errorf("String: %q", got)
	}
	if w.idempotent().Transactions != nil || w.Transactions == nil {
		t.Error("idempotent() kept the transactions or dropped the original's")
	}
	if w, err = ParseWorkload([]byte("duration: 1s\n")); err != nil || w.Transactions != nil {
		t.Errorf("a workload without the block: %+v %v", w.Transactions, err)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"duration: 1s\ntransactions: {}\n", "a transaction needs an end"},
		{"duration: 1s\ntransactions: {commit_records: -1, commit_interval: 1s}\n", "must not be negative"},
		{"duration: 1s\nacks: 1\ntransactions: {commit_records: 10}\n", "needs acks all"},
		{"duration: 1s\ntransactions: {commit_every: 10}\n", "field commit_every not found"},
		{"duration: 1s\ntransactions: {commit_interval: soon}\n", "cannot unmarshal"},
	} {
		_, err := ParseWorkload([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}

// TestTxnFigures: a target's transactional rounds merge into commits per
// second over the steady produce time, and the read_uncommitted consumers
// and the idempotent leg count towards completeness.
func TestTxnFigures(t *testing.T) {
	w := &Workload{Name: "t", Transactions: &TxnSpec{CommitRecords: 100, CompareIdempotent: true}}
	round := func(commits int64, uncommitted int64, idemComplete bool) *roundResult {
		idem := &roundResult{ack: newHistogram(), e2e: newHistogram(), produced: 1000, consumed: 1000,
			steady: 1000, steadyBytes: 1e6, produceSeconds: 1}
		if !idemComplete {
			idem.consumed = 999
		}
		idem.e2e.RecordValue(2000)
		r := &roundResult{ack: newHistogram(), e2e: newHistogram(), txn: newTxnResult(), produced: 1000, consumed: 1000,
			steady: 1000, steadyBytes: 1e6, produceSeconds: 2}
		r.txn.commits, r.txn.steadyCommits, r.txn.uncommitted, r.txn.idempotent = commits, commits, uncommitted, idem
		r.txn.commit.RecordValue(5000)
		r.txn.e2eUncommitted.RecordValue(3000)
		r.e2e.RecordValue(60000)
		return r
	}
	tr := mergeRounds(TargetSpec{Kind: "kfake"}, []*roundResult{round(10, 1000, true), round(30, 1000, true)}, 0)
	f := tr.Transactions
	if f == nil || f.Commits != 40 || f.CommitsPerSec != 10 || !tr.Complete {
		t.Fatalf("figures %+v, complete %v", f, tr.Complete)
	}
	// HdrHistogram answers a value's bucket, within 0.1% at 3 digits.
	near := func(got, want float64) bool { return got >= want && got <= want*1.001 }
	if !near(f.CommitLatency.P50Ms, 5) || !near(f.ReadUncommitted.P50Ms, 3) || !near(tr.EndToEnd.P50Ms, 60) || f.UncommittedConsumed != 2000 {
		t.Errorf("p50 latencies: commit %v read_uncommitted %v read_committed %v; read_uncommitted consumed %d",
			f.CommitLatency.P50Ms, f.ReadUncommitted.P50Ms, tr.EndToEnd.P50Ms, f.UncommittedConsumed)
	}
	if f.Idempotent == nil || f.Idempotent.Produced != 2000 || f.Idempotent.Produce.MBPerSec != 1 || !near(f.Idempotent.EndToEnd.P50Ms, 2) {
		t.Errorf("idempotent leg: %+v", f.Idempotent)
	}
	if tr := mergeRounds(TargetSpec{Kind: "kfake"}, []*roundResult{round(1, 999, true)}, 0); tr.Complete {
		t.Error("complete although the read_uncommitted consumers missed a record")
	}
	if tr := mergeRounds(TargetSpec{Kind: "kfake"}, []*roundResult{round(1, 1000, false)}, 0); tr.Complete || len(tr.Errors) != 0 && !strings.HasPrefix(tr.Errors[0], "idempotent leg") {
		t.Errorf("incomplete idempotent leg: complete %v, errors %v", tr.Complete, tr.Errors)
	}
	res := &Results{Workload: w, Targets: []TargetResult{tr, tr}}
	setRatios(res)
	if res.Ratios["commits_per_s"] != 1 || res.Ratios["idempotent_produce_mb_per_s"] != 1 {
		t.Errorf("ratios: %v", res.Ratios)
	}
	md := SummaryText(res)
	for _, want := range []string{"commits every 100 records", "| kfake | 1.0 (1000) | 0.5 (500) | 10.0 | 5.00 / 5.00 | 2.00 / 2.00 | 3.00 / 3.00 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	if plain := SummaryText(&Results{Workload: &Workload{}, Targets: []TargetResult{tr}}); strings.Contains(plain, "Transactions") {
		t.Errorf("a workload without transactions got their table:\n%s", plain)
	}
}

// checkTxn checks the figures of a transactional workload's target.
func checkTxn(t *testing.T, tr TargetResult) {
	t.Helper()
	f := tr.Transactions
	if f == nil {
		t.Fatalf("%s: no transaction figures", tr.Target)
	}
	if f.Commits == 0 || f.CommitsPerSec <= 0 || f.Aborts != 0 || f.CommitLatency.Count != f.Commits {
		t.Errorf("%s: commits %+v", tr.Target, f)
	}
	if f.UncommittedConsumed != tr.Produced || f.ReadUncommitted.Count == 0 {
		t.Errorf("%s: read_uncommitted consumers got %d of %d records, latency %+v", tr.Target, f.UncommittedConsumed, tr.Produced, f.ReadUncommitted)
	}
	if i := f.Idempotent; i == nil || !i.Complete || i.Produced == 0 || i.Produce.MBPerSec <= 0 || i.EndToEnd.Count == 0 {
		t.Errorf("%s: idempotent leg %+v", tr.Target, i)
	}
}
