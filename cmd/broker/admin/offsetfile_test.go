package admin

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadOffsetFile: the JSON and CSV of offsets get, and Kafka's
// headerless CSV, read to the same entries; bad files are usage errors
// naming the flag, the file and the entry.
func TestReadOffsetFile(t *testing.T) {
	want := []offsetEntry{
		{Topic: "orders", Partition: 0, Offset: 5, LeaderEpoch: 3, Metadata: "m,1"},
		{Topic: "orders", Partition: 1, Offset: 0, LeaderEpoch: -1},
	}
	noEpoch := []offsetEntry{{Topic: "orders", Partition: 0, Offset: 5, LeaderEpoch: -1}, {Topic: "orders", Partition: 1, Offset: 0, LeaderEpoch: -1}}
	for _, tc := range []struct {
		name, content string
		want          []offsetEntry
	}{
		{"get.json", `[{"topic":"orders","partition":0,"offset":5,"leader_epoch":3,"metadata":"m,1"},{"topic":"orders","partition":1,"offset":0}]`, want},
		{"get.csv", "topic,partition,offset,leader_epoch,metadata\norders,0,5,3,\"m,1\"\norders,1,0,-1,\n", want},
		{"reordered.csv", "offset,topic,partition\n5,orders,0\n0,orders,1\n", noEpoch},
		{"kafka.csv", "orders,0,5\norders,1,0\n", noEpoch},
		{"plan.json", `[{"group":"g","topic":"orders","partition":0,"current_offset":null,"new_offset":5,"delta":null},{"group":"g","topic":"orders","partition":1,"current_offset":3,"new_offset":0,"delta":-3}]`, noEpoch},
		{"plan.csv", "group,topic,partition,current_offset,new_offset,delta\ng,orders,0,,5,\ng,orders,1,3,0,-3\n", noEpoch},
		{"spaced.json", "\n  [ {\"topic\":\"orders\",\"partition\":0,\"offset\":5}, {\"topic\":\"orders\",\"partition\":1,\"offset\":0} ]\n", noEpoch},
	} {
		got, err := readOffsetFile("--input-json", writeTemp(t, tc.name, tc.content))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ name, content, want string }{
		{"empty.json", "[]", "no offsets"},
		{"empty.csv", "", "no offsets"},
		{"typo.json", `[{"topic":"a","partition":0,"ofset":1}]`, `unknown field "ofset"`},
		{"missing.json", `[{"topic":"a","partition":0}]`, "entry 1: topic, partition and offset are required"},
		{"object.json", `{"topic":"a"}`, "line 1"},
		{"negative.json", `[{"topic":"a","partition":0,"offset":-1}]`, "offset -1 is negative"},
		{"twice.csv", "a,0,1\na,0,2\n", "entry 2: a/0 appears twice"},
		{"words.csv", "topic,partition,offset\na,zero,1\n", `line 2: partition "zero" is not a number`},
		{"column.csv", "topic,partition,offset,owner\na,0,1,g\n", `unknown column "owner"`},
		{"both.json", `[{"topic":"a","partition":0,"offset":1,"new_offset":2}]`, "both offset and new_offset"},
		{"both.csv", "topic,partition,offset,new_offset\na,0,1,2\n", `column "offset" appears twice`},
		{"nooffset.csv", "topic,partition\na,0\n", `column "offset" is missing`},
		{"notopic.csv", ",0,1\n", "empty topic"},
	} {
		_, err := readOffsetFile("--input-json", writeTemp(t, tc.name, tc.content))
		var ue *usageError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--input-json") || !asUsage(err, &ue) {
			t.Errorf("%s: error %v; want a usage error naming --input-json and containing %q", tc.name, err, tc.want)
		}
	}
}

func asUsage(err error, ue **usageError) bool {
	u, ok := err.(*usageError)
	*ue = u
	return ok
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
