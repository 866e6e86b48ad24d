package partition

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// commitBytesKV counts the key and value bytes of every write.
type commitBytesKV struct {
	metadata.KV
	written atomic.Int64
}

func (k *commitBytesKV) Txn(ctx context.Context, conds []metadata.Cond, ops []metadata.Op) (int64, error) {
	for _, op := range ops {
		k.written.Add(int64(len(op.Key) + len(op.Value)))
	}
	return k.KV.Txn(ctx, conds, ops)
}

// BenchmarkCommitMetadataBytes measures the metadata bytes one upload
// commit writes for one partition whose idempotent producers number 10 or
// 100,000, when 10 of them wrote in the segment (meta-B/commit).
//
//	go test -run XXX -bench CommitMetadataBytes -benchtime 20x ./storage/partition
func BenchmarkCommitMetadataBytes(b *testing.B) {
	for _, known := range []int{10, 100_000} {
		b.Run(fmt.Sprintf("producers=%d", known), func(b *testing.B) {
			e := newLogEnv(b, nil)
			kv, err := metadata.OpenBolt(filepath.Join(b.TempDir(), "meta.db"))
			if err != nil {
				b.Fatal(err)
			}
			counter := &commitBytesKV{KV: kv}
			e.meta = metadata.NewStore(counter)
			l := e.open()
			tp, err := l.CreateTopic(context.Background(), "t", 1, nil, false)
			if err != nil {
				b.Fatal(err)
			}
			p := tp.Partition(0)
			seqs := make([]int32, known)
			appendOne := func(i int) {
				tb := testBatch{values: values(1, "v"), pid: int64(1 + i), seq: seqs[i]}
				if _, err := l.Append(context.Background(), p, tb.encode()); err != nil {
					b.Fatal(err)
				}
				seqs[i]++
			}
			for i := range known {
				appendOne(i)
			}
			benchUpload(b, l)
			b.ResetTimer()
			before := counter.written.Load()
			for n := range b.N {
				for i := range 10 {
					appendOne((n*10 + i) % known)
				}
				benchUpload(b, l)
			}
			b.ReportMetric(float64(counter.written.Load()-before)/float64(b.N), "meta-B/commit")
		})
	}
}

func benchUpload(b *testing.B, l *Log) {
	for range 100 {
		more, err := l.up.cycle(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if !more && l.up.Pending() == 0 {
			return
		}
	}
	b.Fatal("upload did not drain")
}
