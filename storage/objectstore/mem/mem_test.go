package mem_test

import (
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
	"github.com/sediment-io/sediment/storage/objectstore/objectstoretest"
)

func TestConformance(t *testing.T) {
	objectstoretest.Run(t, func(t *testing.T) objectstore.Store {
		s := mem.New()
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestConformanceShared(t *testing.T) {
	s := mem.New()
	t.Cleanup(func() { s.Close() })
	objectstoretest.Run(t, func(*testing.T) objectstore.Store { return s })
	if n := len(listAll(t, s)); n != 0 {
		t.Errorf("the suite left %d objects behind", n)
	}
}

func listAll(t *testing.T, s objectstore.Store) []string {
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
