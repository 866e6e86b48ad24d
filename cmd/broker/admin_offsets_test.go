package main

// offsets get and commit round trips, against Sediment and kfake: the
// JSON and the CSV that `offsets get` prints are what `offsets commit
// --input-json` reads, into another group or back into the same one
// after its offsets moved; each partition's result is reported and one
// failed partition fails the command without holding back the others.

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestAdminOffsetsRoundTrip(t *testing.T) {
	for _, c := range adminClusters(t) {
		t.Run(c.name, func(t *testing.T) { offsetsRoundTrip(t, c) })
	}
}

func offsetsRoundTrip(t *testing.T, c *adminCluster) {
	adm := kadmFor(t, c.addr)
	c.must(t, "topics", "create", "--topic", "ledger", "--partitions", "3")
	for p, n := range []int{4, 7, 2} {
		produceTo(t, c.addr, "ledger", int32(p), n, time.Time{})
	}
	consumeAndCommit(t, c.addr, "src", 13, "ledger")
	c.must(t, "groups", "reset-offsets", "--group", "src", "--topic", "ledger:1", "--to-offset", "5", "--execute")
	want := map[string]int64{"ledger/0": 4, "ledger/1": 5, "ledger/2": 2}
	if got := committed(t, adm, "src"); !reflect.DeepEqual(got, want) {
		t.Fatalf("src commits %v, want %v", got, want)
	}
	dir := t.TempDir()
	for _, format := range []string{"json", "csv"} {
		export := c.must(t, "offsets", "get", "--group", "src", "--output", format)
		file := writeFile(t, dir, "src."+format, export)

		dst := "dst-" + format
		out := c.must(t, "offsets", "commit", "--group", dst, "--input-json", file)
		if n := strings.Count(out, "committed"); n != 3 {
			t.Errorf("commit of %s: %d partitions reported committed, want 3:\n%s", format, n, out)
		}
		if got := committed(t, adm, dst); !reflect.DeepEqual(got, want) {
			t.Errorf("%s after commit of the %s export: %v, want %v", dst, format, got, want)
		}
		if again := c.must(t, "offsets", "get", "--group", dst, "--output", format); again != export {
			t.Errorf("offsets get of %s differs from the %s it was committed from:\n%s\nwant:\n%s", dst, format, again, export)
		}

		c.must(t, "groups", "reset-offsets", "--group", "src", "--all-topics", "--to-earliest", "--execute")
		c.must(t, "offsets", "commit", "--group", "src", "--input-json", file)
		if got := committed(t, adm, "src"); !reflect.DeepEqual(got, want) {
			t.Errorf("src after re-importing its %s export: %v, want %v", format, got, want)
		}
	}

	mixed := writeFile(t, dir, "mixed.json", `[{"topic":"ledger","partition":0,"offset":1},{"topic":"ledger","partition":9,"offset":1}]`)
	r := c.cli(t, "offsets", "commit", "--group", "mixed", "--input-json", mixed)
	if r.code != 1 || !strings.Contains(r.stdout, "committed") || !strings.Contains(r.stdout, "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Errorf("commit with one unknown partition: exit %d, stdout:\n%s; want 1, one committed, one UNKNOWN_TOPIC_OR_PARTITION", r.code, r.stdout)
	}
	if got := committed(t, adm, "mixed"); !reflect.DeepEqual(got, map[string]int64{"ledger/0": 1}) {
		t.Errorf("mixed after the partly failed commit: %v, want ledger/0 at 1", got)
	}
	// Deleting a topic deletes the groups' offsets in it, as Kafka does.
	c.must(t, "topics", "delete", "--topic", "ledger")
	if out := c.must(t, "offsets", "get", "--group", "src", "--output", "json"); out != "[]\n" {
		t.Errorf("offsets of src after its topic was deleted: %q, want []", out)
	}
	r = c.cli(t, "groups", "reset-offsets", "--group", "src", "--all-topics", "--to-earliest")
	if r.code != 1 || !strings.Contains(r.stderr, "group src has no committed offsets") {
		t.Errorf("reset --all-topics of a group without offsets: exit %d, stderr %q", r.code, r.stderr)
	}
	r = c.cli(t, "groups", "reset-offsets", "--group", "src", "--topic", "ledger", "--to-earliest")
	if r.code != 1 || !strings.Contains(r.stderr, "no such topic: ledger") {
		t.Errorf("reset of a deleted topic: exit %d, stderr %q", r.code, r.stderr)
	}
	bad := writeFile(t, dir, "bad.json", `[{"topic":"ledger","partition":0,"ofset":1}]`)
	if r := c.cli(t, "offsets", "commit", "--group", "mixed", "--input-json", bad); r.code != 2 || !strings.Contains(r.stderr, "--input-json") {
		t.Errorf("commit of a misspelt file: exit %d, stderr %q; want 2 naming --input-json", r.code, r.stderr)
	}
}
