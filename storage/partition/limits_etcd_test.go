package partition

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

// openEtcdLog opens a Log on env's WAL and objects with its metadata on
// the etcd at endpoint (default limits), bounding an object's partitions
// as cmd/broker does on etcd.
func openEtcdLog(t *testing.T, e *logEnv, endpoint string) (*Log, *metadata.Store, *etcdkv.KV) {
	t.Helper()
	kv := etcdtest.OpenKV(t, endpoint, "limits")
	meta := metadata.NewStore(kv)
	opts := e.opts
	opts.Meta, opts.MaxObjectPartitions = meta, 32
	l, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("open log: %v", err)
	}
	t.Cleanup(func() {
		l.Close()
		meta.Close()
	})
	return l, meta, kv
}

// produceEach appends one record to each of parts, naming its partition,
// and uploads them all.
func produceEach(t *testing.T, l *Log, parts []*Partition) {
	t.Helper()
	for _, p := range parts {
		// Stamped now: retention.ms, if the maintainer runs, keeps them.
		produce(t, l, p, testBatch{values: [][]byte{[]byte(fmt.Sprint("p", p.Index()))}, firstTS: time.Now().UnixMilli()})
	}
	uploadAll(t, l)
}

// checkEach reads back each partition's one record.
func checkEach(t *testing.T, l *Log, parts []*Partition) {
	t.Helper()
	for _, p := range parts {
		got := readAll(t, l, p, 0)
		if len(got) != 1 || !bytes.Equal(got[0], []byte(fmt.Sprint("p", p.Index()))) {
			t.Fatalf("partition %d read %d records: %q", p.Index(), len(got), got[0])
		}
	}
}

// On a real etcd with its default limits, through the partition log: a
// topic of 1,000 partitions is created and grown to 1,500, every partition
// takes a record that is committed to the object store and read back
// after a restart (from metadata and objects alone), and the topic is
// deleted with nothing of it left in metadata.
func TestEtcdLargeTopicThroughTheLog(t *testing.T) {
	ctx := context.Background()
	endpoint, _ := etcdtest.Start(t)
	e := newLogEnv(t, nil)
	l, meta, kv := openEtcdLog(t, e, endpoint)
	tp := createTopic(t, l, "large", 1000, nil)
	produceEach(t, l, tp.Partitions())
	if err := l.CreatePartitions(ctx, "large", 1500, false); err != nil {
		t.Fatal(err)
	}
	if n := len(tp.Partitions()); n != 1500 {
		t.Fatalf("%d partitions after the grow", n)
	}
	produceEach(t, l, tp.Partitions()[1000:])
	for _, p := range tp.Partitions() {
		st, ok, err := meta.PartitionState(ctx, tp.ID, p.Index())
		if err != nil || !ok || st.NextOffset != 1 {
			t.Fatalf("partition %d state %+v ok=%v err=%v, want its record committed", p.Index(), st, ok, err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	e.fs.Crash() // the WAL is gone: what is read back comes from the objects

	l, _, _ = openEtcdLog(t, e, endpoint)
	tp, ok := l.Topic("large")
	if !ok || len(tp.Partitions()) != 1500 {
		t.Fatalf("topic after the restart: ok=%v", ok)
	}
	checkEach(t, l, tp.Partitions())
	if err := l.DeleteTopic(ctx, "large"); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"topics/", "parts/", "index/", "objects/", "deleted-topics/", "pending-topics/"} {
		items, err := kv.Range(ctx, prefix, metadata.PrefixEnd(prefix), 0, false)
		if err != nil || len(items) != 0 {
			t.Fatalf("%d keys left under %s (err %v)", len(items), prefix, err)
		}
	}
}

// On a real etcd with its default limits, compaction of a partition of
// 200 small segments swaps them for compacted objects a bounded run at a
// time, and every record stays readable.
func TestEtcdCompactionOfManySegments(t *testing.T) {
	ctx := context.Background()
	endpoint, _ := etcdtest.Start(t)
	e := newLogEnv(t, func(o *Options) {
		o.CompactTargetBytes, o.CompactChunkBytes = 1<<20, 1<<20
		o.CompactMinAge = time.Nanosecond
		o.CompactBytesPerSec = 1 << 30
	})
	l, meta, _ := openEtcdLog(t, e, endpoint)
	p := createTopic(t, l, "small", 1, nil).Partition(0)
	const n = 200
	for i := range n {
		produce(t, l, p, testBatch{values: [][]byte{[]byte(fmt.Sprint("r", i))}, firstTS: time.Now().UnixMilli()})
		uploadAll(t, l)
	}
	segments := func() int {
		segs, err := meta.Segments(ctx, p.topic.ID, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(segs)
	}
	for pass := 0; pass < 20 && segments() > n/10; pass++ {
		if err := l.compact(ctx); err != nil {
			t.Fatalf("compaction pass %d: %v", pass, err)
		}
	}
	if got := segments(); got > n/10 {
		t.Fatalf("%d segments left after compaction", got)
	}
	if !hasCompacted(t, l, p) {
		t.Fatal("no compacted object in the index")
	}
	got := readAll(t, l, p, 0)
	for i := range n {
		if !bytes.Equal(got[int64(i)], []byte(fmt.Sprint("r", i))) {
			t.Fatalf("offset %d reads %q", i, got[int64(i)])
		}
	}
}
