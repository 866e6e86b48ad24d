//go:build interop

package main

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestInteropKafkaToolsResetOffsets: kafka-consumer-groups --reset-offsets
// in every mode, as a dry run compared with `broker groups reset-offsets`'s
// plan for the same target, then executed, and the plan Kafka's tool
// exports read back by the broker's CLI.
func TestInteropKafkaToolsResetOffsets(t *testing.T) {
	addr := toolsCluster(t)
	const topic, group = "tools-reset", "tools-resetters"
	createTopics(t, addr, topic, 2)
	// Ten records per partition, 20 minutes apart, the last 20 minutes
	// ago (--by-duration keeps ten minutes of slack for a slow run);
	// partition 1 then loses its first two to DeleteRecords.
	base := time.Now().Add(-200 * time.Minute)
	for p := range int32(2) {
		produceSpread(t, addr, topic, p, base, 10, 20*time.Minute)
	}
	adm := kadmFor(t, addr)
	deleteRecordsTo(t, adm, topic, 1, 2)
	commitOffsets(t, adm, group, topic, map[int32]int64{0: 5, 1: 5})

	at := base.Add(70 * time.Minute) // between records 3 and 4
	for _, tc := range []struct {
		name      string
		tool, cli []string
		want      map[string]int64
	}{
		{"to-earliest", []string{"--to-earliest"}, []string{"--to-earliest"}, map[string]int64{"0": 0, "1": 2}},
		{"to-latest", []string{"--to-latest"}, []string{"--to-latest"}, map[string]int64{"0": 10, "1": 10}},
		{"to-offset", []string{"--to-offset", "3"}, []string{"--to-offset", "3"}, map[string]int64{"0": 3, "1": 3}},
		{"to-offset beyond the log", []string{"--to-offset", "100"}, []string{"--to-offset", "100"}, map[string]int64{"0": 10, "1": 10}},
		{"shift-by back", []string{"--shift-by", "-4"}, []string{"--shift-by", "-4"}, map[string]int64{"0": 1, "1": 2}},
		{"shift-by forward", []string{"--shift-by", "3"}, []string{"--shift-by", "3"}, map[string]int64{"0": 8, "1": 8}},
		{"to-datetime", []string{"--to-datetime", at.UTC().Format("2006-01-02T15:04:05.000Z")}, []string{"--to-datetime", at.UTC().Format(time.RFC3339Nano)}, map[string]int64{"0": 4, "1": 4}},
		{"by-duration", []string{"--by-duration", "PT150M"}, []string{"--by-duration", "150m"}, map[string]int64{"0": 3, "1": 3}},
		{"by-duration before the log", []string{"--by-duration", "P1D"}, []string{"--by-duration", "24h"}, map[string]int64{"0": 0, "1": 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]int64{}
			for p, off := range tc.want {
				want[topic+"/"+p] = off
			}
			toolArgs := append([]string{"--reset-offsets", "--group", group, "--topic", topic, "--dry-run"}, tc.tool...)
			got := toolPlan(t, mustKafkaTool(t, addr, kafkaConsumerGroups, toolArgs...))
			cli := resetPlanCLI(t, addr, append([]string{"--group", group, "--topic", topic}, tc.cli...)...)
			if !maps.Equal(got, want) || !maps.Equal(cli, want) {
				t.Errorf("kafka-consumer-groups %v planned %v, broker groups reset-offsets %v, want %v", tc.tool, got, cli, want)
			}
			if c := committed(t, adm, group); c[topic+"/0"] != 5 || c[topic+"/1"] != 5 {
				t.Errorf("a dry run changed the commits: %v", c)
			}
		})
	}

	// --execute commits; --all-topics takes the group's partitions.
	out := mustKafkaTool(t, addr, kafkaConsumerGroups, "--reset-offsets", "--group", group, "--topic", topic+":1", "--to-offset", "7", "--execute")
	if got := toolPlan(t, out); !maps.Equal(got, map[string]int64{topic + "/1": 7}) {
		t.Errorf("--execute --to-offset 7 on partition 1 printed %v", got)
	}
	checkCommitted(t, addr, adm, group, topic, map[int32]int64{0: 5, 1: 7})
	mustKafkaTool(t, addr, kafkaConsumerGroups, "--reset-offsets", "--group", group, "--all-topics", "--shift-by", "-1", "--execute")
	checkCommitted(t, addr, adm, group, topic, map[int32]int64{0: 4, 1: 6})

	// Kafka's --export writes topic,partition,offset lines; the broker's
	// CLI reads them as a plan, and Kafka's --from-file reads them back.
	exported := mustKafkaTool(t, addr, kafkaConsumerGroups, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--dry-run", "--export")
	plan := filepath.Join(t.TempDir(), "plan.csv")
	if err := os.WriteFile(plan, []byte(exported), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{topic + "/0": 0, topic + "/1": 2}
	if got := resetPlanCLI(t, addr, "--group", group, "--from-file", plan); !maps.Equal(got, want) {
		t.Errorf("broker reset-offsets --from-file of Kafka's export %q: %v, want %v", exported, got, want)
	}
	mustKafkaTool(t, addr, kafkaConsumerGroups, "--reset-offsets", "--group", group, "--from-file", plan, "--execute")
	checkCommitted(t, addr, adm, group, topic, map[int32]int64{0: 0, 1: 2})
}

// produceSpread writes n records to one partition in one batch, their
// timestamps step apart from first.
func produceSpread(t *testing.T, addr, topic string, partition int32, first time.Time, n int, step time.Duration) {
	t.Helper()
	var ts []time.Time
	for i := range n {
		ts = append(ts, first.Add(time.Duration(i)*step))
	}
	produceAt(t, addr, topic, partition, ts...)
}

// produceAt writes one record per timestamp to one partition, in one
// batch; record i's value is i.
func produceAt(t *testing.T, addr, topic string, partition int32, ts ...time.Time) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i, at := range ts {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: partition, Value: []byte(strconv.Itoa(i)), Timestamp: at})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s/%d: %v", topic, partition, err)
	}
}

// deleteRecordsTo moves a partition's log start offset to offset.
func deleteRecordsTo(t *testing.T, adm *kadm.Client, topic string, partition int32, offset int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var o kadm.Offsets
	o.AddOffset(topic, partition, offset, -1)
	resps, err := adm.DeleteRecords(ctx, o)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Fatalf("delete records of %s/%d to %d: %v", topic, partition, offset, err)
	}
}

// commitOffsets commits offsets for group as an admin does (no member).
func commitOffsets(t *testing.T, adm *kadm.Client, group, topic string, offsets map[int32]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var o kadm.Offsets
	for p, off := range offsets {
		o.AddOffset(topic, p, off, -1)
	}
	resps, err := adm.CommitOffsets(ctx, group, o)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Fatalf("commit %v for %s: %v", offsets, group, err)
	}
}

// checkCommitted compares a group's commits with want, through OffsetFetch
// and through `broker groups describe`.
func checkCommitted(t *testing.T, addr string, adm *kadm.Client, group, topic string, want map[int32]int64) {
	t.Helper()
	wantKeys := map[string]int64{}
	for p, off := range want {
		wantKeys[topic+"/"+strconv.Itoa(int(p))] = off
	}
	cli := map[string]int64{}
	for key, o := range groupOffsetsCLI(t, addr, group) {
		if o.CurrentOffset != nil {
			cli[key] = *o.CurrentOffset
		}
	}
	if got := committed(t, adm, group); !maps.Equal(got, wantKeys) || !maps.Equal(cli, wantKeys) {
		t.Errorf("%s commits: OffsetFetch %v, broker groups describe %v, want %v", group, got, cli, wantKeys)
	}
}
