package main

// Helpers of the consumer group tests (group_*_test.go): broker configs
// that make rebalances quick, and an ownership ledger that watches, through
// franz-go's partition callbacks, who owns which partition.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/internal/testwait"
)

// quickGroups are broker configs for group tests: no initial rebalance
// delay, and sessions as short as 500 ms allowed.
var quickGroups = []string{"group.initial.rebalance.delay.ms", "0", "group.min.session.timeout.ms", "500"}

// setBrokerConfigs sets dynamic broker configs (name, value pairs) through
// the admin API, as an operator would.
func setBrokerConfigs(t *testing.T, addr string, kv ...string) {
	t.Helper()
	ctx, _ := ctxFor(t, 30*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var alters []kadm.AlterConfig
	for i := 0; i+1 < len(kv); i += 2 {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: kv[i], Value: kadm.StringPtr(kv[i+1])})
	}
	resps, err := kadm.NewClient(cl).AlterBrokerConfigs(ctx, alters)
	if err == nil {
		for _, r := range resps {
			if r.Err != nil {
				err = fmt.Errorf("%w: %s", r.Err, r.ErrMessage)
			}
		}
	}
	if err != nil {
		t.Fatalf("set broker configs %v: %v", kv, err)
	}
}

// waitFor polls cond until it holds, failing the test after a generous
// hang guard (never a timing assertion: a correct broker is far quicker).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 90*time.Second, cond, "timed out waiting for %s", what)
}

// ledger records, for one topic consumed by a group, which member owns which
// partition as the members' callbacks report it, and every violation: a
// partition assigned to a member while another owns it, or assigned twice
// within one generation.
type ledger struct {
	topic string

	mu     sync.Mutex // guards the fields below
	owner  map[int32]string
	byGen  map[int32]map[int32]string // generation -> partition -> member assigned it then
	faults []string
}

func newLedger(topic string) *ledger {
	return &ledger{topic: topic, owner: map[int32]string{}, byGen: map[int32]map[int32]string{}}
}

// callbacks are the franz-go options that report name's ownership changes.
func (l *ledger) callbacks(name string) []kgo.GroupOpt {
	return []kgo.GroupOpt{
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, m map[string][]int32) {
			_, gen := cl.GroupMetadata()
			l.assigned(name, gen, m[l.topic])
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { l.revoked(name, m[l.topic]) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { l.revoked(name, m[l.topic]) }),
	}
}

func (l *ledger) assigned(name string, gen int32, parts []int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byGen[gen] == nil {
		l.byGen[gen] = map[int32]string{}
	}
	for _, p := range parts {
		if o, ok := l.owner[p]; ok && o != name {
			l.faults = append(l.faults, fmt.Sprintf("generation %d: partition %d assigned to %s while %s owns it", gen, p, name, o))
		}
		if o, ok := l.byGen[gen][p]; ok && o != name {
			l.faults = append(l.faults, fmt.Sprintf("generation %d: partition %d assigned to both %s and %s", gen, p, o, name))
		}
		l.owner[p] = name
		l.byGen[gen][p] = name
	}
}

func (l *ledger) revoked(name string, parts []int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range parts {
		if l.owner[p] == name {
			delete(l.owner, p)
		}
	}
}

// owners returns the partitions each member owns now.
func (l *ledger) owners() map[string][]int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]int32{}
	for p, m := range l.owner {
		out[m] = append(out[m], p)
	}
	for _, ps := range out {
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	}
	return out
}

// settled says whether every one of partitions is owned and exactly the
// members named own them, each at least one.
func (l *ledger) settled(partitions int, members ...string) bool {
	owners := l.owners()
	n := 0
	for _, ps := range owners {
		n += len(ps)
	}
	if n != partitions || len(owners) != len(members) {
		return false
	}
	for _, m := range members {
		if len(owners[m]) == 0 {
			return false
		}
	}
	return true
}

// check fails the test for every violation seen.
func (l *ledger) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.faults) > 0 {
		t.Fatalf("%d ownership violations:\n%s", len(l.faults), strings.Join(l.faults, "\n"))
	}
}

// generations returns the generations in which assignments were seen and,
// for each, how many partitions were assigned in it.
func (l *ledger) generations() map[int32]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[int32]int{}
	for g, ps := range l.byGen {
		out[g] = len(ps)
	}
	return out
}
