package main

// A member that stops polling past max.poll.interval.ms (its rebalance
// timeout): franz-go with BlockRebalanceOnPoll cannot rejoin while its
// application holds the records of its last poll, so when the group
// rebalances the member misses the join. The broker removes it from the
// generation after the rebalance timeout, the others complete the
// rebalance without it, and when it polls again it rejoins as a new member.

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// stallingMember polls until told to stall, then holds its last poll
// (blocking rebalances) until told to resume.
type stallingMember struct {
	cl      *kgo.Client
	stall   chan struct{} // closed by the test: stop polling
	stalled chan struct{} // closed by the member: it stopped
	resume  chan struct{} // closed by the test: poll again
	done    chan struct{}
}

func startStallingMember(t *testing.T, opts ...kgo.Opt) *stallingMember {
	t.Helper()
	cl, err := kgo.NewClient(append(opts, kgo.BlockRebalanceOnPoll())...)
	if err != nil {
		t.Fatal(err)
	}
	m := &stallingMember{cl: cl, stall: make(chan struct{}), stalled: make(chan struct{}),
		resume: make(chan struct{}), done: make(chan struct{})}
	go m.run()
	t.Cleanup(func() {
		select {
		case <-m.resume:
		default:
			close(m.resume)
		}
		cl.Close()
		<-m.done
	})
	return m
}

func (m *stallingMember) run() {
	defer close(m.done)
	stalled := false
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		fs := m.cl.PollFetches(ctx)
		cancel()
		if fs.IsClientClosed() {
			return
		}
		select {
		case <-m.stall:
			if !stalled { // sleep past max.poll.interval.ms, rebalances blocked
				stalled = true
				close(m.stalled)
				<-m.resume
			}
		default:
		}
		m.cl.AllowRebalance()
	}
}

func TestGroupFranzMaxPollInterval(t *testing.T) {
	t.Parallel()
	tb := startTestBroker(t, "")
	setBrokerConfigs(t, tb.addr, quickGroups...)
	const topic, group, partitions = "maxpoll", "pollers", 6
	createTopics(t, tb.addr, topic, partitions)
	const rebalanceTimeout = 2 * time.Second
	l, lc := newLedger(topic), newLedger(topic) // the stalling member has its own
	member := func(name string, l *ledger) []kgo.Opt {
		opts := []kgo.Opt{kgo.SeedBrokers(tb.addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID(name),
			kgo.Balancers(kgo.RangeBalancer()), kgo.RebalanceTimeout(rebalanceTimeout), kgo.SessionTimeout(20 * time.Second),
			kgo.HeartbeatInterval(100 * time.Millisecond)}
		for _, o := range l.callbacks(name) {
			opts = append(opts, o)
		}
		return opts
	}
	a := startMember(t, tb.addr, group, topic, "a", member("a", l)...)
	b := startMember(t, tb.addr, group, topic, "b", member("b", l)...)
	c := startStallingMember(t, member("c", lc)...)
	waitFor(t, "a, b and c to own every partition", func() bool {
		return len(lc.owners()["c"]) > 0 && l.settled(partitions-len(lc.owners()["c"]), "a", "b")
	})
	cID, _ := c.cl.GroupMetadata()

	close(c.stall)
	<-c.stalled
	d := startMember(t, tb.addr, group, topic, "d", member("d", l)...)
	waitFor(t, "a, b and d to own every partition without the stalled member",
		func() bool { return sameGeneration(a, b, d) && l.settled(partitions, "a", "b", "d") })
	l.check(t)
	if ids := groupClientIDs(t, tb.addr, group); ids != "a,b,d" {
		t.Fatalf("after the rebalance timeout the group holds %s, want a,b,d", ids)
	}

	close(c.resume)
	waitFor(t, "the stalled member to rejoin and own partitions", func() bool {
		newID, _ := c.cl.GroupMetadata()
		return newID != cID && newID != "" && len(lc.owners()["c"]) > 0 && groupClientIDs(t, tb.addr, group) == "a,b,c,d"
	})
	waitFor(t, "the four members to own every partition", func() bool {
		return len(l.owners())+1 == 4 && l.settled(partitions-len(lc.owners()["c"]), "a", "b", "d")
	})
	l.check(t)
}

// groupClientIDs returns the client ids of a group's members, sorted and
// joined by commas.
func groupClientIDs(t *testing.T, addr, group string) string {
	t.Helper()
	ctx, _ := ctxFor(t, 30*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	described, err := kadm.NewClient(cl).DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range described[group].Members {
		ids = append(ids, m.ClientID)
	}
	sort.Strings(ids)
	return strings.Join(ids, ",")
}
