package main

// What the cluster harness records for the history checker: a watch of
// the cluster's etcd prefix (every owner-key change and every index commit,
// with its revision), samples of the owner keys, an idempotent producer and
// a consumer that note every attempt and every read, and the final log.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/cmd/broker/internal/history"
	"github.com/sediment-io/sediment/internal/testwait"
)

// etcdRecorder watches the cluster's prefix from before the first broker
// starts, so that it sees every owner key from its creation.
type etcdRecorder struct {
	c      *testCluster
	hist   *history.History
	cancel context.CancelFunc
	ctx    context.Context
	done   chan struct{}

	mu    sync.Mutex        // guards names, rev and err
	names map[string]string // topic id hex -> name
	rev   int64             // every event up to this revision is recorded
	err   error             // the watch failed: the history is incomplete
}

// startRecorder starts watching at the current revision of etcd.
func (c *testCluster) startRecorder(hist *history.History) *etcdRecorder {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.cli.Get(ctx, c.key(""), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		cancel()
		c.t.Fatalf("etcd recorder: %v", err)
	}
	r := &etcdRecorder{c: c, hist: hist, cancel: cancel, ctx: ctx, done: make(chan struct{}),
		names: map[string]string{}, rev: resp.Header.Revision}
	ch := c.cli.Watch(ctx, c.key(""), clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1))
	go r.run(ch)
	c.t.Cleanup(func() { cancel(); <-r.done })
	return r
}

func (r *etcdRecorder) run(ch clientv3.WatchChan) {
	defer close(r.done)
	for resp := range ch {
		if err := resp.Err(); err != nil {
			r.fail(err)
			return
		}
		for _, ev := range resp.Events {
			if err := r.record(ev.Type == clientv3.EventTypeDelete, string(ev.Kv.Key), ev.Kv.Value, ev.Kv.ModRevision); err != nil {
				r.fail(err)
			}
		}
		r.mu.Lock()
		r.rev = max(r.rev, resp.Header.Revision)
		r.mu.Unlock()
	}
}

func (r *etcdRecorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil && r.ctx.Err() == nil {
		r.err = err
	}
}

// record turns one event into a history record: a partition's or a
// shard's owner key put or deleted, or an index commit of an upload object.
func (r *etcdRecorder) record(deleted bool, fullKey string, value []byte, rev int64) error {
	key := strings.TrimPrefix(fullKey, r.c.key(""))
	switch {
	case strings.HasPrefix(key, "own/parts/"):
		id, p, err := parseOwnerKey(key)
		if err != nil {
			return err
		}
		change := history.OwnerChange{Revision: rev, Partition: history.Partition{Topic: r.name(id), Partition: p}, Released: deleted}
		if !deleted {
			var v ownerValue
			if err := json.Unmarshal(value, &v); err != nil {
				return fmt.Errorf("owner key %s: %w", key, err)
			}
			change.Node, change.Epoch = v.NodeID, v.Epoch
		}
		r.hist.AddOwnerChange(change)
	case strings.HasPrefix(key, "own/shards/"):
		shard, err := strconv.ParseInt(strings.TrimPrefix(key, "own/shards/"), 10, 32)
		if err != nil {
			return fmt.Errorf("shard owner key %q: %w", key, err)
		}
		change := history.OwnerChange{Revision: rev, Partition: shardPartition(int32(shard)), NoEpoch: true, Released: deleted}
		if !deleted {
			var v ownerValue
			if err := json.Unmarshal(value, &v); err != nil {
				return fmt.Errorf("shard owner key %s: %w", key, err)
			}
			change.Node = v.NodeID
		}
		r.hist.AddOwnerChange(change)
	case strings.HasPrefix(key, "index/") && !deleted:
		id, p, err := parseIndexKey(key)
		if err != nil {
			return err
		}
		var seg struct {
			Object     string `json:"object"`
			BaseOffset int64  `json:"base_offset"`
			EndOffset  int64  `json:"end_offset"`
		}
		if err := json.Unmarshal(value, &seg); err != nil {
			return fmt.Errorf("index key %s: %w", key, err)
		}
		if node, ok := uploadNode(seg.Object); ok {
			r.hist.AddCommit(history.Commit{Revision: rev, Partition: history.Partition{Topic: r.name(id), Partition: p},
				Node: node, BaseOffset: seg.BaseOffset, EndOffset: seg.EndOffset})
		}
	}
	return nil
}

// shardTopic names the group-coordinator shards in a history, as if they
// were the partitions of one topic.
const shardTopic = "(coordinator shards)"

func shardPartition(shard int32) history.Partition {
	return history.Partition{Topic: shardTopic, Partition: shard}
}

// name returns the topic name of id, reading the topics again when it is
// new (a topic is written before its partitions' keys); a deleted topic
// keeps its id as its name.
func (r *etcdRecorder) name(id string) string {
	r.mu.Lock()
	name, ok := r.names[id]
	r.mu.Unlock()
	if ok {
		return name
	}
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	ids, err := r.c.topicIDs(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		for n, i := range ids {
			r.names[i] = n
		}
	}
	if name, ok := r.names[id]; ok {
		return name
	}
	return id
}

// topicNames returns the known topic names by id.
func (r *etcdRecorder) topicNames() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]string, len(r.names))
	for id, n := range r.names {
		out[id] = n
	}
	return out
}

// sync waits until the recorder has seen every change etcd holds now, and
// fails the test if its watch broke.
func (r *etcdRecorder) sync() {
	t := r.c.t
	t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	resp, err := r.c.cli.Get(ctx, r.c.key(""), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("etcd recorder: %v", err)
	}
	for {
		r.mu.Lock()
		rev, werr := r.rev, r.err
		r.mu.Unlock()
		if werr != nil {
			t.Fatalf("etcd recorder: the watch failed, the history is incomplete: %v", werr)
		}
		if rev >= resp.Header.Revision {
			return
		}
		// A progress notification carries the watch's revision when no event is due.
		if err := r.c.cli.RequestProgress(r.ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("etcd recorder: progress request: %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("etcd recorder at revision %d, etcd at %d after 30s", rev, resp.Header.Revision)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// startSampler reads the owner keys every interval into the history until stop.
func (c *testCluster) startSampler(rec *etcdRecorder, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			if s, err := c.sampleOwners(ctx, rec.topicNames()); err == nil {
				rec.hist.AddSample(s)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	c.t.Cleanup(stop)
	return stop
}

// historyProducer is an idempotent franz-go producer that writes unique
// values round-robin over a topic's partitions and notes every attempt.
type historyProducer struct {
	t       *testing.T
	hist    *history.History
	cancel  context.CancelFunc
	done    chan struct{}
	pending sync.WaitGroup
	sent    atomic.Int64
}

// startHistoryProducer produces until stopped, at most about rate records
// a second, with acks=all and retries for as long as deliveryTimeout.
func startHistoryProducer(t *testing.T, seeds []string, topic string, hist *history.History, rate int) *historyProducer {
	t.Helper()
	cl := newClusterClient(t, seeds, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(5*time.Millisecond),
		kgo.RecordDeliveryTimeout(45*time.Second),
		// A paused broker accepts connections and answers nothing: give up
		// on its requests soon, so that records move to the new owner.
		kgo.ProduceRequestTimeout(5*time.Second), kgo.RequestTimeoutOverhead(3*time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	p := &historyProducer{t: t, hist: hist, cancel: cancel, done: make(chan struct{})}
	go p.run(ctx, cl, topic, rate)
	t.Cleanup(func() { p.stop() })
	return p
}

func (p *historyProducer) run(ctx context.Context, cl *kgo.Client, topic string, rate int) {
	defer close(p.done)
	defer cl.Close()
	const burst = 10
	pace := time.NewTicker(time.Second * burst / time.Duration(rate))
	defer pace.Stop()
	for i := 0; ctx.Err() == nil; i++ {
		if i%burst == 0 {
			select {
			case <-ctx.Done():
			case <-pace.C:
			}
		}
		v := fmt.Sprintf("%s-%07d", topic, i)
		start := time.Now()
		p.pending.Add(1)
		p.sent.Add(1)
		// ctx ends a wait for buffer space at stop; a record canceled so is
		// an attempt that failed, whatever became of it: the checker allows both.
		cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
			defer p.pending.Done()
			p.hist.AddProduce(history.Produce{Partition: history.Partition{Topic: topic, Partition: r.Partition},
				Value: v, Start: start, End: time.Now(), Offset: r.Offset, Err: err})
		})
	}
	p.pending.Wait() // every callback, within the delivery timeout
}

// stop stops producing and waits until every attempt has its outcome.
func (p *historyProducer) stop() {
	p.cancel()
	select {
	case <-p.done:
	case <-time.After(90 * time.Second):
		p.t.Fatalf("producer: outcomes still pending 90s after stop (%d sent)", p.sent.Load())
	}
}

// waitAcked waits until the history holds n more acks than it did.
func waitAcked(t *testing.T, hist *history.History, n int, d time.Duration) {
	t.Helper()
	want := hist.Acked() + n
	testwait.Until(t, d, func() bool { return hist.Acked() >= want }, "%v acks after %v, want %d",
		testwait.Later(func() string { return fmt.Sprint(hist.Acked()) }), d, want)
}

// newClusterClient is a franz-go client seeded with the given brokers.
func newClusterClient(t *testing.T, seeds []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(250 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// startHistoryConsumer reads topic from the start while the test runs and
// notes every record it receives as a read.
func startHistoryConsumer(t *testing.T, seeds []string, topic string, hist *history.History) (stop func()) {
	t.Helper()
	cl := newClusterClient(t, seeds, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cl.Close()
		for ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				hist.AddRead(history.Read{Partition: history.Partition{Topic: topic, Partition: r.Partition}, Offset: r.Offset, Value: string(r.Value)})
			})
		}
	}()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return stop
}

// readFinal reads every partition of topic from its start to its end
// offset (as ListOffsets gives them now) through the cluster, for Check.
// Retriable errors (an owner moving) are waited out; others fail.
func readFinal(t *testing.T, seeds []string, topic string) map[history.Partition][]history.Entry {
	t.Helper()
	ctx := testCtx(t, 120*time.Second)
	ends := listEnds(t, ctx, seeds, topic)
	cl := newClusterClient(t, seeds, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	out := map[history.Partition][]history.Entry{}
	next := map[int32]int64{}
	for !reachedEnds(next, ends) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("final read of %s: at %v of ends %v after 120s", topic, next, ends)
		}
		fs.EachError(func(_ string, p int32, err error) {
			if !kerr.IsRetriable(err) {
				t.Fatalf("final read of %s/%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			part := history.Partition{Topic: topic, Partition: r.Partition}
			out[part] = append(out[part], history.Entry{Offset: r.Offset, Value: string(r.Value)})
			next[r.Partition] = r.Offset + 1
		})
	}
	return out
}

func reachedEnds(next, ends map[int32]int64) bool {
	for p, end := range ends {
		if next[p] < end {
			return false
		}
	}
	return true
}

// listEnds returns the end offset (high watermark) of every partition.
func listEnds(t *testing.T, ctx context.Context, seeds []string, topic string) map[int32]int64 {
	t.Helper()
	cl := newClusterClient(t, seeds)
	defer cl.Close()
	for {
		listed, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
		if err == nil {
			err = listed.Error()
		}
		if err == nil {
			ends := map[int32]int64{}
			listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
			return ends
		}
		if ctx.Err() != nil {
			t.Fatalf("list end offsets of %s: %v", topic, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
