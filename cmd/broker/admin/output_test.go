package admin

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTableAlignment: columns start at the same place on every line, empty
// cells print "-", headers are upper case with dashes.
func TestTableAlignment(t *testing.T) {
	tb := &tabular{columns: []string{"topic", "current_offset", "x"}}
	tb.add("a", "1234567", "")
	tb.add("a-much-longer-topic", "", "z")
	var b bytes.Buffer
	if err := tb.writeTable(&b); err != nil {
		t.Fatal(err)
	}
	want := "TOPIC                CURRENT-OFFSET  X\n" +
		"a                    1234567         -\n" +
		"a-much-longer-topic  -               z\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := tb.writeCSV(&b); err != nil {
		t.Fatal(err)
	}
	if want := "topic,current_offset,x\na,1234567,\na-much-longer-topic,,z\n"; b.String() != want {
		t.Errorf("csv:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestTableStatusSection: the sediment.table.status.* entries of a table
// topic go to a "Table" section (table_status in JSON), not to the
// configs; a topic without them has no such section.
func TestTableStatusSection(t *testing.T) {
	str := func(s string) *string { return &s }
	detail := kadm.TopicDetail{Topic: "clicks", Partitions: kadm.PartitionDetails{0: {Topic: "clicks", Partition: 0, Leader: 0, Replicas: []int32{0}, ISR: []int32{0}}}}
	configs := []kadm.Config{
		{Key: "sediment.table.enable", Value: str("true"), Source: kmsg.ConfigSourceDynamicTopicConfig},
		{Key: "retention.ms", Value: str("604800000"), Source: kmsg.ConfigSourceDefaultConfig},
		{Key: "sediment.table.status.last-commit", Value: str("2024-05-01T00:00:00Z"), Source: kmsg.ConfigSourceDefaultConfig},
		{Key: "sediment.table.status.lag", Value: str("12"), Source: kmsg.ConfigSourceDefaultConfig},
	}
	d := describeTopic(detail, nil, nil, configs, false)
	if len(d.Configs) != 1 || d.Configs["sediment.table.enable"] != "true" {
		t.Errorf("configs %v; want only sediment.table.enable", d.Configs)
	}
	if len(d.TableStatus) != 2 || d.TableStatus["lag"] != "12" {
		t.Errorf("table status %v; want lag and last-commit", d.TableStatus)
	}
	var b bytes.Buffer
	if err := topicText([]topicDescription{d})(&b); err != nil {
		t.Fatal(err)
	}
	want := "\nTable:\nSTATUS       VALUE\nlast-commit  2024-05-01T00:00:00Z\nlag          12\n" // the broker's order
	if !strings.HasSuffix(b.String(), want) {
		t.Errorf("text:\n%s\nwant it to end with:\n%s", b.String(), want)
	}
	b.Reset()
	if err := writeJSON(&b, d); err != nil || !strings.Contains(b.String(), `"table_status": {`) {
		t.Errorf("json %s (%v); want a table_status object", b.String(), err)
	}
	plain := describeTopic(detail, nil, nil, configs[1:2], true)
	if plain.TableStatus != nil || plain.Configs["retention.ms"] != "604800000" {
		t.Errorf("plain topic with --all-configs: %+v", plain)
	}
	b.Reset()
	_ = topicText([]topicDescription{plain})(&b)
	if strings.Contains(b.String(), "Table:") {
		t.Errorf("a topic without status entries printed a Table section:\n%s", b.String())
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"24h": 24 * time.Hour, "36h30m": 36*time.Hour + 30*time.Minute, "P1D": 24 * time.Hour,
		"PT30M": 30 * time.Minute, "P1DT12H": 36 * time.Hour, "PT1.5S": 1500 * time.Millisecond, "p2dt1h1m1s": 49*time.Hour + time.Minute + time.Second,
	} {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "P", "PT", "1d", "-5m", "0s", "P-1D", "forever"} {
		if _, err := parseDuration(in); err == nil {
			t.Errorf("parseDuration(%q) accepted", in)
		}
	}
}

func TestParseScope(t *testing.T) {
	got, err := parseScope([]string{"a:1", "b:2,0", "a", "b:3"})
	want := topicScope{"a": nil, "b": {2, 0, 3}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("parseScope = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"", ":1", "a:", "a:1,,2", "a:x", "a:-1", "a:99999999999"} {
		if _, err := parseScope([]string{bad}); err == nil {
			t.Errorf("parseScope(%q) accepted", bad)
		}
	}
}
