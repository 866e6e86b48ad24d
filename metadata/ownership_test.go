package metadata_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// TestBoltRefusesLeases: ownership needs leases, which only etcd has; bbolt
// refuses the write, names the flag, and writes nothing.
func TestBoltRefusesLeases(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	topic := metadata.Topic{Name: "owned", ID: metadata.NewTopicID(), Partitions: 1}
	if err := s.CreateTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.AcquirePartition(ctx, topic.ID, 0, 1, 42)
	if !errors.Is(err, metadata.ErrNoLeases) || !strings.Contains(err.Error(), "--metadata etcd") {
		t.Fatalf("acquire on bbolt: err=%v, want ErrNoLeases naming --metadata etcd", err)
	}
	if _, err := s.AcquireShard(ctx, 3, 1, 42); !errors.Is(err, metadata.ErrNoLeases) {
		t.Fatalf("acquire shard on bbolt: err=%v", err)
	}
	if h, err := s.LeaderEpochs(ctx, topic.ID, 0); err != nil || h.Version != 0 {
		t.Fatalf("a refused acquire bumped the epoch: %+v err=%v", h, err)
	}
}

func TestOwnerKeys(t *testing.T) {
	id := metadata.NewTopicID()
	key := metadata.OwnerKey(id, 7)
	if want := "own/parts/" + id.String() + "/0000000007"; key != want {
		t.Fatalf("OwnerKey = %q, want %q", key, want)
	}
	if gid, p, ok := metadata.ParseOwnerKey(key); !ok || gid != id || p != 7 {
		t.Fatalf("ParseOwnerKey(%q) = %v %d %v", key, gid, p, ok)
	}
	if k := metadata.ShardOwnerKey(5); k != "own/shards/005" {
		t.Fatalf("ShardOwnerKey = %q", k)
	}
	if s, ok := metadata.ParseShardOwnerKey("own/shards/063"); !ok || s != 63 {
		t.Fatalf("ParseShardOwnerKey = %d %v", s, ok)
	}
	for _, bad := range []string{"own/parts/xyz/1", "own/parts/" + id.String(), "own/shards/005"} {
		if _, _, ok := metadata.ParseOwnerKey(bad); ok {
			t.Errorf("ParseOwnerKey(%q) accepted", bad)
		}
	}
}
