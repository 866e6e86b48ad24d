package main

// What the transaction tests share: input written by an idempotent
// producer, consume-transform-produce stages of franz-go
// GroupTransactSession members, and read_committed / read_uncommitted
// reads that end at a sentinel record written after everything else.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/internal/testwait"
)

// sentinelValue marks the end of what a test reads of a partition: it is
// written, without a transaction, once every transaction of the test has
// ended, so a reader that reached it has seen every committed record.
const sentinelValue = "sentinel"

// txnKeys are the keys of a test's input records, k00000 and on.
func txnKeys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("k%05d", i)
	}
	return out
}

// produceKeys writes one record per key to topic, spread round-robin over
// its partitions, with an idempotent producer, and waits for every ack.
func produceKeys(t *testing.T, seeds []string, topic string, partitions int32, keys []string) {
	t.Helper()
	ctx, _ := ctxFor(t, 2*time.Minute)
	cl := newClusterClient(t, seeds, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.UnknownTopicRetries(-1))
	defer cl.Close()
	recs := make([]*kgo.Record, len(keys))
	for i, k := range keys {
		recs[i] = &kgo.Record{Topic: topic, Partition: int32(i) % partitions, Key: []byte(k), Value: []byte(k)}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce %d records to %s: %v", len(keys), topic, err)
	}
}

// writeSentinels writes the sentinel record to every partition of topic.
func writeSentinels(t *testing.T, seeds []string, topic string, partitions int32) {
	t.Helper()
	ctx, _ := ctxFor(t, time.Minute)
	cl := newClusterClient(t, seeds, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	for p := range partitions {
		r := &kgo.Record{Topic: topic, Partition: p, Value: []byte(sentinelValue)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("sentinel to %s/%d: %v", topic, p, err)
		}
	}
}

// readToSentinels reads every partition of topic from the start, at the
// isolation level given, until each partition's sentinel, and returns the
// records before the sentinels, each partition's in offset order.
func readToSentinels(t *testing.T, seeds []string, topic string, partitions int32, isolation kgo.IsolationLevel) []*kgo.Record {
	t.Helper()
	ctx, _ := ctxFor(t, 2*time.Minute)
	cl := newClusterClient(t, seeds, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(isolation), kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	var out []*kgo.Record
	ended := map[int32]bool{}
	for len(ended) < int(partitions) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: sentinels of %d of %d partitions after 2m (%d records)", topic, len(ended), partitions, len(out))
		}
		fs.EachError(func(tp string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Logf("fetch %s/%d: %v", tp, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			switch {
			case ended[r.Partition]:
			case string(r.Value) == sentinelValue:
				ended[r.Partition] = true
			default:
				out = append(out, r)
			}
		})
	}
	return out
}

// checkKeysOnce fails unless recs hold every key of want exactly once and
// nothing else.
func checkKeysOnce(t *testing.T, what string, recs []*kgo.Record, want []string) {
	t.Helper()
	seen := map[string]int{}
	for _, r := range recs {
		seen[string(r.Key)]++
	}
	var missing, dup, extra []string
	wanted := map[string]bool{}
	for _, k := range want {
		wanted[k] = true
		switch n := seen[k]; {
		case n == 0:
			missing = append(missing, k)
		case n > 1:
			dup = append(dup, fmt.Sprintf("%s x%d", k, n))
		}
	}
	for k := range seen {
		if !wanted[k] {
			extra = append(extra, k)
		}
	}
	if len(missing)+len(dup)+len(extra) > 0 {
		slices.Sort(extra)
		t.Fatalf("%s: %d records for %d keys: missing %d %v, duplicated %d %v, unexpected %d %v", what, len(recs), len(want),
			len(missing), head(missing), len(dup), head(dup), len(extra), head(extra))
	}
}

// head is the first few of a list, for failure messages.
func head(s []string) []string { return s[:min(len(s), 10)] }

// keySet is a set of keys written by several goroutines.
type keySet struct {
	mu   sync.Mutex // guards keys
	keys map[string]int
}

func newKeySet() *keySet { return &keySet{keys: map[string]int{}} }

func (s *keySet) add(keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		s.keys[k]++
	}
}

func (s *keySet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}

// etlStage is one level of a consume-transform-produce chain: its members
// read in with read_committed, in group, and write each record's key to
// every topic of outs in a transaction that also commits the offsets read.
type etlStage struct {
	t          *testing.T
	name       string
	seeds      []string
	group      string
	in         string
	outs       []string
	balancer   kgo.GroupBalancer
	abortEvery int           // every n-th transaction of a member aborts (0: none)
	timeout    time.Duration // transaction.timeout.ms (0: franz-go's default)
	committed  *keySet       // input keys in a committed transaction, as the members were told
}

// etlMember is one running member of a stage.
type etlMember struct {
	id     string
	cancel context.CancelFunc
	done   chan struct{}
	txns   int // transactions ended, read after done
}

// start runs a member with transactional id stage-name-id until stop, or
// until it ended maxTxns transactions (0: no limit) and left the group.
// Any error of its session (a broker gone, a fence) ends the session and
// a new one takes over, with the same transactional id, from the group's
// committed offsets.
func (s *etlStage) start(id string, maxTxns int) *etlMember {
	ctx, cancel := context.WithCancel(context.Background())
	m := &etlMember{id: id, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		var sess *kgo.GroupTransactSession
		defer func() {
			if sess != nil {
				sess.Close()
			}
		}()
		for ctx.Err() == nil && (maxTxns == 0 || m.txns < maxTxns) {
			if sess == nil {
				var err error
				if sess, err = s.session(id); err != nil {
					s.t.Errorf("%s: %v", id, err)
					return
				}
			}
			if !s.round(ctx, sess, m) {
				sess.Close()
				sess = nil
			}
		}
	}()
	return m
}

// stop ends the member and waits for it.
func (m *etlMember) stop(t *testing.T) {
	t.Helper()
	m.cancel()
	select {
	case <-m.done:
	case <-time.After(time.Minute):
		t.Fatalf("member %s did not stop", m.id)
	}
}

// wait waits until the member ended by itself (its maxTxns).
func (m *etlMember) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-m.done:
	case <-time.After(d):
		t.Fatalf("member %s still runs after %v", m.id, d)
	}
}

func (s *etlStage) session(id string) (*kgo.GroupTransactSession, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.seeds...), kgo.MetadataMinAge(250 * time.Millisecond),
		kgo.TransactionalID(s.name + "-" + id), kgo.ConsumerGroup(s.group), kgo.ConsumeTopics(s.in),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.RequireStableFetchOffsets(), kgo.Balancers(s.balancer),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.SessionTimeout(10 * time.Second), kgo.UnknownTopicRetries(-1),
	}
	if s.timeout > 0 {
		opts = append(opts, kgo.TransactionTimeout(s.timeout))
	}
	sess, err := kgo.NewGroupTransactSession(opts...)
	if err != nil {
		return nil, fmt.Errorf("transact session: %w", err)
	}
	return sess, nil
}

// round runs one transaction of up to 50 records; false: the session
// failed and must be replaced.
func (s *etlStage) round(ctx context.Context, sess *kgo.GroupTransactSession, m *etlMember) bool {
	pollCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	fs := sess.PollRecords(pollCtx, 50)
	cancel()
	if fs.IsClientClosed() {
		return false
	}
	recs := fs.Records()
	if len(recs) == 0 {
		return true
	}
	if err := sess.Begin(); err != nil {
		s.t.Logf("%s: begin: %v", m.id, err)
		return false
	}
	var (
		mu     sync.Mutex // guards failed
		failed error
		keys   []string
	)
	for _, r := range recs {
		keys = append(keys, string(r.Key))
		for _, out := range s.outs {
			sess.Produce(ctx, &kgo.Record{Topic: out, Key: r.Key, Value: []byte(out + ":" + string(r.Key))}, func(_ *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			})
		}
	}
	endCtx, cancelEnd := context.WithTimeout(ctx, time.Minute)
	defer cancelEnd()
	if err := sess.Client().Flush(endCtx); err != nil {
		s.t.Logf("%s: flush: %v", m.id, err)
		return false // the next session, with the same id, aborts the transaction
	}
	m.txns++
	mu.Lock()
	commit := failed == nil && (s.abortEvery == 0 || m.txns%s.abortEvery != 0)
	mu.Unlock()
	committed, err := sess.End(endCtx, kgo.TransactionEndTry(commit))
	if err != nil {
		s.t.Logf("%s: end (commit %v): %v", m.id, commit, err)
		return false
	}
	if committed {
		s.committed.add(keys)
	}
	return true
}

// waitAll waits until the stage committed every key of want.
func (s *etlStage) waitAll(want []string, d time.Duration) {
	s.t.Helper()
	testwait.Until(s.t, d, func() bool { return s.committed.len() >= len(want) },
		"stage %s committed %v of %d keys", s.name, testwait.Later(func() string { return fmt.Sprint(s.committed.len()) }), len(want))
}

// checkGroupAtEnd fails unless group's committed offsets of topic are the
// ends of its partitions (input written without transactions: the end is
// the record count).
func checkGroupAtEnd(t *testing.T, seeds []string, group, topic string) {
	t.Helper()
	ctx, _ := ctxFor(t, time.Minute)
	adm := kadm.NewClient(newClusterClient(t, seeds))
	defer adm.Close()
	ends := listEndOffsets(ctx, t, adm, topic)
	got, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = got.Error()
	}
	if err != nil {
		t.Fatalf("offsets of %s: %v", group, err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		c, ok := got.Lookup(topic, o.Partition)
		if !ok || c.At != o.Offset {
			t.Errorf("group %s: %s/%d committed %d (%v), end %d", group, topic, o.Partition, c.At, ok, o.Offset)
		}
	})
}
