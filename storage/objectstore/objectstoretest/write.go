package objectstoretest

import (
	"context"
	"errors"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// testPutReplaces: a second put replaces the object and its ETag.
func testPutReplaces(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "obj"
	e1 := mustPut(t, s, key, []byte("version one"))
	e2 := mustPut(t, s, key, []byte("v2"))
	if e1 == e2 {
		t.Errorf("ETag unchanged (%s) after the content changed", e1)
	}
	checkBytes(t, "Get after replace", mustGet(t, s, key), []byte("v2"))
	if info := mustStat(t, s, key); info.Size != 2 || info.ETag != e2 {
		t.Errorf("Stat after replace = %+v, want size 2 and ETag %s", info, e2)
	}
}

// testStat: size, key, time and an ETag that matches Put's, is stable while
// the object is, and changes with the content.
func testStat(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "obj"
	etag := mustPut(t, s, key, []byte("hello"))
	first := mustStat(t, s, key)
	if first.Key != key || first.Size != 5 || first.ETag != etag || first.Modified.IsZero() {
		t.Errorf("Stat = %+v, want key %q, size 5, ETag %s, a time", first, key, etag)
	}
	if again := mustStat(t, s, key); again.ETag != first.ETag {
		t.Errorf("ETag changed from %s to %s without a write", first.ETag, again.ETag)
	}
	mustPut(t, s, key, []byte("world"))
	if after := mustStat(t, s, key); after.ETag == first.ETag {
		t.Errorf("ETag stayed %s after the content changed", after.ETag)
	}
}

// testInvalidKeys: keys outside objectstore.ValidateKey's rules are
// rejected with ErrInvalidKey and store nothing.
func testInvalidKeys(t *testing.T, s objectstore.Store, prefix string) {
	bad := []string{"", "/abs", prefix + "a//b", prefix + "../up", prefix + "a/./b",
		prefix + "a/", prefix + `a\b`, prefix + "nul\x00"}
	for _, key := range bad {
		_, err := s.Put(t.Context(), key, []byte("x"), objectstore.Condition{})
		if !errors.Is(err, objectstore.ErrInvalidKey) {
			t.Errorf("Put(%q) = %v, want ErrInvalidKey", key, err)
		}
		if _, err := s.Get(t.Context(), key); !errors.Is(err, objectstore.ErrInvalidKey) {
			t.Errorf("Get(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
	if keys := listKeys(t, s, prefix); len(keys) != 0 {
		t.Errorf("List after rejected puts = %q, want none", keys)
	}
}

// testDelete: a deleted object is gone; deleting it again, or a key never
// written, is not an error; the key can be created afresh.
func testDelete(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "obj"
	mustPut(t, s, key, []byte("doomed"))
	for i := range 2 {
		if err := s.Delete(t.Context(), key); err != nil {
			t.Fatalf("Delete #%d: %v", i+1, err)
		}
	}
	if err := s.Delete(t.Context(), prefix+"never/written"); err != nil {
		t.Fatalf("Delete(never written): %v", err)
	}
	if _, err := s.Get(t.Context(), key); !objectstore.IsNotExist(err) {
		t.Errorf("Get after Delete = %v, want IsNotExist", err)
	}
	if _, err := s.Stat(t.Context(), key); !objectstore.IsNotExist(err) {
		t.Errorf("Stat after Delete = %v, want IsNotExist", err)
	}
	if keys := listKeys(t, s, prefix); len(keys) != 0 {
		t.Errorf("List after Delete = %q, want none", keys)
	}
	if _, err := s.Put(t.Context(), key, []byte("reborn"), objectstore.Condition{IfAbsent: true}); err != nil {
		t.Errorf("Put IfAbsent after Delete: %v", err)
	}
}

// testCanceledContext: every call fails with the context's error and a put
// stores nothing.
func testCanceledContext(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "obj"
	mustPut(t, s, key, []byte("there"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := map[string]error{}
	_, calls["Put"] = s.Put(ctx, prefix+"new", []byte("x"), objectstore.Condition{})
	_, calls["Get"] = s.Get(ctx, key)
	_, calls["GetRange"] = s.GetRange(ctx, key, 0, 1)
	_, calls["Stat"] = s.Stat(ctx, key)
	calls["List"] = s.List(ctx, prefix, "", func(objectstore.Info) bool { return true })
	calls["Delete"] = s.Delete(ctx, key)
	for name, err := range calls {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context = %v, want context.Canceled", name, err)
		}
	}
	if _, err := s.Stat(t.Context(), prefix+"new"); !objectstore.IsNotExist(err) {
		t.Errorf("Stat after a canceled Put = %v, want IsNotExist", err)
	}
}
