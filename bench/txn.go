package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TxnSpec is a transactional workload's `transactions` block. Every
// producer gets its own transactional id (transactional.id) and commits
// after CommitRecords records or CommitInterval after its transaction
// began, whichever comes first; its records count as produced only once
// their transaction has committed. Every partition is read twice, by
// read_committed consumers (the figures of the run, as for any workload)
// and by read_uncommitted ones (their end-to-end latency is reported
// beside).
type TxnSpec struct {
	CommitRecords  int           `yaml:"commit_records" json:"commit_records"`      // records per transaction and producer; 0: no record limit
	CommitInterval time.Duration `yaml:"commit_interval" json:"commit_interval_ns"` // longest a transaction stays open; 0: no time limit
	// CompareIdempotent runs every round twice: first the same workload
	// with idempotent (not transactional) producers and read_uncommitted
	// consumers, on topics of its own, then the transactional one. The
	// report gives both side by side.
	CompareIdempotent bool `yaml:"compare_idempotent" json:"compare_idempotent"`
}

func (t *TxnSpec) validate(w *Workload) []error {
	var errs []error
	if t.CommitRecords < 0 || t.CommitInterval < 0 {
		errs = append(errs, errors.New("transactions: commit_records and commit_interval must not be negative"))
	}
	if t.CommitRecords == 0 && t.CommitInterval == 0 {
		errs = append(errs, errors.New("transactions: give commit_records, commit_interval or both: a transaction needs an end"))
	}
	if w.Acks != "all" {
		errs = append(errs, fmt.Errorf("transactions: a transactional producer is idempotent and needs acks all, got %q", w.Acks))
	}
	return errs
}

// String says when a producer commits, for the report.
func (t *TxnSpec) String() string {
	switch {
	case t.CommitRecords > 0 && t.CommitInterval > 0:
		return fmt.Sprintf("every %d records or %s, the first reached", t.CommitRecords, t.CommitInterval)
	case t.CommitRecords > 0:
		return fmt.Sprintf("every %d records", t.CommitRecords)
	}
	return "every " + t.CommitInterval.String()
}

// idempotent is w without its transactions: the compared leg.
func (w *Workload) idempotent() *Workload {
	c := *w
	c.Transactions = nil
	return &c
}

// txnProducerOpts names producer id's transactional id after the round's
// first topic, so that no two producers of a run share one.
func txnProducerOpts(firstTopic string, id int) []kgo.Opt {
	return []kgo.Opt{kgo.TransactionalID(fmt.Sprintf("%s-txn-%d", firstTopic, id))}
}

// openTxn is a transactional producer's current transaction.
type openTxn struct {
	spec  *TxnSpec
	open  bool
	began time.Time
	sent  int64 // records produced into it

	mu    sync.Mutex // guards acked: promises run on the client's goroutines
	acked ackedCounts
}

// ackedCounts are acknowledged records and their value bytes, all and
// those sent after the warmup.
type ackedCounts struct{ records, bytes, steady, steadyBytes int64 }

// begin starts a transaction unless one is open.
func (t *openTxn) begin(cl *kgo.Client) error {
	if t.open {
		return nil
	}
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	t.open, t.began, t.sent = true, time.Now(), 0
	return nil
}

// due says whether the open transaction has reached its end.
func (t *openTxn) due() bool {
	return t.open && (t.spec.CommitRecords > 0 && t.sent >= int64(t.spec.CommitRecords) ||
		t.spec.CommitInterval > 0 && time.Since(t.began) >= t.spec.CommitInterval)
}

func (t *openTxn) ack(bytes int64, steady bool) {
	t.mu.Lock()
	t.acked.records++
	t.acked.bytes += bytes
	if steady {
		t.acked.steady++
		t.acked.steadyBytes += bytes
	}
	t.mu.Unlock()
}

// take returns and clears the acknowledgements of the transaction.
func (t *openTxn) take() ackedCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.acked
	t.acked = ackedCounts{}
	return a
}

// commit flushes the open transaction's records and commits it, counting
// them as produced. A failed commit is aborted and is the round's error;
// false then, and the producer stops.
func (p *producer) commit(ctx context.Context, plan producePlan) bool {
	t := p.txn
	if !t.open {
		return true
	}
	t.open = false
	start := time.Now()
	err := p.cl.Flush(ctx)
	if err == nil {
		err = p.cl.EndTransaction(ctx, kgo.TryCommit)
	}
	if err != nil {
		p.c.aborts.Add(1)
		t.take()
		p.c.produceErr.set(fmt.Errorf("bench: producer %d: commit: %w", plan.id, errors.Join(err, p.abort(ctx))))
		return false
	}
	now := time.Now()
	p.commitLat.record(now.Sub(start))
	p.c.addProduced(t.take(), now)
	p.c.commits.Add(1)
	if !now.Before(plan.warmupEnd) {
		p.c.steadyCommits.Add(1)
	}
	return true
}

// abort ends a transaction whose commit failed, so that nothing of it
// stays open on the broker until its timeout; bounded even when ctx has
// ended.
func (p *producer) abort(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := p.cl.AbortBufferedRecords(ctx); err != nil {
		return fmt.Errorf("abort buffered records: %w", err)
	}
	if err := p.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		return fmt.Errorf("abort: %w", err)
	}
	return nil
}

// txnResult is what a transactional round measured beyond the usual.
type txnResult struct {
	commit         *hdrhistogram.Histogram // flush and EndTxn, per transaction
	e2eUncommitted *hdrhistogram.Histogram
	commits        int64
	steadyCommits  int64 // committed after the warmup
	aborts         int64
	uncommitted    int64 // records the read_uncommitted consumers received
	// idempotent is the compared leg's round (CompareIdempotent).
	idempotent *roundResult
}

func newTxnResult() *txnResult {
	return &txnResult{commit: newHistogram(), e2eUncommitted: newHistogram()}
}

// runCompared runs the round, after the same round with idempotent
// producers when its workload compares the two.
func (r *round) runCompared(ctx context.Context) (*roundResult, error) {
	var idem *roundResult
	if t := r.w.Transactions; t != nil && t.CompareIdempotent {
		leg := *r
		leg.w = r.w.idempotent()
		leg.label = r.label + " idempotent"
		leg.failover = nil
		leg.topics = make([]string, len(r.topics))
		for i, name := range r.topics {
			leg.topics[i] = name + "-idempotent"
		}
		var err error
		if idem, err = leg.run(ctx); err != nil {
			return nil, fmt.Errorf("idempotent leg: %w", err)
		}
		r.label += " transactional"
	}
	rr, err := r.run(ctx)
	if err != nil {
		return nil, err
	}
	if rr.txn != nil {
		rr.txn.idempotent = idem
	}
	return rr, nil
}
