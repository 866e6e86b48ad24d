package partition

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore/mem"
)

// TestFailedFsyncFailsLogClosed: a failed WAL fsync fails the log for good
// and says so (Failed, Failure). The batch it did not sync is never
// acknowledged nor made visible, later appends get ErrStorage, nothing is
// uploaded (the close does no final flush), and a restart after a power
// loss serves exactly what was acknowledged.
func TestFailedFsyncFailsLogClosed(t *testing.T) {
	e := newLogEnv(t, nil)
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	var acked [][]byte
	for i := range 3 {
		tb := testBatch{values: [][]byte{[]byte(fmt.Sprintf("acked-%d", i))}, pid: 7, seq: int32(i)}
		produce(t, l, p, tb)
		acked = append(acked, tb.values[0])
	}
	if err := l.Failure(); err != nil {
		t.Fatalf("Failure of a healthy log: %v", err)
	}
	boom := errors.New("injected EIO")
	e.fs.FailNextSync(boom)
	res, err := l.Append(context.Background(), p, testBatch{values: values(1, "unsynced"), pid: 7, seq: 3}.encode())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Wait(context.Background(), res); !errors.Is(err, ErrStorage) {
		t.Fatalf("wait for the batch whose fsync failed: %v, want ErrStorage", err)
	}
	select {
	case <-l.Failed():
	default:
		t.Fatal("Failed not closed after a failed fsync")
	}
	if err := l.Failure(); !errors.Is(err, boom) {
		t.Fatalf("Failure = %v, want the injected error", err)
	}
	if _, hw := p.Offsets(); hw != 3 {
		t.Fatalf("high watermark %d after the failed fsync, want 3", hw)
	}
	for _, tb := range []testBatch{
		{values: values(1, "later")},                          // a new batch
		{values: [][]byte{[]byte("acked-2")}, pid: 7, seq: 2}, // a retried, acknowledged one
	} {
		if _, err := l.Append(context.Background(), p, tb.encode()); !errors.Is(err, ErrStorage) {
			t.Fatalf("append after the failure: %v, want ErrStorage", err)
		}
	}
	if err := l.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close of a failed log: %v, want the failure", err)
	}
	if n := e.store.Count(mem.OpPut); n != 0 {
		t.Fatalf("%d PUTs after the failure, want none: a failed log writes nothing more", n)
	}
	e.fs.Crash() // the failed fsync made nothing durable
	l = e.open()
	tp, _ := l.Topic("t")
	checkContiguous(t, l, tp.Partition(0), acked)
}

// TestFailEndsObjectWaits: the owner fails the log (its metadata file
// failed): with --durability object, an append waiting for its upload gets
// ErrStorage at once, and later appends are refused.
func TestFailEndsObjectWaits(t *testing.T) {
	e := newLogEnv(t, func(o *Options) { o.Durability = DurabilityObject })
	l := e.open()
	p := createTopic(t, l, "t", 1, nil).Partition(0)
	res, err := l.Append(context.Background(), p, testBatch{values: values(1, "o")}.encode())
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- l.Wait(context.Background(), res) }()
	boom := errors.New("metadata: storage failed: injected")
	l.Fail(boom)
	if err := <-waited; !errors.Is(err, ErrStorage) {
		t.Fatalf("wait across the failure: %v, want ErrStorage", err)
	}
	if _, err := l.Append(context.Background(), p, testBatch{values: values(1, "p")}.encode()); !errors.Is(err, ErrStorage) {
		t.Fatalf("append after Fail: %v, want ErrStorage", err)
	}
	l.Fail(errors.New("a second failure"))
	if err := l.Failure(); !errors.Is(err, boom) {
		t.Fatalf("Failure = %v, want the first one", err)
	}
}
