package dataobject

import (
	"errors"
	"testing"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/record"
)

func sampleObject() ([]byte, []Entry) {
	a := record.EncodeBatch([]record.Record{{Value: []byte("a1")}, {Value: []byte("a2")}, {Value: []byte("a3")}})
	b := record.EncodeBatch([]record.Record{{Value: []byte("b1")}, {Value: []byte("b2")}})
	entries := []Entry{
		{Topic: metadata.TopicID{1}, Partition: 0, BaseOffset: 10, EndOffset: 13, Pos: 0, Len: int64(len(a)), MaxTimestamp: 7},
		{Topic: metadata.TopicID{2}, Partition: 5, BaseOffset: 0, EndOffset: 2, Pos: int64(len(a)), Len: int64(len(b))},
	}
	obj := append(append([]byte(nil), a...), b...)
	return AppendFooter(obj, entries), entries
}

func TestFooterRoundTrip(t *testing.T) {
	obj, want := sampleObject()
	got, err := ParseFooter(obj)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestFooterRejects(t *testing.T) {
	obj, _ := sampleObject()
	flip := func(i int) []byte {
		c := append([]byte(nil), obj...)
		c[i] ^= 0xff
		return c
	}
	for name, raw := range map[string][]byte{
		"empty":       nil,
		"short":       obj[:10],
		"bad magic":   flip(len(obj) - 7),
		"bad version": flip(len(obj) - 4),
		"bad crc":     flip(len(obj) - TrailerLen - 3),
		"too many":    flip(len(obj) - TrailerLen),
	} {
		if _, err := ParseFooter(raw); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

func FuzzParseFooter(f *testing.F) {
	obj, _ := sampleObject()
	f.Add(obj)
	f.Add(AppendFooter(nil, nil))
	f.Add([]byte("SDOB"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		entries, err := ParseFooter(raw)
		if err != nil {
			return
		}
		dataEnd := int64(len(raw)) - TrailerLen - int64(len(entries))*EntryLen
		for _, e := range entries {
			if e.Pos < 0 || e.Len <= 0 || e.Pos+e.Len > dataEnd || e.EndOffset <= e.BaseOffset {
				t.Fatalf("accepted entry outside the object: %+v (data end %d)", e, dataEnd)
			}
		}
		// What it accepts re-encodes to the same footer.
		again := AppendFooter(append([]byte(nil), raw[:dataEnd]...), entries)
		if string(again) != string(raw) {
			t.Fatalf("footer does not round-trip")
		}
	})
}
