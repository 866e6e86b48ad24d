package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/twmb/franz-go/pkg/kgo"
)

// round is one run of a workload (or of its share, with --vs) against one
// target: create topics, produce, consume until every acknowledged record
// has arrived, delete the topics.
type round struct {
	target   Target
	w        *Workload
	topics   []string
	sample   time.Duration
	drain    time.Duration
	progress *progress
	label    string
	// failover, set on a cluster's first live round with
	// --failover-after, kills a broker during the produce phase.
	failover *failover
}

// roundResult is what one round measured, kept raw so that rounds merge.
type roundResult struct {
	ack, e2e       *hdrhistogram.Histogram
	produced       int64
	producedBytes  int64
	steady         int64
	steadyBytes    int64
	produceSeconds float64 // steady part: warmup end to the last acknowledgement
	consumed       int64
	consumedBytes  int64
	consumeSeconds float64 // consume start to the last record received
	wallSeconds    float64
	timeline       []Point
	before, after  Snapshot
	hasMetrics     bool
	compaction     *EtcdCompaction // a cluster's etcd compacted after the round
	owned          map[int32]int   // a cluster's partitions of the round per owner, at its end
	failover       *FailoverFigure
	txn            *txnResult // a transactional workload's
	notes          []string
	err            error
}

// phaseTimes are a round's instants.
type phaseTimes struct {
	produceStart, warmupEnd, consumeStart time.Time
}

func (r *round) run(ctx context.Context) (*roundResult, error) {
	adm, err := newAdmin(r.target.Bootstrap())
	if err != nil {
		return nil, err
	}
	defer adm.close()
	res := &roundResult{ack: newHistogram(), e2e: newHistogram()}
	if r.w.Transactions != nil {
		res.txn = newTxnResult()
	}
	note, err := adm.createTopics(ctx, r.w, r.topics)
	if err != nil {
		return nil, err
	}
	if note != "" {
		res.notes = append(res.notes, note)
	}
	if c, ok := r.target.(*clusterTarget); ok {
		if err := r.waitOwned(ctx, c, res, time.Minute); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err := adm.deleteTopics(context.WithoutCancel(ctx), r.topics); err != nil {
			res.notes = append(res.notes, fmt.Sprintf("deleting the round's topics: %v", err))
		}
	}()
	res.before, res.hasMetrics, err = r.target.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	// A failed measurement (a produce error, records that never arrived)
	// is part of the result: the report says what was measured up to it.
	res.err = r.measure(ctx, res)
	if res.hasMetrics {
		if res.after, err = r.settled(ctx); err != nil {
			return nil, err
		}
	}
	if c, ok := r.target.(*clusterTarget); ok {
		if err := r.clusterEnd(ctx, c, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// waitOwned waits until every partition of the round has an owner in the
// cluster's etcd: the round measures a placed topic, not its placement.
func (r *round) waitOwned(ctx context.Context, c *clusterTarget, res *roundResult, within time.Duration) error {
	start := time.Now()
	want := len(r.topics) * r.w.Partitions
	for {
		owners, err := c.owners(ctx, r.topics)
		if err == nil && len(owners) == want {
			res.notes = appendNew(res.notes, fmt.Sprintf("every partition had an owner %.1f s after the topics were created (the round starts then)",
				time.Since(start).Seconds()))
			return nil
		}
		if time.Since(start) > within {
			return fmt.Errorf("bench: %d of %d partitions have an owner in etcd %s after their creation (%v)", len(owners), want, within, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// clusterEnd reads who owns the round's partitions and compacts the
// cluster's etcd, after the round's measurement.
func (r *round) clusterEnd(ctx context.Context, c *clusterTarget, res *roundResult) error {
	owners, err := c.owners(ctx, r.topics)
	if err != nil {
		res.notes = append(res.notes, fmt.Sprintf("partition owners at the end of the round: %v", err))
	}
	res.owned = map[int32]int{}
	for _, node := range owners {
		res.owned[node]++
	}
	if res.compaction, err = c.etcd.compactDefrag(ctx, etcdPrefix+"/"); err != nil {
		return err
	}
	res.compaction.KeysPerPartition = float64(res.compaction.Keys) / float64(len(r.topics)*r.w.Partitions)
	return nil
}

// settled scrapes the broker once everything produced is in the object
// store (upload pending 0), for at most a minute: requests made on behalf
// of the round's bytes belong to the round.
func (r *round) settled(ctx context.Context) (Snapshot, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		snap, _, err := r.target.Scrape(ctx)
		if err != nil || snap.UploadPending == 0 || time.Now().After(deadline) {
			return snap, err
		}
		select {
		case <-ctx.Done():
			return snap, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// measure runs the produce and consume phases with the sampler and the
// progress line going.
func (r *round) measure(ctx context.Context, res *roundResult) error {
	c := &counters{}
	if r.w.Transactions != nil {
		c.uncommitted = &counters{}
	}
	start := time.Now()
	samp := startSampler(c, start, r.sample)
	r.progress.begin(r.label, r.w, c, start)
	var t phaseTimes
	var err error
	if r.w.BacklogBytes > 0 {
		err = r.backlog(ctx, c, res, &t)
	} else {
		err = r.live(ctx, c, res, &t)
	}
	r.progress.end()
	res.timeline = samp.stop()
	res.wallSeconds = time.Since(start).Seconds()
	r.finish(c, res, t)
	return err
}

// live runs consumers and producers together (the steady-state workloads).
func (r *round) live(ctx context.Context, c *counters, res *roundResult, t *phaseTimes) error {
	t.produceStart = time.Now()
	t.consumeStart = t.produceStart
	t.warmupEnd = t.produceStart.Add(r.w.Warmup)
	if r.failover != nil {
		stop := r.failover.start(ctx, c, t.produceStart, r.topics)
		defer func() { res.failover = stop() }()
	}
	cons, err := r.startConsumers(ctx, c, t.warmupEnd, res)
	if err != nil {
		return err
	}
	defer cons.stop()
	if err := r.produce(ctx, c, res, t, r.w.Count, r.w.Duration); err != nil {
		return err
	}
	return r.waitDrained(ctx, c, r.drain)
}

// backlog produces the backlog with no consumer running, then lets the
// consumers catch up from the start.
func (r *round) backlog(ctx context.Context, c *counters, res *roundResult, t *phaseTimes) error {
	t.produceStart = time.Now()
	t.warmupEnd = t.produceStart
	count := int64(r.w.BacklogBytes) / int64(r.w.MessageSize)
	if err := r.produce(ctx, c, res, t, max(count, 1), 0); err != nil {
		return err
	}
	t.consumeStart = time.Now()
	cons, err := r.startConsumers(ctx, c, t.produceStart, res)
	if err != nil {
		return err
	}
	defer cons.stop()
	// A catch-up read gets the produce phase's time again, plus the usual
	// drain allowance.
	return r.waitDrained(ctx, c, r.drain+time.Since(t.produceStart)*4)
}

// produce runs the producers for count records or duration d and waits for
// every acknowledgement.
func (r *round) produce(ctx context.Context, c *counters, res *roundResult, t *phaseTimes, count int64, d time.Duration) error {
	prods := make([]*producer, r.w.Producers)
	for i := range prods {
		var extra []kgo.Opt
		if r.failover != nil {
			extra = append(extra, failoverProducerOpts...)
		}
		if r.w.Transactions != nil {
			extra = append(extra, txnProducerOpts(r.topics[0], i)...)
		}
		p, err := newProducer(r.target.Bootstrap(), r.w, c, extra...)
		if err != nil {
			return err
		}
		defer p.close()
		prods[i] = p
	}
	var stopAt time.Time
	if d > 0 {
		stopAt = t.produceStart.Add(d)
	}
	var wg sync.WaitGroup
	for i, p := range prods {
		plan := producePlan{id: i, topics: r.topics, count: share(count, len(prods), i), stopAt: stopAt,
			rate: float64(r.w.ProducerRate) / float64(len(prods)), warmupEnd: t.warmupEnd}
		if count > 0 && plan.count == 0 {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); p.run(ctx, plan) }()
	}
	wg.Wait()
	for _, p := range prods {
		p.ack.mergeInto(res.ack)
		if p.commitLat != nil {
			p.commitLat.mergeInto(res.txn.commit)
		}
	}
	if err := c.produceErr.get(); err != nil {
		return fmt.Errorf("%w (%d records failed)", err, c.produceErrs.Load())
	}
	return ctx.Err()
}

// share is producer i's part of count records over n producers.
func share(count int64, n, i int) int64 {
	s := count / int64(n)
	if int64(i) < count%int64(n) {
		s++
	}
	return s
}
