package bench

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// consumerGroup is a round's running consumers (not a Kafka group: each
// reads the partitions it was dealt).
type consumerGroup struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	cons   []*consumer
	res    *roundResult
}

func (r *round) startConsumers(ctx context.Context, c *counters, warmupEnd time.Time, res *roundResult) (*consumerGroup, error) {
	parts := assign(r.topics, r.w.Partitions, r.w.Consumers)
	ctx, cancel := context.WithCancel(ctx)
	g := &consumerGroup{cancel: cancel, res: res}
	// A transactional workload reads every partition twice: committed
	// records into c, everything into c.uncommitted.
	kinds := []*counters{c}
	if c.uncommitted != nil {
		kinds = append(kinds, c.uncommitted)
	}
	for _, kc := range kinds {
		for _, ps := range parts {
			if len(ps) == 0 {
				continue
			}
			k, err := newConsumer(r.target.Bootstrap(), ps, kc, warmupEnd, r.w, kc != c)
			if err != nil {
				g.stop()
				return nil, err
			}
			g.cons = append(g.cons, k)
			g.wg.Add(1)
			go func() { defer g.wg.Done(); k.run(ctx) }()
		}
	}
	if idle := r.w.Consumers*len(kinds) - len(g.cons); idle > 0 {
		res.notes = append(res.notes, fmt.Sprintf("%d consumers for %d partitions: %d stayed idle",
			r.w.Consumers*len(kinds), len(r.topics)*r.w.Partitions, idle))
	}
	return g, nil
}

// stop ends the consumers and adds their latencies to the round's.
func (g *consumerGroup) stop() {
	g.cancel()
	g.wg.Wait()
	for _, k := range g.cons {
		if k.uncommitted {
			k.e2e.mergeInto(g.res.txn.e2eUncommitted)
		} else {
			k.e2e.mergeInto(g.res.e2e)
		}
		k.close()
	}
	g.cons = nil
}

// waitDrained returns when the consumers have every acknowledged record,
// or an error when they have not within limit (or a fetch failed).
func (r *round) waitDrained(ctx context.Context, c *counters, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for !c.drained() {
		if err := c.consumeError(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			if c.uncommitted != nil {
				return fmt.Errorf("bench: read_committed consumers received %d and read_uncommitted ones %d of %d committed records within %s",
					c.consumed.Load(), c.uncommitted.consumed.Load(), c.produced.Load(), limit.Round(time.Second))
			}
			return fmt.Errorf("bench: consumers received %d of %d acknowledged records within %s",
				c.consumed.Load(), c.produced.Load(), limit.Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// finish turns the counters into the round's totals and rates.
func (r *round) finish(c *counters, res *roundResult, t phaseTimes) {
	res.produced, res.producedBytes = c.produced.Load(), c.producedBytes.Load()
	res.steady, res.steadyBytes = c.steady.Load(), c.steadyBytes.Load()
	res.consumed, res.consumedBytes = c.consumed.Load(), c.consumedBytes.Load()
	if last := c.lastAck.Load(); last > 0 && t.warmupEnd.UnixNano() < last {
		res.produceSeconds = time.Duration(last - t.warmupEnd.UnixNano()).Seconds()
	}
	if last := c.lastConsumed.Load(); last > 0 && t.consumeStart.UnixNano() < last {
		res.consumeSeconds = time.Duration(last - t.consumeStart.UnixNano()).Seconds()
	}
	if res.txn != nil {
		res.txn.commits, res.txn.steadyCommits, res.txn.aborts = c.commits.Load(), c.steadyCommits.Load(), c.aborts.Load()
		res.txn.uncommitted = c.uncommitted.consumed.Load()
	}
}

// Point is one sample of the throughput timeline.
type Point struct {
	Seconds          float64 `json:"t_s"` // since the start of the target's first round
	ProduceRecPerSec float64 `json:"produce_records_per_s"`
	ProduceMBPerSec  float64 `json:"produce_mb_per_s"`
	ConsumeRecPerSec float64 `json:"consume_records_per_s"`
	ConsumeMBPerSec  float64 `json:"consume_mb_per_s"`
}

// sampler records the throughput every interval.
type sampler struct {
	done   chan struct{}
	wg     sync.WaitGroup
	points []Point
}

func startSampler(c *counters, start time.Time, every time.Duration) *sampler {
	s := &sampler{done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		last, lastAt := [4]int64{}, start
		for {
			select {
			case <-s.done:
				return
			case now := <-tick.C:
				cur := [4]int64{c.produced.Load(), c.producedBytes.Load(), c.consumed.Load(), c.consumedBytes.Load()}
				dt := now.Sub(lastAt).Seconds()
				s.points = append(s.points, Point{
					Seconds:          now.Sub(start).Seconds(),
					ProduceRecPerSec: float64(cur[0]-last[0]) / dt,
					ProduceMBPerSec:  float64(cur[1]-last[1]) / dt / 1e6,
					ConsumeRecPerSec: float64(cur[2]-last[2]) / dt,
					ConsumeMBPerSec:  float64(cur[3]-last[3]) / dt / 1e6,
				})
				last, lastAt = cur, now
			}
		}
	}()
	return s
}

// stop ends the sampler and returns its points.
func (s *sampler) stop() []Point {
	close(s.done)
	s.wg.Wait()
	return s.points
}
