package history

import (
	"fmt"
	"math"
	"sort"
)

// tenure is one owner's hold on a partition: revisions [From, To).
type tenure struct {
	From, To int64 // To is math.MaxInt64 while held at the end of the history
	Node     int32
	Epoch    int32
}

// ownerLog is every partition's tenures, in revision order.
type ownerLog map[Partition][]tenure

// at returns the owner of p at revision rev, if the history knows one.
func (o ownerLog) at(p Partition, rev int64) (tenure, bool) {
	ts := o[p]
	i := sort.Search(len(ts), func(i int) bool { return ts[i].To > rev })
	if i < len(ts) && ts[i].From <= rev {
		return ts[i], true
	}
	return tenure{}, false
}

// checkOwnerChanges replays the owner keys' changes in revision order:
// a partition acquired while another node holds it has two owners at once,
// and every new tenure's epoch is above the previous one's.
func checkOwnerChanges(changes []OwnerChange, add report) ownerLog {
	sorted := append([]OwnerChange(nil), changes...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Revision < sorted[j].Revision })
	log := ownerLog{}
	lastEpoch := map[Partition]int32{}
	for _, c := range sorted {
		ts := log[c.Partition]
		var cur *tenure
		if n := len(ts); n > 0 && ts[n-1].To == math.MaxInt64 {
			cur = &ts[n-1]
		}
		switch {
		case c.Released && cur != nil:
			cur.To = c.Revision
		case c.Released:
			// A release of a key the history never saw put: the history started late.
		case cur != nil && cur.Node == c.Node && cur.Epoch == c.Epoch:
			// The same tenure written again.
		case cur != nil && cur.Node != c.Node:
			add(RuleOwner, "%s: node %d acquired it at revision %d while node %d held it (since revision %d): two owners",
				c.Partition, c.Node, c.Revision, cur.Node, cur.From)
			cur.To = c.Revision
			log[c.Partition] = append(log[c.Partition], tenure{From: c.Revision, To: math.MaxInt64, Node: c.Node, Epoch: c.Epoch})
		default:
			if prev, ok := lastEpoch[c.Partition]; ok && c.Epoch <= prev {
				add(RuleOwner, "%s: node %d acquired it at revision %d with epoch %d, not above the previous epoch %d",
					c.Partition, c.Node, c.Revision, c.Epoch, prev)
			}
			if cur != nil {
				cur.To = c.Revision
			}
			log[c.Partition] = append(log[c.Partition], tenure{From: c.Revision, To: math.MaxInt64, Node: c.Node, Epoch: c.Epoch})
		}
		if !c.Released {
			lastEpoch[c.Partition] = c.Epoch
		}
	}
	return log
}

// checkSamples: two samples at one revision name the same owner of each
// partition, and a sample agrees with the owner keys' history where that
// history covers the partition.
func checkSamples(samples []Sample, owners ownerLog, add report) {
	type seen struct {
		node   int32
		source string
	}
	byRev := map[int64]map[Partition]seen{}
	for _, s := range samples {
		at := byRev[s.Revision]
		if at == nil {
			at = map[Partition]seen{}
			byRev[s.Revision] = at
		}
		for _, p := range sortedPartitions(s.Owners) {
			node := s.Owners[p]
			if prev, ok := at[p]; ok && prev.node != node {
				add(RuleSample, "%s at revision %d: %s saw node %d own it, %s saw node %d", p, s.Revision, prev.source, prev.node, s.Source, node)
			}
			at[p] = seen{node, s.Source}
			if _, known := owners[p]; !known {
				continue
			}
			if t, ok := owners.at(p, s.Revision); !ok || t.Node != node {
				add(RuleSample, "%s at revision %d: %s saw node %d own it, the owner key says %s", p, s.Revision, s.Source, node, ownerName(t, ok))
			}
		}
	}
}

// checkCommits: each index commit is by the node that held the partition's
// owner key at the commit's revision (the fence the commit compared).
func checkCommits(commits []Commit, owners ownerLog, add report) {
	for _, c := range commits {
		t, ok := owners.at(c.Partition, c.Revision)
		if !ok || t.Node != c.Node {
			add(RuleFence, "%s: node %d committed offsets [%d,%d) at revision %d, when the owner was %s",
				c.Partition, c.Node, c.BaseOffset, c.EndOffset, c.Revision, ownerName(t, ok))
		}
	}
}

func ownerName(t tenure, ok bool) string {
	if !ok {
		return "nobody"
	}
	return fmt.Sprintf("node %d (epoch %d)", t.Node, t.Epoch)
}
