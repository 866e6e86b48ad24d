package history

import "sort"

// finalIndex is the final log looked up by offset and by value.
type finalIndex struct {
	at    map[Partition]map[int64]string
	end   map[Partition]int64 // one past the last offset
	where map[string][]place  // value -> every place it appears
}

type place struct {
	Partition Partition
	Offset    int64
}

// indexFinal indexes the final log, reporting gaps (offsets not
// contiguous, in order) and values that appear more than once.
func indexFinal(final map[Partition][]Entry, add report) *finalIndex {
	idx := &finalIndex{at: map[Partition]map[int64]string{}, end: map[Partition]int64{}, where: map[string][]place{}}
	for _, p := range sortedPartitions(final) {
		entries := final[p]
		at := make(map[int64]string, len(entries))
		for i, e := range entries {
			if i > 0 && e.Offset != entries[i-1].Offset+1 {
				add(RuleGap, "%s: offset %d follows offset %d in the final log", p, e.Offset, entries[i-1].Offset)
			}
			at[e.Offset] = e.Value
			idx.where[e.Value] = append(idx.where[e.Value], place{p, e.Offset})
		}
		idx.at[p] = at
		if len(entries) > 0 {
			idx.end[p] = entries[len(entries)-1].Offset + 1
		}
	}
	for _, v := range sortedKeys(idx.where) {
		if ps := idx.where[v]; len(ps) > 1 {
			add(RuleDuplicate, "value %q is in the final log %d times: %v", v, len(ps), ps)
		}
	}
	return idx
}

// checkProduces: every acknowledged value is in the final log at the
// offset its acknowledgement named; every value in the final log was
// produced by someone.
func checkProduces(produces []Produce, idx *finalIndex, add report) {
	attempted := make(map[string]bool, len(produces))
	for _, p := range produces {
		attempted[p.Value] = true
		if !p.Acked() {
			continue
		}
		if len(idx.where[p.Value]) == 0 {
			add(RuleLost, "value %q acknowledged at %s offset %d is not in the final log", p.Value, p.Partition, p.Offset)
			continue
		}
		if got, ok := idx.at[p.Partition][p.Offset]; !ok || got != p.Value {
			add(RuleAckOffset, "value %q acknowledged at %s offset %d, but that offset holds %s (the value is at %v)",
				p.Value, p.Partition, p.Offset, describe(got, ok), idx.where[p.Value])
		}
	}
	for _, v := range sortedKeys(idx.where) {
		if !attempted[v] {
			add(RulePhantom, "value %q at %v was never produced", v, idx.where[v])
		}
	}
}

// checkReads: every read is a prefix of the final log: the same offset
// holds the same value there.
func checkReads(reads []Read, idx *finalIndex, add report) {
	for _, r := range reads {
		got, ok := idx.at[r.Partition][r.Offset]
		switch {
		case !ok:
			add(RuleRead, "read %q at %s offset %d, which the final log (ending at %d) does not hold",
				r.Value, r.Partition, r.Offset, idx.end[r.Partition])
		case got != r.Value:
			add(RuleRead, "read %q at %s offset %d, where the final log holds %q", r.Value, r.Partition, r.Offset, got)
		}
	}
}

func describe(v string, ok bool) string {
	if !ok {
		return "nothing"
	}
	return "\"" + v + "\""
}

func sortedPartitions[V any](m map[Partition]V) []Partition {
	out := make([]Partition, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
