package main

// Static membership (KIP-345) with franz-go: a static member that restarts
// within its session timeout gets its old assignment back with no
// rebalance; the group's generation does not change while both members go
// on consuming.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// counter counts what a member consumes.
type counter struct {
	mu sync.Mutex // guards n
	n  map[string]int
}

func (c *counter) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[name]++
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

func TestGroupFranzStaticRestart(t *testing.T) {
	t.Parallel()
	tb := startTestBroker(t, "")
	setBrokerConfigs(t, tb.addr, quickGroups...)
	const topic, group, partitions = "static", "statics", 6
	createTopics(t, tb.addr, topic, partitions)
	l := newLedger(topic)
	consumed := &counter{n: map[string]int{}}
	start := func(name string, extra ...kgo.Opt) *kgo.Client {
		opts := []kgo.Opt{kgo.SeedBrokers(tb.addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID(name),
			kgo.SessionTimeout(20 * time.Second), kgo.HeartbeatInterval(100 * time.Millisecond), kgo.FetchMaxWait(100 * time.Millisecond)}
		for _, o := range l.callbacks(name) {
			opts = append(opts, o)
		}
		cl, err := kgo.NewClient(append(opts, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				fs := cl.PollFetches(context.Background())
				if fs.IsClientClosed() {
					return
				}
				fs.EachRecord(func(*kgo.Record) { consumed.add(name) })
			}
		}()
		return cl
	}
	leader := start("leader")
	defer leader.Close()
	waitFor(t, "the leader to own every partition", func() bool { return l.settled(partitions, "leader") })
	static := start("static", kgo.InstanceID("static-1"))
	waitFor(t, "the leader and the static member to share the partitions", func() bool {
		_, lg := leader.GroupMetadata()
		_, sg := static.GroupMetadata()
		return lg == sg && l.settled(partitions, "leader", "static")
	})
	oldID, gen := static.GroupMetadata()
	owned := l.owners()["static"]

	static.Close() // a static member does not leave the group on close
	restarted := start("static", kgo.InstanceID("static-1"))
	defer restarted.Close()
	waitFor(t, "the restarted static member to own its old partitions", func() bool {
		return fmtParts(l.owners()["static"]) == fmtParts(owned)
	})
	produceEven(t, tb.addr, topic, partitions, 20)
	waitFor(t, "both members to consume", func() bool { return consumed.get("leader") > 0 && consumed.get("static") > 0 })
	newID, newGen := restarted.GroupMetadata()
	if _, leaderGen := leader.GroupMetadata(); newGen != gen || leaderGen != gen {
		t.Fatalf("generation went from %d to %d (leader at %d): the restart rebalanced", gen, newGen, leaderGen)
	}
	if newID == oldID {
		t.Fatalf("the restarted member kept member id %s", oldID)
	}
	if got := groupClientIDs(t, tb.addr, group); got != "leader,static" {
		t.Fatalf("group members %s", got)
	}
	l.check(t)
}

func fmtParts(ps []int32) string { return fmt.Sprint(sorted(ps)) }
