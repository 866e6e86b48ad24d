package main

import (
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// rebalanceFigure is the settle time of a group of n members.
type rebalanceFigure struct {
	Balancer    string  `json:"balancer"`
	Members     int     `json:"members"`
	Partitions  int     `json:"partitions"`
	ColdStartMs float64 `json:"cold_start_ms"`
	JoinOneMs   float64 `json:"one_more_member_ms"`
	Rebalances  float64 `json:"rebalances_started"`
}

// runRebalance starts n members at once and times until every partition
// is owned and every member owns some; then one more member joins, timed
// the same way. Members heartbeat every 100 ms, so they learn of a
// rebalance within about that.
func runRebalance(b *broker, n int) []rebalanceFigure {
	var out []rebalanceFigure
	for _, bal := range []kgo.GroupBalancer{kgo.RangeBalancer(), kgo.CooperativeStickyBalancer()} {
		topic, partitions := "rebalance-"+bal.ProtocolName(), 2*n
		b.createTopic(topic, int32(partitions))
		fig := rebalanceFigure{Balancer: bal.ProtocolName(), Members: n, Partitions: partitions}
		o := newOwners(topic)
		live := map[string]bool{}
		var members []*member
		before := b.metric("sediment_group_rebalances_total")
		start := time.Now()
		for i := range n {
			name := fmt.Sprintf("m%02d", i)
			live[name] = true
			members = append(members, startMember(b, "rebalance-"+bal.ProtocolName(), topic, name, o,
				kgo.Balancers(bal), kgo.SessionTimeout(30*time.Second), kgo.RebalanceTimeout(60*time.Second)))
		}
		at, ok := o.waitSettled(partitions, live, 3*time.Minute)
		if !ok {
			check(fmt.Errorf("rebalance: %d members never settled", n))
		}
		fig.ColdStartMs = ms(at.Sub(start))
		live["extra"] = true
		start = time.Now()
		members = append(members, startMember(b, "rebalance-"+bal.ProtocolName(), topic, "extra", o,
			kgo.Balancers(bal), kgo.SessionTimeout(30*time.Second), kgo.RebalanceTimeout(60*time.Second)))
		if at, ok = o.waitSettled(partitions, live, 3*time.Minute); !ok {
			check(fmt.Errorf("rebalance: %d members never settled", n+1))
		}
		fig.JoinOneMs = ms(at.Sub(start))
		fig.Rebalances = b.metric("sediment_group_rebalances_total") - before
		fmt.Fprintf(os.Stderr, "rebalance: %+v\n", fig)
		closeAll(members)
		out = append(out, fig)
	}
	return out
}
