package main

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTableConfigValidation checks that CreateTopics and
// IncrementalAlterConfigs accept good sediment.table.* values and reject
// bad ones with INVALID_CONFIG and a message naming the config.
func TestTableConfigValidation(t *testing.T) {
	tb := startTestBroker(t, "")
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := testCtx(t, 30*time.Second)

	good := map[string]*string{
		"sediment.table.enable":             ptr("true"),
		"sediment.table.format":             ptr("json"),
		"sediment.table.partition-by":       ptr("bucket(16, id), day(_kafka_timestamp), truncate(4, name)"),
		"sediment.table.commit.interval.ms": ptr("1000"),
		"sediment.table.commit.bytes":       ptr("1048576"),
		"sediment.table.errors":             ptr("skip"),
		"sediment.table.schema":             ptr(`{"type":"struct","fields":[{"id":1,"name":"id","type":"long","required":false}]}`),
	}
	res, err := adm.CreateTopic(ctx, 1, 1, good, "tbl-good")
	if err != nil || res.Err != nil {
		t.Fatalf("create with good table configs: %v %v", err, res.Err)
	}

	bad := []struct{ name, value, says string }{
		{"sediment.table.enable", "yes", "not true or false"},
		{"sediment.table.format", "avro", "not one of"},
		{"sediment.table.commit.interval.ms", "999", "below the minimum 1000"},
		{"sediment.table.commit.bytes", "0", "below the minimum"},
		{"sediment.table.errors", "ignore", "not one of"},
		{"sediment.table.partition-by", "week(ts)", "partition field"},
		{"sediment.table.partition-by", "bucket(ts)", "needs a number"},
		{"sediment.table.partition-by", "day(3, ts)", "takes only a column"},
		{"sediment.table.schema", "{not json", "not an Iceberg schema"},
		{"sediment.table.schema", `{"type":"struct","fields":[{"id":1,"name":"_kafka_offset","type":"long"}]}`, "reserved"},
	}
	for i, b := range bad {
		topic := "tbl-bad-" + string(rune('a'+i))
		res, _ := adm.CreateTopic(ctx, 1, 1, map[string]*string{b.name: ptr(b.value)}, topic)
		checkInvalidConfig(t, "create "+b.name+"="+b.value, res.Err, res.ErrMessage, b.name, b.says)

		alter, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: b.name, Value: ptr(b.value)}}, "tbl-good")
		if err != nil {
			t.Fatalf("alter %s=%s: %v", b.name, b.value, err)
		}
		checkInvalidConfig(t, "alter "+b.name+"="+b.value, alter[0].Err, alter[0].ErrMessage, b.name, b.says)
	}

	alter, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "sediment.table.errors", Value: ptr("stop")}}, "tbl-good")
	if err != nil || alter[0].Err != nil {
		t.Fatalf("alter to a good value: %v %v", err, alter[0].Err)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, "tbl-good")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rc.On("tbl-good", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range cfg.Configs {
		got[c.Key] = c.MaybeValue()
	}
	if got["sediment.table.errors"] != "stop" || got["sediment.table.format"] != "json" || got["sediment.table.commit.bytes"] != "1048576" {
		t.Fatalf("described table configs: %v", got)
	}
}

func checkInvalidConfig(t *testing.T, what string, err error, msg, name, says string) {
	t.Helper()
	if err != kerr.InvalidConfig {
		t.Errorf("%s: error %v, want INVALID_CONFIG", what, err)
		return
	}
	if !strings.Contains(msg, name) || !strings.Contains(msg, says) {
		t.Errorf("%s: message %q does not name %s and say %q", what, msg, name, says)
	}
}
