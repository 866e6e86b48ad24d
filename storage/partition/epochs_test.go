package partition

import (
	"context"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/record"
)

// batchEpochs reads p from offset 0 and returns each stored batch's
// partition leader epoch by base offset.
func batchEpochs(t *testing.T, l *Log, p *Partition) map[int64]int32 {
	t.Helper()
	out := map[int64]int32{}
	for off := int64(0); ; {
		res, err := l.Read(context.Background(), p, off, 1<<20, true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		batches := batchesOf(t, res)
		if len(batches) == 0 {
			return out
		}
		for _, raw := range batches {
			out[record.BaseOffset(raw)] = int32(binary.BigEndian.Uint32(raw[testEpochOff:]))
			off = record.LastOffset(raw) + 1
		}
	}
}

// TestLeaderEpochBump: a bump starts the next epoch at the log end offset,
// every batch carries the epoch it was appended in (from the tail cache,
// the WAL after a crash, and the object store), and the history survives a
// crash and a reopen.
func TestLeaderEpochBump(t *testing.T) {
	e := newLogEnv(t, nil)
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	if got := p.LeaderEpoch(); got != 0 {
		t.Fatalf("new partition at epoch %d", got)
	}
	produce(t, l, p, testBatch{values: values(3, "a")}) // 0-2, epoch 0
	uploadAll(t, l)
	produce(t, l, p, testBatch{values: values(2, "b")}) // 3-4, epoch 0
	ep, err := l.BumpLeaderEpoch(context.Background(), p)
	if err != nil || ep != 1 {
		t.Fatalf("bump: epoch %d, %v", ep, err)
	}
	produce(t, l, p, testBatch{values: values(4, "c")}) // 5-8, epoch 1
	if ep, err = l.BumpLeaderEpoch(context.Background(), p); err != nil || ep != 2 {
		t.Fatalf("second bump: epoch %d, %v", ep, err)
	}
	produce(t, l, p, testBatch{values: values(1, "d")}) // 9, epoch 2
	want := map[int64]int32{0: 0, 3: 0, 5: 1, 9: 2}
	if got := batchEpochs(t, l, p); !reflect.DeepEqual(got, want) {
		t.Fatalf("batch epochs %v, want %v", got, want)
	}
	wantHistory := []metadata.EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 1, StartOffset: 5}, {Epoch: 2, StartOffset: 9}}
	v := p.EpochView()
	if !reflect.DeepEqual(v.Epochs.Entries, wantHistory) || v.LogEnd != 10 || v.HighWatermark != 10 {
		t.Fatalf("epoch view %+v", v)
	}

	// A crash: offsets 3-9 come back from the WAL, epochs and all.
	e.crash(l, false)
	l = e.open()
	tp, _ := l.Topic("t")
	p2 := tp.Partition(0)
	if got := batchEpochs(t, l, p2); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a crash: batch epochs %v, want %v", got, want)
	}
	if got := p2.EpochView().Epochs.Entries; !reflect.DeepEqual(got, wantHistory) {
		t.Fatalf("after a crash: history %v", got)
	}
	produce(t, l, p2, testBatch{values: values(1, "e")}) // 10, still epoch 2
	uploadAll(t, l)
	if got := batchEpochs(t, l, p2); got[10] != 2 || got[9] != 2 || got[5] != 1 {
		t.Fatalf("after upload: batch epochs %v", got)
	}
	if got := p2.LeaderEpoch(); got != 2 {
		t.Fatalf("epoch %d after a crash, want 2", got)
	}
}

// TestLeaderEpochViewFromLogStart: once the log start passes an epoch's
// start, the view starts that epoch at the log start.
func TestLeaderEpochViewFromLogStart(t *testing.T) {
	l := newLogEnv(t, nil).open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	produce(t, l, p, testBatch{values: values(4, "a")}) // 0-3, epoch 0
	if _, err := l.BumpLeaderEpoch(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	produce(t, l, p, testBatch{values: values(4, "b")}) // 4-7, epoch 1
	if _, err := l.DeleteRecords(context.Background(), p, 6); err != nil {
		t.Fatal(err)
	}
	v := p.EpochView()
	if want := []metadata.EpochEntry{{Epoch: 1, StartOffset: 6}}; !reflect.DeepEqual(v.Epochs.Entries, want) || v.LogStart != 6 {
		t.Fatalf("view %+v, want %v from 6", v, want)
	}
	if epoch, end := v.Epochs.EndOffsetFor(0, v.LogEnd); epoch != 0 || end != 6 {
		t.Fatalf("epoch 0 below the log start: (%d, %d), want (0, 6)", epoch, end)
	}
}

func TestLeaderEpochBumpDeletedPartition(t *testing.T) {
	l := newLogEnv(t, nil).open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	if err := l.DeleteTopic(context.Background(), "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.BumpLeaderEpoch(context.Background(), p); !errors.Is(err, ErrUnknownPartition) {
		t.Fatalf("bump of a deleted partition: %v", err)
	}
}
