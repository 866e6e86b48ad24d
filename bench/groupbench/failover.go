package main

import (
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// failoverFigure is the takeover time for one session timeout.
type failoverFigure struct {
	SessionTimeoutMs float64   `json:"session_timeout_ms"`
	TakeoverMs       []float64 `json:"takeover_ms"`
	MedianMs         float64   `json:"median_ms"`
	MedianOverMs     float64   `json:"median_over_session_ms"`
}

// runFailover kills one of three members (12 partitions) rounds times for
// each session timeout and times how long the other two take to own all
// 12 partitions. The survivors heartbeat every 100 ms.
func runFailover(b *broker, rounds int) []failoverFigure {
	const topic, partitions = "failover", 12
	b.createTopic(topic, partitions)
	var out []failoverFigure
	for _, session := range []time.Duration{time.Second, 3 * time.Second, 10 * time.Second} {
		fig := failoverFigure{SessionTimeoutMs: ms(session)}
		for r := range rounds {
			fig.TakeoverMs = append(fig.TakeoverMs, ms(failoverRound(b, topic, partitions, session, r)))
		}
		sorted := append([]float64(nil), fig.TakeoverMs...)
		sort.Float64s(sorted)
		fig.MedianMs = sorted[len(sorted)/2]
		fig.MedianOverMs = fig.MedianMs - fig.SessionTimeoutMs
		fmt.Fprintf(os.Stderr, "failover: session %v: takeover %v ms\n", session, fig.TakeoverMs)
		out = append(out, fig)
	}
	return out
}

func failoverRound(b *broker, topic string, partitions int, session time.Duration, round int) time.Duration {
	group := fmt.Sprintf("failover-%v-%d", session, round)
	o := newOwners(topic)
	c := &cutter{}
	victim := startMember(b, group, topic, "victim", o, kgo.SessionTimeout(session), kgo.Dialer(c.dial))
	a := startMember(b, group, topic, "a", o, kgo.SessionTimeout(10*time.Second))
	bb := startMember(b, group, topic, "b", o, kgo.SessionTimeout(10*time.Second))
	defer closeAll([]*member{a, bb, victim})
	if _, ok := o.waitSettled(partitions, map[string]bool{"victim": true, "a": true, "b": true}, time.Minute); !ok {
		check(fmt.Errorf("failover: three members never settled"))
	}
	c.cutAll()
	killed := time.Now()
	at, ok := o.waitSettled(partitions, map[string]bool{"a": true, "b": true}, time.Minute)
	if !ok {
		check(fmt.Errorf("failover: survivors never took over"))
	}
	return at.Sub(killed)
}
