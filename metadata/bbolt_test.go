package metadata_test

import (
	"path/filepath"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/kvtest"
)

func TestBoltConformance(t *testing.T) {
	kvtest.Run(t, func(t *testing.T) metadata.KV {
		kv, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { kv.Close() })
		return kv
	})
}
