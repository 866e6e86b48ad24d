package main

// Consumer groups with franz-go, a real client: members share partitions
// with eager and with cooperative-sticky balancing; a static member
// restarts without a rebalance; a member that stops polling past its
// rebalance timeout (max.poll.interval.ms) is removed and rejoins.

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// groupMember is one franz-go group member polling in the background.
type groupMember struct {
	name string
	cl   *kgo.Client
	done chan struct{}
}

// startMember starts a member of group consuming topic; it polls until
// closed.
func startMember(t *testing.T, addr, group, topic, name string, opts ...kgo.Opt) *groupMember {
	t.Helper()
	base := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID(name),
		kgo.SessionTimeout(6 * time.Second), kgo.RebalanceTimeout(10 * time.Second), kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.FetchMaxWait(200 * time.Millisecond)}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	m := &groupMember{name: name, cl: cl, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			if fs := cl.PollFetches(context.Background()); fs.IsClientClosed() {
				return
			}
		}
	}()
	t.Cleanup(m.close)
	return m
}

// close leaves the group (a dynamic member) and stops polling.
func (m *groupMember) close() {
	m.cl.Close()
	<-m.done
}

func (m *groupMember) generation() int32 {
	_, gen := m.cl.GroupMetadata()
	return gen
}

// sameGeneration says whether every member is at one generation.
func sameGeneration(ms ...*groupMember) bool {
	for _, m := range ms[1:] {
		if m.generation() != ms[0].generation() {
			return false
		}
	}
	return ms[0].generation() > 0
}

// TestGroupFranzSharePartitions: 3 members, eager (range) and
// cooperative-sticky, share 12 partitions as they join and leave one by
// one. No partition ever has two owners, none is assigned twice in one
// generation, and once each change settles all 12 are owned by exactly the
// live members, as the broker's own DescribeGroups agrees.
func TestGroupFranzSharePartitions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		balancer kgo.GroupBalancer
		eager    bool
	}{
		{"eager", kgo.RangeBalancer(), true},
		{"cooperative-sticky", kgo.CooperativeStickyBalancer(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tb := startTestBroker(t, "")
			setBrokerConfigs(t, tb.addr, quickGroups...)
			const topic, group, partitions = "shared", "sharing", 12
			createTopics(t, tb.addr, topic, partitions)
			l := newLedger(topic)
			var members []*groupMember
			names := func() []string {
				var out []string
				for _, m := range members {
					out = append(out, m.name)
				}
				return out
			}
			settle := func(what string) {
				waitFor(t, what, func() bool { return sameGeneration(members...) && l.settled(partitions, names()...) })
				l.check(t)
				checkBrokerAssignments(t, tb.addr, group, topic, l.owners())
			}
			for i := range 3 {
				opts := []kgo.Opt{kgo.Balancers(tc.balancer)}
				for _, o := range l.callbacks(fmt.Sprintf("m%d", i)) {
					opts = append(opts, o)
				}
				members = append(members, startMember(t, tb.addr, group, topic, fmt.Sprintf("m%d", i), opts...))
				settle(fmt.Sprintf("%d members to own all %d partitions", i+1, partitions))
			}
			members[0].close()
			members = members[1:]
			settle("2 members to own all partitions after one left")
			l.check(t)
			gens := l.generations()
			if len(gens) < 4 {
				t.Fatalf("assignments seen in %d generations, want at least 4: %v", len(gens), gens)
			}
			if tc.eager {
				for g, n := range gens {
					if n != partitions {
						t.Errorf("eager generation %d assigned %d partitions, want %d", g, n, partitions)
					}
				}
			}
			t.Logf("partitions assigned per generation: %v", gens)
		})
	}
}

// checkBrokerAssignments compares the broker's view of the group (the
// assignments DescribeGroups reports) with what the members report owning.
func checkBrokerAssignments(t *testing.T, addr, group, topic string, owners map[string][]int32) {
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
	d := described[group]
	if d.Err != nil || d.State != "Stable" {
		t.Fatalf("group %s: state %q, err %v", group, d.State, d.Err)
	}
	n := 0
	for _, m := range d.Members {
		ca, ok := m.Assigned.AsConsumer()
		if !ok {
			t.Fatalf("member %s: assignment does not decode", m.MemberID)
		}
		for _, at := range ca.Topics {
			if at.Topic == topic {
				n += len(at.Partitions)
				if got := fmt.Sprint(owners[m.ClientID]); got != fmt.Sprint(sorted(at.Partitions)) {
					t.Errorf("broker assigns %s %v, it owns %s", m.ClientID, sorted(at.Partitions), got)
				}
			}
		}
	}
	if n != 12 {
		t.Errorf("broker's assignments cover %d partitions", n)
	}
}

func sorted(ps []int32) []int32 {
	out := append([]int32(nil), ps...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
