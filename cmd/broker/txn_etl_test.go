package main

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTxnETLChain (issue 19, test 1): a chain of franz-go
// GroupTransactSession stages on one broker process. Stage one reads topic
// A and writes each record to B and to C in transactions that also commit
// the offsets read; stage two reads B (read_committed) and writes to D the
// same way. Every member aborts every fourth transaction, and one member
// of each stage leaves mid-run for another to join. Every key of A appears
// exactly once in B, C and D, read with read_committed, under an eager
// (range) and a cooperative-sticky balancer; the groups' offsets end at
// the ends of their inputs.
func TestTxnETLChain(t *testing.T) {
	for _, bc := range []struct {
		name     string
		balancer kgo.GroupBalancer
	}{{"eager", kgo.RangeBalancer()}, {"cooperative", kgo.CooperativeStickyBalancer()}} {
		t.Run(bc.name, func(t *testing.T) {
			p := startProc(t, t.TempDir(), "", nil)
			seeds := []string{p.addr}
			const parts = 4
			for _, topic := range []string{"A", "B", "C", "D"} {
				createTopics(t, p.addr, topic, parts)
			}
			keys := txnKeys(1200)
			produceKeys(t, seeds, "A", parts, keys)

			one := &etlStage{t: t, name: "one-" + bc.name, seeds: seeds, group: "etl-one", in: "A", outs: []string{"B", "C"},
				balancer: bc.balancer, abortEvery: 4, committed: newKeySet()}
			two := &etlStage{t: t, name: "two-" + bc.name, seeds: seeds, group: "etl-two", in: "B", outs: []string{"D"},
				balancer: bc.balancer, abortEvery: 4, committed: newKeySet()}
			// m0 of each stage leaves after a few transactions; m3 joins
			// once it has.
			var members []*etlMember
			for _, st := range []*etlStage{one, two} {
				leaver := st.start("m0", 3)
				members = append(members, leaver, st.start("m1", 0), st.start("m2", 0))
				leaver.wait(t, 2*time.Minute)
				members = append(members, st.start("m3", 0))
			}
			one.waitAll(keys, 3*time.Minute)
			two.waitAll(keys, 3*time.Minute)
			for _, m := range members {
				m.stop(t)
			}
			for _, topic := range []string{"B", "C", "D"} {
				writeSentinels(t, seeds, topic, parts)
				checkKeysOnce(t, topic+" read_committed", readToSentinels(t, seeds, topic, parts, kgo.ReadCommitted()), keys)
			}
			checkGroupAtEnd(t, seeds, "etl-one", "A")
		})
	}
}
