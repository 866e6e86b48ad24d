package admin

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// offsetEntry is one line of an offsets file: what `offsets get` writes and
// `offsets commit --input-json` and `groups reset-offsets --from-file`
// read. JSON is an array of these objects; CSV has a header naming the
// columns (topic, partition and offset required; leader_epoch and metadata
// optional), or no header and the columns topic,partition,offset as
// Kafka's kafka-consumer-groups.sh writes them. A reset plan (the JSON or
// CSV of a reset-offsets dry run) reads too: its new_offset is the offset,
// and its group, current_offset and delta are ignored.
type offsetEntry struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	Offset      int64  `json:"offset"`
	LeaderEpoch int32  `json:"leader_epoch"`
	Metadata    string `json:"metadata"`
}

// offsetColumns are the CSV columns of an offsets file, in order.
var offsetColumns = []string{"topic", "partition", "offset", "leader_epoch", "metadata"}

// planColumns are the further CSV columns of a reset plan; new_offset is
// read as offset, the others are ignored.
var planColumns = []string{"group", "current_offset", "new_offset", "delta"}

// readOffsetFile reads an offsets file ("-" is stdin) in JSON or CSV,
// whichever its first character says. Errors name flag, the file and the
// entry, and are usage errors: the input is wrong, not the cluster.
func readOffsetFile(flag, path string) ([]offsetEntry, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, usagef("%s: %v", flag, err)
	}
	trimmed := bytes.TrimSpace(data)
	var entries []offsetEntry
	if len(trimmed) > 0 && trimmed[0] == '[' {
		entries, err = parseOffsetJSON(trimmed)
	} else {
		entries, err = parseOffsetCSV(data)
	}
	if err == nil {
		err = checkEntries(entries)
	}
	if err != nil {
		return nil, usagef("%s %s: %v", flag, path, err)
	}
	return entries, nil
}

// parseOffsetJSON decodes an array of entries. Unknown fields are refused
// (a misspelt "ofset" must not become offset 0), and topic, partition and
// offset are required.
func parseOffsetJSON(data []byte) ([]offsetEntry, error) {
	type rawEntry struct {
		Topic       *string `json:"topic"`
		Partition   *int32  `json:"partition"`
		Offset      *int64  `json:"offset"`
		LeaderEpoch *int32  `json:"leader_epoch"`
		Metadata    string  `json:"metadata"`
		// A reset plan's fields.
		NewOffset     *int64          `json:"new_offset"`
		Group         json.RawMessage `json:"group"`
		CurrentOffset json.RawMessage `json:"current_offset"`
		Delta         json.RawMessage `json:"delta"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var raw []rawEntry
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a JSON array of {topic, partition, offset}: %w", err)
	}
	entries := make([]offsetEntry, 0, len(raw))
	for i, r := range raw {
		if r.Offset != nil && r.NewOffset != nil {
			return nil, fmt.Errorf("entry %d: both offset and new_offset", i+1)
		}
		if r.Offset == nil {
			r.Offset = r.NewOffset
		}
		if r.Topic == nil || r.Partition == nil || r.Offset == nil {
			return nil, fmt.Errorf("entry %d: topic, partition and offset are required", i+1)
		}
		e := offsetEntry{Topic: *r.Topic, Partition: *r.Partition, Offset: *r.Offset, LeaderEpoch: -1, Metadata: r.Metadata}
		if r.LeaderEpoch != nil {
			e.LeaderEpoch = *r.LeaderEpoch
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// parseOffsetCSV decodes CSV with or without a header line.
func parseOffsetCSV(data []byte) ([]offsetEntry, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("not CSV: %w", err)
	}
	if len(records) == 0 {
		return nil, nil
	}
	cols, first := []string{"topic", "partition", "offset"}, 0
	if indexFold(records[0], "topic") >= 0 {
		cols, first = records[0], 1
	}
	index, err := csvColumns(cols)
	if err != nil {
		return nil, err
	}
	for _, c := range offsetColumns[:3] {
		if _, ok := index[c]; !ok {
			return nil, fmt.Errorf("line 1: column %q is missing", c)
		}
	}
	var entries []offsetEntry
	for i, rec := range records[first:] {
		e, err := csvEntry(rec, index)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", first+i+1, err)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// csvColumns maps the header's column names to their indexes; a plan's
// new_offset stands for offset.
func csvColumns(cols []string) (map[string]int, error) {
	index := map[string]int{}
	for i, c := range cols {
		c = strings.ToLower(strings.TrimSpace(c))
		switch {
		case indexFold(planColumns, c) >= 0:
			if c != "new_offset" {
				continue
			}
			c = "offset"
		case indexFold(offsetColumns, c) < 0:
			return nil, fmt.Errorf("line 1: unknown column %q (want %s)", c, strings.Join(offsetColumns, ","))
		}
		if _, dup := index[c]; dup {
			return nil, fmt.Errorf("line 1: column %q appears twice", c)
		}
		index[c] = i
	}
	return index, nil
}

func csvEntry(rec []string, index map[string]int) (offsetEntry, error) {
	field := func(c string) (string, bool) {
		i, ok := index[c]
		if !ok || i >= len(rec) {
			return "", false
		}
		return strings.TrimSpace(rec[i]), true
	}
	e := offsetEntry{LeaderEpoch: -1}
	e.Topic, _ = field("topic")
	p, _ := field("partition")
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		return e, fmt.Errorf("partition %q is not a number", p)
	}
	e.Partition = int32(n)
	o, _ := field("offset")
	if e.Offset, err = strconv.ParseInt(o, 10, 64); err != nil {
		return e, fmt.Errorf("offset %q is not a number", o)
	}
	if le, ok := field("leader_epoch"); ok && le != "" {
		n, err := strconv.ParseInt(le, 10, 32)
		if err != nil {
			return e, fmt.Errorf("leader_epoch %q is not a number", le)
		}
		e.LeaderEpoch = int32(n)
	}
	e.Metadata, _ = field("metadata")
	return e, nil
}

// checkEntries refuses entries no commit could mean: an empty topic, a
// negative partition or offset, or a partition named twice.
func checkEntries(entries []offsetEntry) error {
	if len(entries) == 0 {
		return errors.New("no offsets in the file")
	}
	seen := map[topicPartition]bool{}
	for i, e := range entries {
		tp := topicPartition{e.Topic, e.Partition}
		switch {
		case e.Topic == "":
			return fmt.Errorf("entry %d: empty topic", i+1)
		case e.Partition < 0:
			return fmt.Errorf("entry %d: partition %d is negative", i+1, e.Partition)
		case e.Offset < 0:
			return fmt.Errorf("entry %d (%s/%d): offset %d is negative", i+1, e.Topic, e.Partition, e.Offset)
		case seen[tp]:
			return fmt.Errorf("entry %d: %s/%d appears twice", i+1, e.Topic, e.Partition)
		}
		seen[tp] = true
	}
	return nil
}
