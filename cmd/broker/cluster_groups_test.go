package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
)

// TestClusterGroupFailoverCommits (issue 18, test 6): a consumer group of two
// franz-go members, one of them static (group.instance.id), reads a topic
// spread over the three brokers and commits what it read. The broker that
// coordinates the group (the owner of its shard) is killed with SIGKILL.
// FindCoordinator then names a live broker, the one holding the shard's
// own key; the members go on with it: every acknowledged record is read,
// a partition is read again only from its committed offset on, never from
// below an offset the old coordinator acknowledged as committed, and the
// members keep their ids and generation (the new coordinator loaded the
// group from etcd: no rebalance), the static member its assignment.
func TestClusterGroupFailoverCommits(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	const topic, partitions, group = "failover", 6, "failover-group"
	createTopics(t, c.addrs(1)[0], topic, partitions)
	c.waitOwned(topic, partitions, nil)
	coord := c.waitCoordinator(group, nil)
	log := &groupLog{lastRead: map[int32]int64{}, committed: map[int32]int64{}, read: map[string]bool{}, assigned: map[string][]int32{}}
	dyn := startCommitLoggingMember(t, c.addrs(), group, topic, "dynamic", log)
	static := startCommitLoggingMember(t, c.addrs(), group, topic, "static", log, kgo.InstanceID("static-1"))
	c.waitFor(30*time.Second, "both members share the partitions", func(context.Context) (bool, string) {
		return log.shared(partitions, "dynamic", "static")
	})
	acked := produceAckedTo(t, c.addrs(), topic, "a", 600, partitions)
	c.waitFor(30*time.Second, "the group read and committed every record", func(ctx context.Context) (bool, string) {
		return c.groupCaughtUp(ctx, group, topic, acked, log, c.addrs())
	})
	staticParts := log.assignment("static")
	staticID, gen := static.cl.GroupMetadata()
	dynID, _ := dyn.cl.GroupMetadata()

	acked = append(acked, produceAckedTo(t, c.addrs(), topic, "b", 600, partitions)...)
	t.Logf("group %s (shard %d) coordinated by node %d: killed", group, groupcoord.ShardOf(group), coord)
	c.kill(coord)
	live := without(c.ids(), coord)
	moved := c.waitCoordinator(group, func(node int32) bool { return node != coord })
	c.waitOwned(topic, partitions, func(node int32) bool { return node != coord })
	acked = append(acked, produceAckedTo(t, c.addrs(live...), topic, "c", 600, partitions)...)
	c.waitFor(60*time.Second, "the group read and committed every record after the failover", func(ctx context.Context) (bool, string) {
		return c.groupCaughtUp(ctx, group, topic, acked, log, c.addrs(live...))
	})
	t.Logf("coordinator moved to node %d", moved)

	if got := log.assignment("static"); !slices.Equal(got, staticParts) {
		t.Errorf("static member's assignment went from %v to %v", staticParts, got)
	}
	// The new coordinator loaded the group as it was: the members keep
	// their ids, and their generation unless a member's own heartbeats
	// failed for long enough that its client rejoined (it then reports
	// its partitions lost): a rejoining leader rebalances, as in Kafka.
	for _, m := range []struct {
		name string
		cl   *kgo.Client
		id   string
	}{{"static", static.cl, staticID}, {"dynamic", dyn.cl, dynID}} {
		id, newGen := m.cl.GroupMetadata()
		if id != m.id {
			t.Errorf("%s member's id went from %s to %s", m.name, m.id, id)
		}
		if lost := log.lostCount(); newGen != gen && lost == 0 {
			t.Errorf("%s member's generation went from %d to %d, and no member's client rejoined", m.name, gen, newGen)
		} else if newGen != gen {
			t.Logf("%s member's generation went from %d to %d after a client rejoined (%d partitions lost)", m.name, gen, newGen, lost)
		}
	}
	dyn.stop()
	static.stop()
	log.check(t)

}

// waitCoordinator waits until the owner of group's coordinator shard (its
// own/shards key) is a node want accepts (nil: any), and FindCoordinator
// through each running broker names that node; it returns it.
func (c *testCluster) waitCoordinator(group string, want func(int32) bool) int32 {
	c.t.Helper()
	key := c.key(fmt.Sprintf("own/shards/%03d", groupcoord.ShardOf(group)))
	var owner int32
	c.waitFor(30*time.Second, "group "+group+"'s coordinator", func(ctx context.Context) (bool, string) {
		resp, err := c.cli.Get(ctx, key)
		if err != nil || len(resp.Kvs) == 0 {
			return false, fmt.Sprintf("%s: %v", key, err)
		}
		var v struct {
			NodeID int32 `json:"node_id"`
		}
		if err := json.Unmarshal(resp.Kvs[0].Value, &v); err != nil {
			return false, err.Error()
		}
		if want != nil && !want(v.NodeID) {
			return false, fmt.Sprintf("%s owned by node %d", key, v.NodeID)
		}
		for _, id := range c.ids() {
			if p := c.nodes[id].proc; p == nil || p.exitedYet() {
				continue
			}
			adm := kadm.NewClient(newClusterClient(c.t, c.addrs(id)))
			found := adm.FindGroupCoordinators(ctx, group)[group]
			adm.Close()
			if found.Err != nil || found.NodeID != v.NodeID || c.node(v.NodeID).addr != fmt.Sprintf("%s:%d", found.Host, found.Port) {
				return false, fmt.Sprintf("node %d answers FindCoordinator with node %d at %s:%d (%v); the shard's owner is node %d",
					id, found.NodeID, found.Host, found.Port, found.Err, v.NodeID)
			}
		}
		owner = v.NodeID
		return true, ""
	})
	return owner
}

// groupCaughtUp says whether the group read every acknowledged record and
// committed each partition's end.
func (c *testCluster) groupCaughtUp(ctx context.Context, group, topic string, acked []ackedRecord, log *groupLog, seeds []string) (bool, string) {
	if missing := log.unread(acked); missing != "" {
		return false, missing
	}
	adm := kadm.NewClient(newClusterClient(c.t, seeds))
	defer adm.Close()
	offsets, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return false, err.Error()
	}
	for p, end := range ackedEnds(acked) {
		if o, ok := offsets.Lookup(topic, p); !ok || o.Err != nil || o.At != end {
			return false, fmt.Sprintf("partition %d committed at %d (%v), end %d", p, o.At, o.Err, end)
		}
	}
	return true, ""
}

// groupLog is what the members of a group did: reads, commits the
// coordinator acknowledged, assignments. A partition read again (an
// offset at or below one read before) must restart at or above its last
// acknowledged commit: anything lower means a committed offset was lost.
type groupLog struct {
	mu        sync.Mutex // guards the rest
	lastRead  map[int32]int64
	committed map[int32]int64 // the highest commit acknowledged, by partition
	read      map[string]bool
	assigned  map[string][]int32 // by member
	rewinds   []string           // a partition read again from below its commit
	rereads   int
	lost      int // partitions a member's client gave up (OnPartitionsLost)
}

func (l *groupLog) lostCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

func (l *groupLog) onRead(r *kgo.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	last, ok := l.lastRead[r.Partition]
	if ok && r.Offset <= last {
		l.rereads++
		if r.Offset < l.committed[r.Partition] {
			l.rewinds = append(l.rewinds, fmt.Sprintf("partition %d read again from %d, below its acknowledged commit %d", r.Partition, r.Offset, l.committed[r.Partition]))
		}
	}
	l.lastRead[r.Partition] = max(last, r.Offset)
	l.read[string(r.Value)] = true
}

// onCommitted notes the offsets of req the coordinator acknowledged.
func (l *groupLog) onCommitted(req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ok := map[int32]bool{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			ok[p.Partition] = p.ErrorCode == 0
		}
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			if ok[p.Partition] {
				l.committed[p.Partition] = max(l.committed[p.Partition], p.Offset)
			}
		}
	}
}

func (l *groupLog) onLost(member string, parts map[string][]int32) {
	l.mu.Lock()
	for _, ps := range parts {
		l.lost += len(ps)
	}
	l.mu.Unlock()
	l.assign(member, parts, true)
}

// assign adds (or, gone, removes) partitions of member's assignment.
func (l *groupLog) assign(member string, parts map[string][]int32, gone bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ps := range parts {
		for _, p := range ps {
			l.assigned[member] = slices.DeleteFunc(l.assigned[member], func(q int32) bool { return q == p })
			if !gone {
				l.assigned[member] = append(l.assigned[member], p)
			}
		}
	}
	slices.Sort(l.assigned[member])
}

func (l *groupLog) assignment(member string) []int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.assigned[member])
}

// shared says whether the members together hold every partition, each some.
func (l *groupLog) shared(partitions int, members ...string) (bool, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range members {
		if len(l.assigned[m]) == 0 {
			return false, fmt.Sprintf("assignments %v", l.assigned)
		}
		n += len(l.assigned[m])
	}
	return n == partitions, fmt.Sprintf("assignments %v", l.assigned)
}

func (l *groupLog) unread(acked []ackedRecord) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, first := 0, ""
	for _, a := range acked {
		if !l.read[a.Value] {
			if n == 0 {
				first = a.Value
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d acknowledged records not read, the first %q", n, first)
}

func (l *groupLog) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.rewinds {
		t.Error(r)
	}
	t.Logf("records read again (from their committed offset on): %d", l.rereads)
}

// commitLoggingMember is a group member that commits what it read after each
// poll, and before it gives a partition up.
type commitLoggingMember struct {
	cl   *kgo.Client
	stop func()
}

func startCommitLoggingMember(t *testing.T, seeds []string, group, topic, name string, log *groupLog, opts ...kgo.Opt) *commitLoggingMember {
	t.Helper()
	commit := func(ctx context.Context, cl *kgo.Client) {
		cl.CommitOffsetsSync(ctx, cl.UncommittedOffsets(), func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			if err == nil && req != nil && resp != nil {
				log.onCommitted(req, resp)
			}
		})
	}
	revoked := func(ctx context.Context, cl *kgo.Client, parts map[string][]int32) {
		commit(ctx, cl)
		log.assign(name, parts, true)
	}
	base := []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID(name),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(200 * time.Millisecond), kgo.SessionTimeout(20 * time.Second), kgo.HeartbeatInterval(500 * time.Millisecond),
		kgo.OnPartitionsRevoked(revoked),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, parts map[string][]int32) { log.assign(name, parts, false) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, parts map[string][]int32) { log.onLost(name, parts) })}
	cl := newClusterClient(t, seeds, append(base, opts...)...)
	m := &commitLoggingMember{cl: cl}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(log.onRead)
			cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
			commit(cctx, cl)
			ccancel()
		}
	}()
	m.stop = sync.OnceFunc(func() { cancel(); <-done; cl.Close() })
	t.Cleanup(m.stop)
	return m
}
