package record

import (
	"errors"
	"testing"
)

func TestMarkerBatch(t *testing.T) {
	for _, m := range []ControlMarker{{Commit: true, CoordinatorEpoch: 7}, {Commit: false, CoordinatorEpoch: 0}} {
		raw := MarkerBatch(42, 3, m, 1000)
		b := ReadHeader(raw)
		if !b.Control() || !b.Transactional() || b.ProducerID != 42 || b.ProducerEpoch != 3 || b.BaseSequence != -1 || b.NumRecords != 1 {
			t.Fatalf("marker header %+v", b)
		}
		n := 0
		if err := SplitBatches(raw, func(_, _ int64, _ []byte) bool { n++; return true }); err != nil || n != 1 {
			t.Fatalf("marker walks as %d batches (err %v)", n, err)
		}
		got, err := ReadMarker(raw)
		if err != nil || got != m {
			t.Fatalf("ReadMarker = %+v, %v; want %+v", got, err, m)
		}
		// Kafka's EndTransactionMarker encoding: key version 0 and type,
		// value version 0 and the coordinator epoch.
		if err := Decode(raw, func(r Record) error {
			wantType := byte(0)
			if m.Commit {
				wantType = 1
			}
			if len(r.Key) != 4 || r.Key[0] != 0 || r.Key[1] != 0 || r.Key[3] != wantType || len(r.Value) != 6 || r.Value[0] != 0 || r.Value[1] != 0 {
				t.Fatalf("control record key %x value %x", r.Key, r.Value)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ReadMarker(testBatch{values: values(1, "x"), pid: 1}.encode()); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("ReadMarker of a data batch: %v", err)
	}
}

func FuzzReadMarker(f *testing.F) {
	f.Add(MarkerBatch(42, 3, ControlMarker{Commit: true, CoordinatorEpoch: 7}, 1000))
	f.Add(MarkerBatch(1, 0, ControlMarker{}, 0))
	f.Add(testBatch{values: values(1, "x"), pid: 7, attributes: attrControl}.encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := ReadMarker(raw)
		if err != nil {
			return
		}
		// What it reads is what MarkerBatch writes for it.
		b := ReadHeader(raw)
		again, err := ReadMarker(MarkerBatch(b.ProducerID, b.ProducerEpoch, m, b.FirstTimestamp))
		if err != nil || again != m {
			t.Fatalf("marker %+v reads back as %+v, %v", m, again, err)
		}
	})
}
