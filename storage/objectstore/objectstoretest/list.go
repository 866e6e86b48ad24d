package objectstoretest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// orderKeys are in lexical order, which is not the order of a directory
// walk: '-' and '.' sort before '/', and "a/b" is both an object and a
// prefix of others.
var orderKeys = []string{"a-b", "a-b/x", "a.b", "a/b", "a/b/c", "a/b0", "a0", "ab"}

// testListOrder: List reports every object once, in lexical key order, with
// the size and ETag of Stat.
func testListOrder(t *testing.T, s objectstore.Store, prefix string) {
	etags := map[string]string{}
	for _, i := range []int{4, 0, 7, 2, 5, 1, 6, 3} {
		key := prefix + orderKeys[i]
		etags[key] = mustPut(t, s, key, []byte(key))
	}
	var got []objectstore.Info
	err := s.List(t.Context(), prefix, func(info objectstore.Info) bool {
		got = append(got, info)
		return true
	})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var keys []string
	for _, info := range got {
		keys = append(keys, info.Key)
		if info.Size != int64(len(info.Key)) || info.ETag != etags[info.Key] {
			t.Errorf("List reported %+v, want size %d and ETag %s", info, len(info.Key), etags[info.Key])
		}
	}
	if want := withPrefix(prefix, orderKeys...); !slices.Equal(keys, want) {
		t.Errorf("List order:\n got %q\nwant %q", keys, want)
	}
}

// testListPrefixes: a prefix may end anywhere, inside a segment or not.
func testListPrefixes(t *testing.T, s objectstore.Store, prefix string) {
	for _, k := range orderKeys {
		mustPut(t, s, prefix+k, nil)
	}
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"a", orderKeys},
		{"a/", []string{"a/b", "a/b/c", "a/b0"}},
		{"a/b", []string{"a/b", "a/b/c", "a/b0"}},
		{"a/b/", []string{"a/b/c"}},
		{"a-", []string{"a-b", "a-b/x"}},
		{"a.", []string{"a.b"}},
		{"ab", []string{"ab"}},
		{"a/b/c/", nil},
		{"zz", nil},
	} {
		got := listKeys(t, s, prefix+c.prefix)
		if want := withPrefix(prefix, c.want...); !slices.Equal(got, want) {
			t.Errorf("List(%q):\n got %q\nwant %q", c.prefix, got, want)
		}
	}
}

// testListStop: List stops as soon as fn returns false.
func testListStop(t *testing.T, s objectstore.Store, prefix string) {
	for i := range 5 {
		mustPut(t, s, fmt.Sprintf("%sk%d", prefix, i), nil)
	}
	calls := 0
	err := s.List(t.Context(), prefix, func(objectstore.Info) bool {
		calls++
		return calls < 2
	})
	if err != nil || calls != 2 {
		t.Errorf("List stopping at the 2nd object: %d calls, err %v; want 2 calls, no error", calls, err)
	}
}

// testListMany: more keys than one S3 listing page (1,000) come back whole
// and in order, with and without a narrower prefix.
func testListMany(t *testing.T, s objectstore.Store, prefix string) {
	const n = 1100
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("%sk%04d", prefix, i)
	}
	putAll(t, s, want)
	if got := listKeys(t, s, prefix); !slices.Equal(got, want) {
		t.Errorf("List of %d keys: got %d keys, first difference at %d", n, len(got), firstDiff(got, want))
	}
	if got := listKeys(t, s, prefix+"k10"); !slices.Equal(got, want[1000:]) {
		t.Errorf("List(k10): got %d keys, want the last 100", len(got))
	}
}

// putAll writes small objects under keys from several goroutines.
func putAll(t *testing.T, s objectstore.Store, keys []string) {
	const workers = 16
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(keys); i += workers {
				if _, err := s.Put(t.Context(), keys[i], []byte{byte(i)}, objectstore.Condition{}); err != nil {
					t.Errorf("Put(%q): %v", keys[i], err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// firstDiff returns the first index where a and b differ.
func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
