package admin

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() {
	register("offsets", &commandSpec{
		name:     "offsets get",
		synopsis: "offsets get --group G [--topics A,B] [--output table|json|csv]",
		about: `Prints a group's committed offsets, sorted by topic and partition. The JSON
and CSV outputs are what "offsets commit --input-json" and
"groups reset-offsets --from-file" read back.`,
		examples: "  broker offsets get --group billing\n  broker offsets get --group billing --topics orders,payments --output json > billing.json",
		read:     true,
		setup:    setupOffsetsGet,
	})
	register("offsets", &commandSpec{
		name:     "offsets commit",
		synopsis: "offsets commit --group G --input-json FILE",
		about: `Commits the offsets in FILE for a group: the JSON or CSV that "offsets get"
prints (a JSON array of {topic, partition, offset[, leader_epoch, metadata]},
or CSV with those columns; "-" reads stdin). Each partition's result is
printed; the command fails when any partition failed. The broker refuses a
commit to a group that has active members.`,
		examples: "  broker offsets get --group billing --output json > billing.json\n  broker offsets commit --group billing-dr --input-json billing.json",
		setup:    setupOffsetsCommit,
	})
}

func setupOffsetsGet(fs *flagSet) action {
	group := fs.String("group", "", "`GROUP` whose offsets to print")
	topics := fs.String("topics", "", "comma-separated `TOPICS` to keep (default: every topic)")
	return func(inv *invocation) error {
		if *group == "" {
			return usagef("--group is required")
		}
		keep := map[string]bool{}
		for _, t := range strings.Split(*topics, ",") {
			if t = strings.TrimSpace(t); t != "" {
				keep[t] = true
			}
		}
		committed, err := inv.fetchOffsets(*group)
		if err != nil {
			return err
		}
		entries := []offsetEntry{}
		rows := &tabular{columns: offsetColumns}
		for _, tp := range sortedPartitions(committedSet(committed)) {
			if len(keep) > 0 && !keep[tp.topic] {
				continue
			}
			o := committed[tp.topic][tp.partition].Offset
			e := offsetEntry{Topic: o.Topic, Partition: o.Partition, Offset: o.At, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata}
			entries = append(entries, e)
			rows.add(e.Topic, itoa(e.Partition), itoa(e.Offset), itoa(e.LeaderEpoch), e.Metadata)
		}
		return inv.emit(view{rows: rows, json: entries})
	}
}

// fetchOffsets returns the group's committed offsets (OffsetFetch), only
// partitions with a commit. A group the cluster does not know has none
// (Kafka answers that with no offsets, some brokers with
// GROUP_ID_NOT_FOUND). A partition error fails the command.
func (inv *invocation) fetchOffsets(group string) (kadm.OffsetResponses, error) {
	adm, err := inv.admin()
	if err != nil {
		return nil, err
	}
	resps, err := adm.FetchOffsets(inv.ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return kadm.OffsetResponses{}, nil
	}
	if err != nil {
		return nil, inv.failed("fetch offsets of group "+group, err)
	}
	if err := resps.Error(); err != nil {
		return nil, fmt.Errorf("fetch offsets of group %s: %w", group, err)
	}
	for topic, parts := range resps {
		for p, r := range parts {
			if r.At < 0 {
				delete(parts, p)
			}
		}
		if len(parts) == 0 {
			delete(resps, topic)
		}
	}
	return resps, nil
}

func committedSet(resps kadm.OffsetResponses) kadm.TopicsSet {
	set := kadm.TopicsSet{}
	for topic, parts := range resps {
		for p := range parts {
			set.Add(topic, p)
		}
	}
	return set
}

func setupOffsetsCommit(fs *flagSet) action {
	group := fs.String("group", "", "`GROUP` to commit for")
	input := fs.String("input-json", "", "`FILE` of offsets (JSON or CSV from offsets get; - for stdin)")
	return func(inv *invocation) error {
		if *group == "" {
			return usagef("--group is required")
		}
		if *input == "" {
			return usagef("--input-json is required")
		}
		entries, err := readOffsetFile("--input-json", *input)
		if err != nil {
			return err
		}
		return inv.commit(*group, entries)
	}
}

// commit commits entries for group and prints each partition's result; any
// failed partition fails the command.
func (inv *invocation) commit(group string, entries []offsetEntry) error {
	adm, err := inv.admin()
	if err != nil {
		return err
	}
	offsets := kadm.Offsets{}
	for _, e := range entries {
		offsets.Add(kadm.Offset{Topic: e.Topic, Partition: e.Partition, At: e.Offset, LeaderEpoch: e.LeaderEpoch, Metadata: e.Metadata})
	}
	resps, err := adm.CommitOffsets(inv.ctx, group, offsets)
	if err != nil {
		return inv.failed("commit offsets of group "+group, err)
	}
	t := &tabular{columns: []string{"topic", "partition", "offset", "result"}}
	var failed []string
	for _, e := range sortEntries(entries) {
		result := "committed"
		r, ok := resps.Lookup(e.Topic, e.Partition)
		switch {
		case !ok:
			result = "no answer from the broker"
		case r.Err != nil:
			result = r.Err.Error()
		}
		if result != "committed" {
			failed = append(failed, fmt.Sprintf("commit %s/%d: %s", e.Topic, e.Partition, result))
		}
		t.add(e.Topic, itoa(e.Partition), itoa(e.Offset), result)
	}
	if err := t.writeTable(inv.stdout); err != nil {
		return err
	}
	return joinFailures("partitions", failed)
}

// sortEntries returns entries sorted by topic, then partition.
func sortEntries(entries []offsetEntry) []offsetEntry {
	out := append([]offsetEntry(nil), entries...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}
