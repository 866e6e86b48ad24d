package objectstoretest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// orderKeys are in lexical order, which is not the order of a directory
// walk: '-' and '.' sort before '/', and "a/b" is both an object and a
// prefix of others.
var orderKeys = []string{"a-b", "a-b/x", "a.b", "a/b", "a/b/c", "a/b0", "a0", "ab"}

// flatKeys are in lexical order too, '-' and '.' before '/' before '0',
// but no key continues another past a slash.
var flatKeys = []string{"a-b", "a-c/x", "a.b", "a/b", "a/b0", "a/d/e", "a/d0", "a0", "ab"}

// testListOrder: List reports every object once, in lexical key order, with
// the size and ETag of Stat.
func testListOrder(t *testing.T, s objectstore.Store, prefix string) {
	listOrder(t, s, prefix, orderKeys)
}

// testListOrderFlat is testListOrder without nested objects.
func testListOrderFlat(t *testing.T, s objectstore.Store, prefix string) {
	listOrder(t, s, prefix, flatKeys)
}

func listOrder(t *testing.T, s objectstore.Store, prefix string, orderKeys []string) {
	etags := map[string]string{}
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(len(orderKeys)) { // not in order
		key := prefix + orderKeys[i]
		etags[key] = mustPut(t, s, key, []byte(key))
	}
	var got []objectstore.Info
	err := s.List(t.Context(), prefix, "", func(info objectstore.Info) bool {
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
	listAfter(t, s, prefix, keys)
}

// listAfter: a listing that starts after a key (an object's, or one
// between objects, or a prefix of some) returns exactly the keys sorting
// after it, in order.
func listAfter(t *testing.T, s objectstore.Store, prefix string, keys []string) {
	afters := append([]string{prefix, prefix + "a/", prefix + "a/b/", prefix + "a/c", prefix + "zz"}, keys...)
	for _, after := range afters {
		var got []string
		err := s.List(t.Context(), prefix, after, func(info objectstore.Info) bool {
			got = append(got, info.Key)
			return true
		})
		if err != nil {
			t.Fatalf("List after %q: %v", after, err)
		}
		want := slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k <= after })
		if !slices.Equal(got, want) {
			t.Errorf("List after %q:\n got %q\nwant %q", after, got, want)
		}
	}
}

// prefixCase is a List prefix and the keys it must return.
type prefixCase struct {
	prefix string
	want   []string
}

// testListPrefixes: a prefix may end anywhere, inside a segment or not.
func testListPrefixes(t *testing.T, s objectstore.Store, prefix string) {
	listPrefixes(t, s, prefix, orderKeys, []prefixCase{
		{"a", orderKeys},
		{"a/", []string{"a/b", "a/b/c", "a/b0"}},
		{"a/b", []string{"a/b", "a/b/c", "a/b0"}},
		{"a/b/", []string{"a/b/c"}},
		{"a-", []string{"a-b", "a-b/x"}},
		{"a.", []string{"a.b"}},
		{"ab", []string{"ab"}},
		{"a/b/c/", nil},
		{"zz", nil},
	})
}

// testListPrefixesFlat is testListPrefixes without nested objects.
func testListPrefixesFlat(t *testing.T, s objectstore.Store, prefix string) {
	listPrefixes(t, s, prefix, flatKeys, []prefixCase{
		{"a", flatKeys},
		{"a/", []string{"a/b", "a/b0", "a/d/e", "a/d0"}},
		{"a/b", []string{"a/b", "a/b0"}},
		{"a/d", []string{"a/d/e", "a/d0"}},
		{"a/d/", []string{"a/d/e"}},
		{"a-", []string{"a-b", "a-c/x"}},
		{"a.", []string{"a.b"}},
		{"ab", []string{"ab"}},
		{"a/b/", nil},
		{"zz", nil},
	})
}

func listPrefixes(t *testing.T, s objectstore.Store, prefix string, keys []string, cases []prefixCase) {
	for _, k := range keys {
		mustPut(t, s, prefix+k, nil)
	}
	for _, c := range cases {
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
	err := s.List(t.Context(), prefix, "", func(objectstore.Info) bool {
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
