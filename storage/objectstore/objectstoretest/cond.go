package objectstoretest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// testIfAbsent: the first IfAbsent put wins, the second loses and changes
// nothing.
func testIfAbsent(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "obj"
	ifAbsent := objectstore.Condition{IfAbsent: true}
	etag, err := s.Put(t.Context(), key, []byte("first"), ifAbsent)
	if err != nil {
		t.Fatalf("first Put IfAbsent: %v", err)
	}
	if _, err := s.Put(t.Context(), key, []byte("second"), ifAbsent); !objectstore.IsPrecondition(err) {
		t.Fatalf("second Put IfAbsent = %v, want IsPrecondition", err)
	}
	checkBytes(t, "Get after losing IfAbsent", mustGet(t, s, key), []byte("first"))
	if info := mustStat(t, s, key); info.ETag != etag {
		t.Errorf("ETag after losing IfAbsent = %s, want %s", info.ETag, etag)
	}
}

// testIfMatch: IfMatch wins with the current ETag only.
func testIfMatch(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "obj"
	e1 := mustPut(t, s, key, []byte("v1"))
	e2, err := s.Put(t.Context(), key, []byte("v2"), objectstore.Condition{IfMatch: e1})
	if err != nil {
		t.Fatalf("Put IfMatch(current): %v", err)
	}
	if _, err := s.Put(t.Context(), key, []byte("v3"), objectstore.Condition{IfMatch: e1}); !objectstore.IsPrecondition(err) {
		t.Fatalf("Put IfMatch(stale) = %v, want IsPrecondition", err)
	}
	checkBytes(t, "Get after IfMatch", mustGet(t, s, key), []byte("v2"))
	if info := mustStat(t, s, key); info.ETag != e2 {
		t.Errorf("ETag = %s, want %s from the winning IfMatch", info.ETag, e2)
	}
	_, err = s.Put(t.Context(), prefix+"missing", []byte("x"), objectstore.Condition{IfMatch: e2})
	if !objectstore.IsPrecondition(err) {
		t.Errorf("Put IfMatch on a missing key = %v, want IsPrecondition", err)
	}
}

// testIfAbsentRace: of 16 concurrent IfAbsent puts to one key, one wins.
func testIfAbsentRace(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "obj"
	race(t, s, key, objectstore.Condition{IfAbsent: true})
}

// testIfMatchRace: of 16 concurrent IfMatch puts of one ETag, one wins.
func testIfMatchRace(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "obj"
	etag := mustPut(t, s, key, []byte("base"))
	race(t, s, key, objectstore.Condition{IfMatch: etag})
}

// race runs 16 concurrent conditional puts of distinct content to key and
// checks that exactly one won, that the others lost with ErrPrecondition,
// and that the store holds the winner's object.
func race(t *testing.T, s objectstore.Store, key string, cond objectstore.Condition) {
	const writers = 16
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		etags [writers]string
		errs  [writers]error
	)
	for i := range writers {
		wg.Go(func() {
			<-start
			etags[i], errs[i] = s.Put(t.Context(), key, fmt.Appendf(nil, "writer %d", i), cond)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !objectstore.IsPrecondition(err):
			t.Errorf("writer %d: %v, want IsPrecondition", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no writer won")
	}
	checkBytes(t, "Get after race", mustGet(t, s, key), fmt.Appendf(nil, "writer %d", winner))
	if info := mustStat(t, s, key); info.ETag != etags[winner] {
		t.Errorf("ETag after race = %s, want the winner's %s", info.ETag, etags[winner])
	}
}
