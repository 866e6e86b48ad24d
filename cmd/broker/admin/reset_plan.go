package admin

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// planEntry is one partition of a reset plan. CurrentOffset and Delta are
// null where the group has committed nothing.
type planEntry struct {
	Group         string `json:"group"`
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset *int64 `json:"current_offset"`
	NewOffset     int64  `json:"new_offset"`
	Delta         *int64 `json:"delta"`
}

// bounds are a partition's log start and end offsets.
type bounds struct{ start, end int64 }

// planReset computes the new offset of every partition in scope, clamped
// to the partition's log, warning on stderr for each clamped one.
func (inv *invocation) planReset(r *resetRequest, file []offsetEntry) ([]planEntry, error) {
	committed, err := inv.fetchOffsets(r.group)
	if err != nil {
		return nil, err
	}
	set, err := inv.resetScope(r, committed, file)
	if err != nil {
		return nil, err
	}
	logs, err := inv.bounds(set)
	if err != nil {
		return nil, err
	}
	targets, err := inv.targets(r, set, committed, logs, file)
	if err != nil {
		return nil, err
	}
	var plan []planEntry
	for _, tp := range sortedPartitions(set) {
		e := planEntry{Group: r.group, Topic: tp.topic, Partition: tp.partition}
		e.NewOffset = inv.clamp(tp, targets[tp], logs[tp])
		if c, ok := committed.Lookup(tp.topic, tp.partition); ok {
			cur, delta := c.At, e.NewOffset-c.At
			e.CurrentOffset, e.Delta = &cur, &delta
		}
		plan = append(plan, e)
	}
	return plan, nil
}

// resetScope is the partitions to reset: the file's, the group's committed
// ones (--all-topics) or the --topic ones; each must exist.
func (inv *invocation) resetScope(r *resetRequest, committed kadm.OffsetResponses, file []offsetEntry) (kadm.TopicsSet, error) {
	scope := r.scope
	switch {
	case r.mode == "from-file":
		fileScope := topicScope{}
		for _, e := range file {
			if parts, named := scope[e.Topic]; len(scope) == 0 || named && (parts == nil || containsPartition(parts, e.Partition)) {
				fileScope[e.Topic] = append(fileScope[e.Topic], e.Partition)
			}
		}
		if len(fileScope) == 0 {
			return nil, fmt.Errorf("no partition of --from-file %s is in the --topic scope", r.fromFile)
		}
		scope = fileScope
	case r.allTopics:
		set := committedSet(committed)
		if len(set) == 0 {
			return nil, fmt.Errorf("group %s has no committed offsets; name the partitions with --topic", r.group)
		}
		return set, nil
	}
	return inv.resolve(scope)
}

func containsPartition(parts []int32, p int32) bool {
	for _, q := range parts {
		if q == p {
			return true
		}
	}
	return false
}

// bounds lists the log start and end offsets of the partitions in set.
func (inv *invocation) bounds(set kadm.TopicsSet) (map[topicPartition]bounds, error) {
	starts, ends, err := inv.logOffsets(set.Topics())
	if err != nil {
		return nil, err
	}
	out := map[topicPartition]bounds{}
	for _, tp := range sortedPartitions(set) {
		s, sok := starts.Lookup(tp.topic, tp.partition)
		e, eok := ends.Lookup(tp.topic, tp.partition)
		switch {
		case !sok || !eok:
			if gone, ok := starts.Lookup(tp.topic, -1); ok && gone.Err != nil {
				return nil, fmt.Errorf("list offsets of %s: %w", tp.topic, gone.Err) // the topic is gone
			}
			return nil, fmt.Errorf("list offsets of %s/%d: no answer for the partition", tp.topic, tp.partition)
		case s.Err != nil:
			return nil, fmt.Errorf("list log start offset of %s/%d: %w", tp.topic, tp.partition, s.Err)
		case e.Err != nil:
			return nil, fmt.Errorf("list log end offset of %s/%d: %w", tp.topic, tp.partition, e.Err)
		}
		out[tp] = bounds{s.Offset, e.Offset}
	}
	return out, nil
}

// targets computes each partition's unclamped target offset for the mode.
func (inv *invocation) targets(r *resetRequest, set kadm.TopicsSet, committed kadm.OffsetResponses,
	logs map[topicPartition]bounds, file []offsetEntry) (map[topicPartition]int64, error) {
	out := map[topicPartition]int64{}
	var byTime kadm.ListedOffsets
	if r.mode == "to-datetime" || r.mode == "by-duration" {
		var err error
		if byTime, err = inv.adm.ListOffsetsAfterMilli(inv.ctx, r.at.UnixMilli(), set.Topics()...); err != nil {
			return nil, inv.failed("list offsets by time", err)
		}
	}
	fromFile := map[topicPartition]int64{}
	for _, e := range file {
		fromFile[topicPartition{e.Topic, e.Partition}] = e.Offset
	}
	for _, tp := range sortedPartitions(set) {
		switch r.mode {
		case "to-earliest":
			out[tp] = logs[tp].start
		case "to-latest":
			out[tp] = logs[tp].end
		case "to-offset":
			out[tp] = r.offset
		case "from-file":
			out[tp] = fromFile[tp]
		case "shift-by":
			c, ok := committed.Lookup(tp.topic, tp.partition)
			if !ok {
				return nil, fmt.Errorf("--shift-by: group %s has no committed offset for %s/%d to shift from", r.group, tp.topic, tp.partition)
			}
			out[tp] = c.At + r.offset
		default: // to-datetime, by-duration
			o, err := timeTarget(byTime, tp, r.at, logs[tp])
			if err != nil {
				return nil, err
			}
			out[tp] = o
		}
	}
	return out, nil
}

// timeTarget is the first offset at or after at, or the log end when no
// record is that recent.
func timeTarget(byTime kadm.ListedOffsets, tp topicPartition, at time.Time, b bounds) (int64, error) {
	o, ok := byTime.Lookup(tp.topic, tp.partition)
	switch {
	case !ok:
		return 0, fmt.Errorf("list offset of %s/%d at %s: no answer for the partition", tp.topic, tp.partition, at.Format(time.RFC3339))
	case o.Err != nil:
		return 0, fmt.Errorf("list offset of %s/%d at %s: %w", tp.topic, tp.partition, at.Format(time.RFC3339), o.Err)
	case o.Offset < 0:
		return b.end, nil
	}
	return o.Offset, nil
}

// clamp keeps target within the partition's log, warning when it moves it.
func (inv *invocation) clamp(tp topicPartition, target int64, b bounds) int64 {
	switch {
	case target < b.start:
		fmt.Fprintf(inv.stderr, "warning: %s/%d: offset %d is before the log start offset %d; using %d\n", tp.topic, tp.partition, target, b.start, b.start)
		return b.start
	case target > b.end:
		fmt.Fprintf(inv.stderr, "warning: %s/%d: offset %d is after the log end offset %d; using %d\n", tp.topic, tp.partition, target, b.end, b.end)
		return b.end
	}
	return target
}

// planView prints a plan: GROUP TOPIC PARTITION CURRENT-OFFSET NEW-OFFSET DELTA.
func planView(plan []planEntry) view {
	rows := &tabular{columns: []string{"group", "topic", "partition", "current_offset", "new_offset", "delta"}}
	for _, e := range plan {
		rows.add(e.Group, e.Topic, itoa(e.Partition), optInt(e.CurrentOffset), itoa(e.NewOffset), optInt(e.Delta))
	}
	if plan == nil {
		plan = []planEntry{}
	}
	return view{rows: rows, json: plan}
}

// commitPlan commits the plan's offsets; any partition failure fails.
func (inv *invocation) commitPlan(group string, plan []planEntry) error {
	offsets := kadm.Offsets{}
	for _, e := range plan {
		offsets.Add(kadm.Offset{Topic: e.Topic, Partition: e.Partition, At: e.NewOffset, LeaderEpoch: -1})
	}
	resps, err := inv.adm.CommitOffsets(inv.ctx, group, offsets)
	if err != nil {
		return inv.failed("commit offsets of group "+group, err)
	}
	var failed []string
	for _, e := range plan {
		if r, ok := resps.Lookup(e.Topic, e.Partition); !ok || r.Err != nil {
			failed = append(failed, fmt.Sprintf("commit %s/%d: %v", e.Topic, e.Partition, r.Err))
		}
	}
	return joinFailures("partitions", failed)
}

// isoDuration is the ISO 8601 duration Kafka's tool takes: PnDTnHnMnS.
var isoDuration = regexp.MustCompile(`^[Pp](?:(\d+)[Dd])?(?:[Tt](?:(\d+)[Hh])?(?:(\d+)[Mm])?(?:(\d+(?:\.\d+)?)[Ss])?)?$`)

// parseDuration reads a positive Go duration (36h30m) or ISO 8601 one
// (P1DT12H30M).
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		m := isoDuration.FindStringSubmatch(s)
		if m == nil || s == "P" || s == "PT" {
			return 0, fmt.Errorf("want a duration like 36h30m or P1DT12H30M")
		}
		d = 0
		for i, unit := range []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second} {
			if m[i+1] != "" {
				f, _ := strconv.ParseFloat(m[i+1], 64)
				d += time.Duration(f * float64(unit))
			}
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return d, nil
}
