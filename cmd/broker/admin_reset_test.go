package main

// reset-offsets in every mode, checked through OffsetFetch after
// --execute, against Sediment and kfake: the dry run changes nothing,
// targets are clamped with a warning per partition, and --execute is
// refused while the group has an active member. Then the other group
// writes: delete-offsets and delete, refused while the member is live.

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

func TestAdminResetOffsets(t *testing.T) {
	for _, c := range adminClusters(t) {
		t.Run(c.name, func(t *testing.T) { resetSuite(t, c) })
	}
}

// resetStep is one reset-offsets run and the committed offsets after it.
type resetStep struct {
	args     []string
	want     map[string]int64 // committed offsets afterwards, events/P -> offset
	warnings int              // clamped partitions
}

func resetSuite(t *testing.T, c *adminCluster) {
	adm := kadmFor(t, c.addr)
	now := time.Now()
	fillEvents(t, c, adm, now)
	consumeAndCommit(t, c.addr, "r", 18, "events")
	offsets := func(p0, p1 int64) map[string]int64 { return map[string]int64{"events/0": p0, "events/1": p1} }
	if got := committed(t, adm, "r"); !reflect.DeepEqual(got, offsets(10, 10)) {
		t.Fatalf("initial commits %v, want %v", got, offsets(10, 10))
	}
	dir := t.TempDir()
	jsonFile := writeFile(t, dir, "plan.json", `[{"topic":"events","partition":0,"offset":7},{"topic":"events","partition":1,"offset":4}]`)
	kafkaCSV := writeFile(t, dir, "plan.csv", "events,0,6\nevents,1,9\n")
	day := now.Add(-24 * time.Hour).UTC().Format(time.RFC3339)
	base := []string{"groups", "reset-offsets", "--group", "r"}
	for _, s := range []resetStep{
		{[]string{"--topic", "events", "--to-earliest"}, offsets(10, 10), 0}, // dry run
		{[]string{"--topic", "events", "--to-earliest", "--dry-run"}, offsets(10, 10), 0},
		{[]string{"--topic", "events", "--to-earliest", "--execute"}, offsets(0, 2), 0},
		{[]string{"--topic", "events", "--to-latest", "--execute"}, offsets(10, 10), 0},
		{[]string{"--topic", "events:0", "--to-offset", "3", "--execute"}, offsets(3, 10), 0},
		{[]string{"--topic", "events", "--shift-by", "-2", "--execute"}, offsets(1, 8), 0},
		{[]string{"--topic", "events", "--shift-by", "-5", "--execute"}, offsets(0, 3), 1},
		{[]string{"--topic", "events", "--to-offset", "100", "--execute"}, offsets(10, 10), 2},
		{[]string{"--topic", "events:1", "--to-offset", "0", "--execute"}, offsets(10, 2), 1},
		{[]string{"--topic", "events", "--to-datetime", day, "--execute"}, offsets(5, 5), 0},
		{[]string{"--all-topics", "--to-latest", "--execute"}, offsets(10, 10), 0},
		{[]string{"--topic", "events", "--by-duration", "P1D", "--execute"}, offsets(5, 5), 0},
		{[]string{"--topic", "events", "--by-duration", "30m", "--execute"}, offsets(10, 10), 0},
		{[]string{"--from-file", jsonFile, "--execute"}, offsets(7, 4), 0},
		{[]string{"--from-file", kafkaCSV, "--topic", "events:1", "--execute"}, offsets(7, 9), 0},
		{[]string{"--from-file", kafkaCSV, "--execute"}, offsets(6, 9), 0},
		{[]string{"--all-topics", "--to-earliest", "--execute"}, offsets(0, 2), 0},
	} {
		args := append(append([]string(nil), base...), s.args...)
		r := c.cli(t, args...)
		if r.code != 0 {
			t.Fatalf("broker %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		if got := committed(t, adm, "r"); !reflect.DeepEqual(got, s.want) {
			t.Errorf("after broker %s: committed %v, want %v\n%s%s", strings.Join(args, " "), got, s.want, r.stdout, r.stderr)
		}
		if n := strings.Count(r.stderr, "warning: "); n != s.warnings {
			t.Errorf("broker %s: %d clamp warnings, want %d:\n%s", strings.Join(args, " "), n, s.warnings, r.stderr)
		}
	}
	// A dry run's plan, reviewed, then executed as it is.
	plan := writeFile(t, dir, "reviewed.json", c.must(t, "groups", "reset-offsets", "--group", "r", "--topic", "events", "--to-offset", "3", "--output", "json"))
	if got := committed(t, adm, "r"); !reflect.DeepEqual(got, offsets(0, 2)) {
		t.Errorf("after the dry run: %v, want %v", got, offsets(0, 2))
	}
	c.must(t, "groups", "reset-offsets", "--group", "r", "--from-file", plan, "--execute")
	if got := committed(t, adm, "r"); !reflect.DeepEqual(got, offsets(3, 3)) {
		t.Errorf("after executing the reviewed plan: %v, want %v", got, offsets(3, 3))
	}
	c.must(t, "groups", "reset-offsets", "--group", "r", "--all-topics", "--to-earliest", "--execute") // 18 records to read again

	// A group the cluster does not know yet: the commit creates it.
	c.must(t, "groups", "reset-offsets", "--group", "fresh", "--topic", "events", "--to-offset", "4", "--execute")
	if got := committed(t, adm, "fresh"); !reflect.DeepEqual(got, offsets(4, 4)) {
		t.Errorf("fresh after reset: %v, want %v", got, offsets(4, 4))
	}
	refusedWhileActive(t, c, adm)
}

// fillEvents makes topic events: on each of its 2 partitions 5 records
// two days old, then 5 an hour old; the records before offset 2 of
// partition 1 are deleted, so its log starts at 2.
func fillEvents(t *testing.T, c *adminCluster, adm *kadm.Client, now time.Time) {
	t.Helper()
	c.must(t, "topics", "create", "--topic", "events", "--partitions", "2")
	for p := int32(0); p < 2; p++ {
		produceTo(t, c.addr, "events", p, 5, now.Add(-48*time.Hour))
		produceTo(t, c.addr, "events", p, 5, now.Add(-time.Hour))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	del := kadm.Offsets{}
	del.AddOffset("events", 1, 2, -1)
	resps, err := adm.DeleteRecords(ctx, del)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		t.Fatalf("delete records: %v", err)
	}
}

// refusedWhileActive: with a live member in r, --execute, groups delete,
// a commit and delete-offsets of its topic are refused and change
// nothing; a dry run still plans. Once it leaves, delete-offsets and
// delete work.
func refusedWhileActive(t *testing.T, c *adminCluster, adm *kadm.Client) {
	m := startActiveMember(t, c.addr, "r", "events", "live", 18)
	before := committed(t, adm, "r")
	r := c.cli(t, "groups", "reset-offsets", "--group", "r", "--topic", "events", "--to-earliest", "--execute")
	if r.code != 1 || !strings.Contains(r.stderr, "1 active member(s)") || r.stdout != "" {
		t.Errorf("reset --execute on an active group: exit %d, stdout %q, stderr %q; want exit 1 naming the active member", r.code, r.stdout, r.stderr)
	}
	if r := c.cli(t, "groups", "reset-offsets", "--group", "r", "--topic", "events", "--to-earliest"); r.code != 0 {
		t.Errorf("dry run on an active group: exit %d, %s", r.code, r.stderr)
	}
	if r := c.cli(t, "groups", "delete", "--group", "r"); r.code != 1 || !strings.Contains(r.stderr, "has active members") {
		t.Errorf("delete of an active group: exit %d, stderr %q; want 1 and 'has active members'", r.code, r.stderr)
	}
	file := writeFile(t, t.TempDir(), "o.json", `[{"topic":"events","partition":0,"offset":1}]`)
	if r := c.cli(t, "offsets", "commit", "--group", "r", "--input-json", file); r.code != 1 || !strings.Contains(r.stdout, "UNKNOWN_MEMBER_ID") {
		t.Errorf("commit to an active group: exit %d, stdout %q; want 1 and UNKNOWN_MEMBER_ID", r.code, r.stdout)
	}
	if r := c.cli(t, "groups", "delete-offsets", "--group", "r", "--topic", "events"); r.code != 1 || !strings.Contains(r.stdout, "refused") {
		t.Errorf("delete-offsets of a consumed topic: exit %d, stdout %q; want 1 and refused", r.code, r.stdout)
	}
	if got := committed(t, adm, "r"); !reflect.DeepEqual(got, before) {
		t.Errorf("refused commands changed the offsets: %v, were %v", got, before)
	}
	m.close()
	waitFor(t, "group r to be empty", func() bool {
		return strings.Contains(c.must(t, "groups", "list", "--state", "Empty"), "r ")
	})
	c.must(t, "groups", "delete-offsets", "--group", "r", "--topic", "events:0")
	if got := committed(t, adm, "r"); len(got) != 1 || got["events/1"] != before["events/1"] {
		t.Errorf("after delete-offsets of events:0: %v, want only events/1", got)
	}
	c.must(t, "groups", "delete", "--group", "r")
	if r := c.cli(t, "groups", "describe", "--group", "r"); r.code != 1 || !strings.Contains(r.stderr, "no such group") {
		t.Errorf("describe after delete: exit %d, stderr %q", r.code, r.stderr)
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
