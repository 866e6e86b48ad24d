package cluster

import (
	"hash/fnv"
	"strconv"
)

// place computes the target owners of n slots (a topic's partitions, or
// the shards), given their current owners, the live brokers (sorted) and
// whether a gone broker is waited for (a wal-mode member not taken over).
//
// It is sticky: a slot stays with its owner while that broker is live, and
// with a gone broker that is waited for. The exception is balance: a live
// broker holding more than its share (n over the live brokers, rounded
// up) gives back the excess, first the slots that rank another broker
// higher, so that brokers that join take part of the load and a cluster
// started one broker at a time does not end with everything on the first.
// A slot without an owner goes to the live broker with room that ranks
// highest by rendezvous hashing (FNV-1a of the slot's name and the node
// id), so that a placement computed twice, or by another controller, is
// the same. place returns nil when no broker is live.
func place(name func(i int) string, n int, current []int32, live []int32, waitedFor func(int32) bool) []int32 {
	if len(live) == 0 {
		return nil
	}
	isLive := make(map[int32]bool, len(live))
	for _, b := range live {
		isLive[b] = true
	}
	share := (n + len(live) - 1) / len(live)
	out := make([]int32, n)
	load := map[int32]int{}
	for i := range out {
		c := int32(-1)
		if i < len(current) {
			c = current[i]
		}
		switch {
		case isLive[c]:
			out[i] = c
			load[c]++
		case c >= 0 && waitedFor(c):
			out[i] = c
		default:
			out[i] = -1
		}
	}
	for _, b := range live {
		shed(out, b, load[b]-share, name, live)
		load[b] = min(load[b], share)
	}
	for i := range out {
		if out[i] == -1 {
			out[i] = best(name(i), live, func(b int32) bool { return load[b] < share })
			load[out[i]]++
		}
	}
	return out
}

// shed takes excess slots away from broker b: first those whose highest
// ranked broker is another, then any.
func shed(out []int32, b int32, excess int, name func(int) string, live []int32) {
	for pass := 0; pass < 2 && excess > 0; pass++ {
		for i := range out {
			if excess == 0 {
				return
			}
			if out[i] != b || (pass == 0 && best(name(i), live, nil) == b) {
				continue
			}
			out[i] = -1
			excess--
		}
	}
}

// best returns the live broker that ranks highest for the slot among
// those ok accepts (nil: all), or the highest of all when none does.
func best(slot string, live []int32, ok func(int32) bool) int32 {
	top, topScore, found := live[0], uint64(0), false
	for _, b := range live {
		if ok != nil && !ok(b) {
			continue
		}
		if s := score(slot, b); !found || s > topScore {
			top, topScore, found = b, s, true
		}
	}
	if !found {
		return best(slot, live, nil)
	}
	return top
}

// score is the rendezvous weight of a node for a slot: FNV-1a over both,
// mixed (FNV alone varies little across names that differ in one digit).
func score(slot string, node int32) uint64 {
	h := fnv.New64a()
	h.Write([]byte(slot))
	h.Write([]byte{'/'})
	h.Write(strconv.AppendInt(nil, int64(node), 10))
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
