package main

// topics describe of a table topic (sediment.table.enable=true) on a real
// Sediment broker: the read-only sediment.table.status.* entries its
// DescribeConfigs answer carries appear in a "Table" section, and as the
// table_status object in JSON, not among the configs.

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAdminTableTopicStatus(t *testing.T) {
	tb := startTestBroker(t, "")
	c := &adminCluster{name: "sediment", addr: tb.addr, tokens: map[string]string{}}
	c.must(t, "topics", "create", "--topic", "clicks", "--partitions", "2", "--config", "sediment.table.enable=true")
	type described []struct {
		Configs     map[string]string `json:"configs"`
		TableStatus map[string]string `json:"table_status"`
	}
	var d described
	waitFor(t, "the table status of clicks", func() bool {
		if err := json.Unmarshal([]byte(c.must(t, "topics", "describe", "--topic", "clicks", "--output", "json")), &d); err != nil {
			t.Fatalf("topics describe --output json: %v", err)
		}
		return len(d) == 1 && d[0].TableStatus["state"] != ""
	})
	for name := range d[0].Configs {
		if strings.HasPrefix(name, "sediment.table.status.") {
			t.Errorf("status entry %s listed among the configs", name)
		}
	}
	if d[0].Configs["sediment.table.enable"] != "true" {
		t.Errorf("configs %v lack sediment.table.enable=true", d[0].Configs)
	}
	for _, key := range []string{"lag", "rows", "state"} {
		if _, ok := d[0].TableStatus[key]; !ok {
			t.Errorf("table_status %v lacks %s", d[0].TableStatus, key)
		}
	}
	text := c.must(t, "topics", "describe", "--topic", "clicks")
	if !strings.Contains(text, "\nTable:\nSTATUS ") || !strings.Contains(text, "\nstate ") {
		t.Errorf("table output has no Table section with the state:\n%s", text)
	}
	if plain := c.must(t, "topics", "describe", "--topic", "clicks", "--output", "csv"); strings.Contains(plain, "status") {
		t.Errorf("csv (one row per partition) shows status entries:\n%s", plain)
	}
}
