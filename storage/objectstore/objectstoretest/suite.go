// Package objectstoretest is the conformance suite every objectstore.Store
// backend runs: one body of tests, run with t.Run against mem, localfs and a
// real MinIO, so the backends cannot drift apart.
//
// The suite asks only what the objectstore interface promises. Each subtest
// works under its own key prefix, unique to the Run call, and deletes what it
// wrote, so one store (one bucket) may serve every subtest and every run.
package objectstoretest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// test is one conformance check; keys it writes start with prefix.
type test struct {
	name string
	fn   func(t *testing.T, s objectstore.Store, prefix string)
}

// nested names the checks that store an object whose key continues another
// object's key past a slash (a/b and a/b/c); see NoNestedObjects.
var nested = map[string]bool{"nested_keys": true, "list_order": true, "list_prefixes": true}

var tests = []test{
	{"put_get", testPutGet},
	{"get_missing", testGetMissing},
	{"get_range", testGetRange},
	{"open_range", testOpenRange},
	{"put_replaces", testPutReplaces},
	{"stat", testStat},
	{"empty_object", testEmptyObject},
	{"nested_keys", testNestedKeys},
	{"deep_keys", testDeepKeys},
	{"invalid_keys", testInvalidKeys},
	{"if_absent", testIfAbsent},
	{"if_absent_race", testIfAbsentRace},
	{"if_match", testIfMatch},
	{"if_match_race", testIfMatchRace},
	{"list_order", testListOrder},
	{"list_order_flat", testListOrderFlat},
	{"list_prefixes", testListPrefixes},
	{"list_prefixes_flat", testListPrefixesFlat},
	{"list_stop", testListStop},
	{"list_many", testListMany},
	{"delete", testDelete},
	{"large_object", testLargeObject},
	{"concurrent", testConcurrent},
	{"canceled_context", testCanceledContext},
}

// Option adjusts Run to a backend's documented limits.
type Option func(*options)

type options struct{ noNested bool }

// NoNestedObjects leaves out the checks that store an object whose key
// continues another object's key past a slash (a/b and a/b/c). MinIO
// stores both but never lists the deeper one (its documented "conflicting
// objects" limit), so on MinIO such keys are not portable, and Sediment
// never writes them. The checks of ordering and prefixes that need no such
// pair run either way.
func NoNestedObjects() Option { return func(o *options) { o.noNested = true } }

// Run runs the suite as subtests of t. newStore is called once per subtest,
// with the subtest's t; it may return a fresh store or the same shared one,
// and is responsible for closing it (with t.Cleanup). Subtests run in
// parallel, and Run returns when all of them are done.
func Run(t *testing.T, newStore func(t *testing.T) objectstore.Store, opts ...Option) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	run := fmt.Sprintf("objectstoretest/%s-%08x/",
		time.Now().UTC().Format("20060102T150405"), rand.Uint32())
	t.Run("conformance", func(t *testing.T) {
		for _, tc := range tests {
			if nested[tc.name] && o.noNested {
				continue
			}
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				s := newStore(t)
				prefix := run + tc.name + "/"
				t.Cleanup(func() { deleteAll(t, s, prefix) })
				tc.fn(t, s, prefix)
			})
		}
	})
}

// deleteAll removes every object under prefix. Cleanups run last-in
// first-out, so this runs before the Close that newStore registered.
func deleteAll(t *testing.T, s objectstore.Store, prefix string) {
	ctx := context.Background()
	var keys []string
	err := s.List(ctx, prefix, "", func(info objectstore.Info) bool {
		keys = append(keys, info.Key)
		return true
	})
	if err != nil {
		t.Errorf("cleanup: list %q: %v", prefix, err)
	}
	for _, key := range keys {
		if err := s.Delete(ctx, key); err != nil {
			t.Errorf("cleanup: delete %q: %v", key, err)
		}
	}
}
