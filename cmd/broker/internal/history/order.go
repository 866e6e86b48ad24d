package history

import (
	"sort"
	"time"
)

// checkOrder: per partition, an acknowledgement that ended before another
// started holds the lower offset. One sweep over the acks by start time,
// with the highest offset among those already ended, keeps it O(n log n).
func checkOrder(produces []Produce, add report) {
	byPartition := map[Partition][]Produce{}
	var base time.Time
	for _, p := range produces {
		if !p.Acked() {
			continue
		}
		byPartition[p.Partition] = append(byPartition[p.Partition], p)
		if base.IsZero() || p.Start.Before(base) {
			base = p.Start
		}
	}
	for _, part := range sortedPartitions(byPartition) {
		checkPartitionOrder(byPartition[part], base, add)
	}
}

func checkPartitionOrder(acks []Produce, base time.Time, add report) {
	byStart := append([]Produce(nil), acks...)
	sort.SliceStable(byStart, func(i, j int) bool { return byStart[i].Start.Before(byStart[j].Start) })
	byEnd := append([]Produce(nil), acks...)
	sort.SliceStable(byEnd, func(i, j int) bool { return byEnd[i].End.Before(byEnd[j].End) })
	var highest *Produce // the ended ack with the highest offset so far
	j := 0
	for _, b := range byStart {
		for ; j < len(byEnd) && byEnd[j].End.Before(b.Start); j++ {
			if highest == nil || byEnd[j].Offset > highest.Offset {
				highest = &byEnd[j]
			}
		}
		if highest != nil && highest.Offset >= b.Offset {
			add(RuleOrder, "%s: %q was acknowledged at offset %d at +%v, before %q started at +%v, which got offset %d",
				b.Partition, highest.Value, highest.Offset, highest.End.Sub(base), b.Value, b.Start.Sub(base), b.Offset)
		}
	}
}
