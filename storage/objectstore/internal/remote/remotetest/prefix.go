package remotetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// Prefix: a store with a key prefix keeps its objects under PREFIX/, sees
// only those, and lists them without the prefix; a neighbour whose prefix
// merely starts the same way ("tenant2" next to "tenant") is invisible.
func Prefix(t *testing.T, srv *miniotest.Server, open Opener) {
	bucket := srv.NewBucket(t)
	root := open(t, srv.Endpoint(), bucket, "", smallParts)
	a := open(t, srv.Endpoint(), bucket, "tenant", smallParts)
	b := open(t, srv.Endpoint(), bucket, "tenant2", smallParts)
	deep := open(t, srv.Endpoint(), bucket, "tenant/sub", smallParts)
	mustPut(t, a, "k", []byte("a"), objectstore.Condition{})
	mustPut(t, a, "dir/k", []byte("a/dir"), objectstore.Condition{})
	mustPut(t, b, "k", []byte("b"), objectstore.Condition{})
	mustPut(t, deep, "k", []byte("deep"), objectstore.Condition{})
	mustGet(t, root, "tenant/k", []byte("a"))
	mustGet(t, root, "tenant2/k", []byte("b"))
	mustGet(t, root, "tenant/sub/k", []byte("deep"))
	mustGet(t, a, "sub/k", []byte("deep"))
	for _, c := range []struct {
		name string
		s    objectstore.Store
		want []string
	}{
		{"tenant", a, []string{"dir/k", "k", "sub/k"}},
		{"tenant2", b, []string{"k"}},
		{"tenant/sub", deep, []string{"k"}},
	} {
		if got := listAll(t, c.s); !slices.Equal(got, c.want) {
			t.Errorf("List in %s = %q, want %q", c.name, got, c.want)
		}
	}
	if err := a.Delete(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	mustGet(t, b, "k", []byte("b"))
	if _, err := a.Stat(t.Context(), "k"); !objectstore.IsNotExist(err) {
		t.Errorf("Stat after Delete = %v, want IsNotExist", err)
	}
	if _, err := a.Get(t.Context(), "../k"); !errors.Is(err, objectstore.ErrInvalidKey) {
		t.Errorf("Get(../k) under a prefix = %v, want ErrInvalidKey", err)
	}
}

func listAll(t *testing.T, s objectstore.Store) []string {
	t.Helper()
	var keys []string
	err := s.List(t.Context(), "", "", func(info objectstore.Info) bool {
		keys = append(keys, info.Key)
		return true
	})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return keys
}
