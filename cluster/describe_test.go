package cluster

import (
	"context"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// TestDescribeOneRevision: a description names the etcd revision it was
// read at, and every part of it (members, topics, partition states, own
// keys) is read at that revision: read again at it after later writes, it
// is the same description.
func TestDescribeOneRevision(t *testing.T) {
	endpoint, _ := etcdtest.Start(t)
	c := newTestCluster(t, endpoint, "describe")
	ctx := context.Background()
	a := c.createTopic("a", 2)
	if _, err := c.kv.Txn(ctx, nil, []metadata.Op{metadata.Put(memberKey(7), []byte(mustJSON(Member{NodeID: 7, Durability: "wal"})))}); err != nil {
		t.Fatal(err)
	}
	d1, err := Describe(ctx, c.kv)
	if err != nil {
		t.Fatal(err)
	}
	head, err := c.kv.Client().Get(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if d1.Revision == 0 || d1.Revision != head.Header.Revision {
		t.Fatalf("description at revision %d, etcd at %d with no write since", d1.Revision, head.Header.Revision)
	}
	if len(d1.Partitions) != 2 || len(d1.Members) != 1 {
		t.Fatalf("description: %d partitions, %d members; want 2 and 1", len(d1.Partitions), len(d1.Members))
	}

	// Later writes to every part the description reads.
	c.createTopic("b", 3)
	commit := metadata.SegmentCommit{Segment: metadata.Segment{Topic: a.ID, Partition: 0, BaseOffset: 0, EndOffset: 4, Object: "o", Len: 1}}
	if _, err := c.meta.CommitSegments(ctx, []metadata.SegmentCommit{commit}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.kv.Txn(ctx, nil, []metadata.Op{metadata.Put(memberKey(8), []byte(mustJSON(Member{NodeID: 8})))}); err != nil {
		t.Fatal(err)
	}

	again, err := describeAt(ctx, &snapshotKV{cli: c.kv.Client(), prefix: c.kv.Prefix(), rev: d1.Revision})
	if err != nil {
		t.Fatal(err)
	}
	again.Revision = d1.Revision
	if len(again.Partitions) != 2 || again.Partitions[0].CommittedOffset != 0 || len(again.Members) != 1 {
		t.Fatalf("read again at revision %d: %+v, want the first description %+v", d1.Revision, again, d1)
	}
	d2, err := Describe(ctx, c.kv)
	if err != nil {
		t.Fatal(err)
	}
	if d2.Revision <= d1.Revision || len(d2.Partitions) != 5 || d2.Partitions[0].CommittedOffset != 4 || len(d2.Members) != 2 {
		t.Fatalf("description after the writes: revision %d (first %d), %d partitions, committed %d, %d members",
			d2.Revision, d1.Revision, len(d2.Partitions), d2.Partitions[0].CommittedOffset, len(d2.Members))
	}
	if _, err := (&snapshotKV{}).Txn(ctx, nil, nil); err == nil {
		t.Fatal("a snapshot took a write")
	}
}
