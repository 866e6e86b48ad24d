package storeurl

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
)

func TestValidate(t *testing.T) {
	for _, ok := range []string{"file:///tmp/x", "file://data/objects"} {
		if err := Validate(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "ftp://x", "file://", "::"} {
		if err := Validate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestOpenFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bucket")
	s, err := Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(context.Background(), "a/b", []byte("x"), objectstoreCondition()); err != nil {
		t.Fatal(err)
	}
}

func objectstoreCondition() (c objectstore.Condition) { return c }
