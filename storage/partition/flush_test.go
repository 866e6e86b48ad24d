package partition

import (
	"context"
	"errors"
	"testing"
)

// TestFlushCommitsWithoutTheInterval: with an upload interval of an hour,
// Flush alone uploads and commits what was appended, with object
// durability (the append becomes durable through the commit), split into
// objects of at most MaxObjectPartitions partitions.
func TestFlushCommitsWithoutTheInterval(t *testing.T) {
	env := newLogEnv(t, func(o *Options) {
		o.Durability = DurabilityObject
		o.MaxObjectPartitions = 2
	})
	l := env.open()
	tp := createTopic(t, l, "flush", 5, nil)
	ctx := context.Background()
	var res []AppendResult
	for _, p := range tp.Partitions() {
		r, err := l.Append(ctx, p, testBatch{values: values(1, "v")}.encode())
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	if err := l.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if n := l.up.Pending(); n != 0 {
		t.Fatalf("pending after Flush = %d bytes, want 0", n)
	}
	for i, p := range tp.Partitions() {
		if _, hw := p.Offsets(); hw != 1 {
			t.Fatalf("partition %d: high watermark %d after Flush, want 1", i, hw)
		}
		segs, err := env.meta.Segments(ctx, tp.ID, p.index, 0, 0)
		if err != nil || len(segs) != 1 {
			t.Fatalf("partition %d: %d index entries (%v), want 1", i, len(segs), err)
		}
		if err := l.Wait(ctx, res[i]); err != nil {
			t.Fatalf("partition %d: wait after Flush: %v", i, err)
		}
	}
	l.Close()
	if err := l.Flush(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Flush after Close = %v, want ErrClosed", err)
	}
}
