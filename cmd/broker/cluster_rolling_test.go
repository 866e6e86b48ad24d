package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/cmd/broker/internal/history"
)

// TestClusterRollingRestart (issue 18, tests 5 and 9): while an idempotent
// producer and a consumer group run, each of the three brokers is
// restarted in turn, first with SIGTERM (a graceful hand-over), then with
// SIGKILL. Nothing acknowledged is missing, nothing is duplicated, the
// group reads every acknowledged record, its committed offsets never go
// backwards, and the history checks out.
func TestClusterRollingRestart(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	const topic, partitions, group = "rolling", 4, "rolling-group"
	createTopics(t, c.addrs(1)[0], topic, partitions)
	c.waitOwned(topic, partitions, nil)
	prod := startHistoryProducer(t, c.addrs(), topic, c.hist, 300)
	cons := startGroupConsumer(t, c.addrs(), group, topic, c.hist)
	commits := startCommitWatch(t, c.addrs(), group)
	waitAcked(t, c.hist, 500, 30*time.Second)

	began := time.Now()
	for _, graceful := range []bool{true, false} {
		for _, id := range c.ids() {
			t.Logf("+%v: restart node %d (graceful %v)", time.Since(began).Round(time.Millisecond), id, graceful)
			if graceful {
				if err := c.terminate(id); err != nil {
					t.Fatalf("node %d: SIGTERM: exit %v\n%s", id, err, c.logs())
				}
				c.checkReleased(topic, id)
			} else {
				c.kill(id)
				// Its session must end before the node id can register again.
				c.waitOwned(topic, partitions, func(node int32) bool { return node != id })
			}
			down := c.revision()
			c.start(id)
			c.waitRegistered(id, down)
			waitAcked(t, c.hist, 200, 30*time.Second)
		}
	}

	t.Logf("+%v: restarts done", time.Since(began).Round(time.Millisecond))
	prod.stop()
	c.waitFor(30*time.Second, "the group read every acknowledged record", func(context.Context) (bool, string) {
		return cons.readAll(c.hist.Produces())
	})
	cons.stop()
	commits.stop()
	commits.check(t)
	t.Logf("+%v: the group read everything", time.Since(began).Round(time.Millisecond))
	final := readFinal(t, c.addrs(), topic)
	t.Logf("+%v: the final log read", time.Since(began).Round(time.Millisecond))
	c.checkHistory(final)
}

// checkReleased: a broker that exited after SIGTERM owns nothing: it
// handed every partition over (or let it go) before it exited.
func (c *testCluster) checkReleased(topic string, node int32) {
	c.t.Helper()
	ctx := testCtx(c.t, 10*time.Second)
	owners, _, err := c.owners(ctx, topic)
	if err != nil {
		c.t.Fatal(err)
	}
	if held := ownedBy(owners, node); len(held) > 0 {
		c.t.Errorf("node %d exited after SIGTERM still owning %s partitions %v", node, topic, held)
	}
}

// groupConsumer is a franz-go consumer group member that notes each record
// it reads in the history.
type groupConsumer struct {
	mu   sync.Mutex // guards seen
	seen map[string]bool
	stop func()
}

func startGroupConsumer(t *testing.T, seeds []string, group, topic string, hist *history.History) *groupConsumer {
	t.Helper()
	cl := newClusterClient(t, seeds, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitInterval(500*time.Millisecond),
		kgo.FetchMaxWait(200*time.Millisecond), kgo.SessionTimeout(10*time.Second))
	g := &groupConsumer{seen: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				hist.AddRead(history.Read{Partition: history.Partition{Topic: topic, Partition: r.Partition}, Offset: r.Offset, Value: string(r.Value)})
				g.mu.Lock()
				g.seen[string(r.Value)] = true
				g.mu.Unlock()
			})
		}
	}()
	g.stop = sync.OnceFunc(func() { cancel(); <-done; cl.Close() })
	t.Cleanup(g.stop)
	return g
}

// readAll says whether the group read every acknowledged value.
func (g *groupConsumer) readAll(produces []history.Produce) (bool, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	missing := 0
	first := ""
	for _, p := range produces {
		if p.Acked() && !g.seen[p.Value] {
			if missing == 0 {
				first = p.Value
			}
			missing++
		}
	}
	return missing == 0, fmt.Sprintf("%d acknowledged values not read yet, the first %q", missing, first)
}

// commitWatch samples a group's committed offsets, to check that they
// never go backwards.
type commitWatch struct {
	mu      sync.Mutex // guards history and back
	history map[int32][]int64
	back    []string
	stop    func()
}

func startCommitWatch(t *testing.T, seeds []string, group string) *commitWatch {
	t.Helper()
	adm := kadm.NewClient(newClusterClient(t, seeds))
	w := &commitWatch{history: map[int32][]int64{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			fctx, fcancel := context.WithTimeout(ctx, 5*time.Second)
			if offsets, err := adm.FetchOffsets(fctx, group); err == nil { // a coordinator moving: the next tick
				w.note(offsets)
			}
			fcancel()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	w.stop = sync.OnceFunc(func() { cancel(); <-done; adm.Close() })
	t.Cleanup(w.stop)
	return w
}

func (w *commitWatch) note(offsets kadm.OffsetResponses) {
	w.mu.Lock()
	defer w.mu.Unlock()
	offsets.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			return
		}
		seq := w.history[o.Partition]
		if n := len(seq); n > 0 && o.At < seq[n-1] {
			w.back = append(w.back, fmt.Sprintf("partition %d: committed %d after %d", o.Partition, o.At, seq[n-1]))
		}
		w.history[o.Partition] = append(seq, o.At)
	})
}

// check fails t if a committed offset went backwards, or none was seen.
func (w *commitWatch) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.history) == 0 {
		t.Error("no committed offset was ever read")
	}
	for i, b := range w.back {
		if i == 10 {
			t.Errorf("... and %d more", len(w.back)-10)
			break
		}
		t.Errorf("committed offset went backwards: %s", b)
	}
}
