package etcdkv_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
	"github.com/sediment-io/sediment/metadata/kvtest"
)

func TestEtcdKVConformance(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	var n atomic.Int64
	kvtest.Run(t, func(t *testing.T) metadata.KV {
		return etcdtest.OpenKV(t, endpoint, fmt.Sprintf("conformance-%d", n.Add(1)))
	})
}
