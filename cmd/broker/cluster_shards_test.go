package main

import (
	"testing"

	"github.com/sediment-io/sediment/cluster"
	"github.com/sediment-io/sediment/groupcoord"
)

// TestShardCountsAgree: the cluster places as many coordinator shards as
// the group coordinator spreads groups over; the cluster package cannot
// import the coordinator to share the constant.
func TestShardCountsAgree(t *testing.T) {
	if cluster.Shards != groupcoord.Shards {
		t.Fatalf("cluster.Shards = %d, groupcoord.Shards = %d: groups in the shards between them would have no coordinator",
			cluster.Shards, groupcoord.Shards)
	}
}
