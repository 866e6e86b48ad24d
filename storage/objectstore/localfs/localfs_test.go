package localfs_test

import (
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/localfs"
	"github.com/sediment-io/sediment/storage/objectstore/objectstoretest"
)

// open returns a store in dir, closed when the test ends.
func open(t *testing.T, dir string) *localfs.Store {
	t.Helper()
	s, err := localfs.Open(dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	objectstoretest.Run(t, func(t *testing.T) objectstore.Store {
		return open(t, t.TempDir())
	})
}

func TestConformanceShared(t *testing.T) {
	s := open(t, t.TempDir())
	objectstoretest.Run(t, func(*testing.T) objectstore.Store { return s })
}
