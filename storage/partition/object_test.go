package partition

import (
	"errors"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

func sampleObject() ([]byte, []objectEntry) {
	a := testBatch{values: values(3, "a")}.encode()
	b := testBatch{values: values(2, "b")}.encode()
	entries := []objectEntry{
		{Topic: metadata.TopicID{1}, Partition: 0, BaseOffset: 10, EndOffset: 13, Pos: 0, Len: int64(len(a)), MaxTimestamp: 7},
		{Topic: metadata.TopicID{2}, Partition: 5, BaseOffset: 0, EndOffset: 2, Pos: int64(len(a)), Len: int64(len(b))},
	}
	obj := append(append([]byte(nil), a...), b...)
	return appendFooter(obj, entries), entries
}

func TestFooterRoundTrip(t *testing.T) {
	obj, want := sampleObject()
	got, err := parseFooter(obj)
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
		"bad crc":     flip(len(obj) - objTrailerLen - 3),
		"too many":    flip(len(obj) - objTrailerLen),
	} {
		if _, err := parseFooter(raw); !errors.Is(err, ErrBadObject) {
			t.Errorf("%s: err = %v, want ErrBadObject", name, err)
		}
	}
}

func FuzzParseFooter(f *testing.F) {
	obj, _ := sampleObject()
	f.Add(obj)
	f.Add(appendFooter(nil, nil))
	f.Add([]byte("SDOB"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		entries, err := parseFooter(raw)
		if err != nil {
			return
		}
		dataEnd := int64(len(raw)) - objTrailerLen - int64(len(entries))*objEntryLen
		for _, e := range entries {
			if e.Pos < 0 || e.Len <= 0 || e.Pos+e.Len > dataEnd || e.EndOffset <= e.BaseOffset {
				t.Fatalf("accepted entry outside the object: %+v (data end %d)", e, dataEnd)
			}
		}
		// What it accepts re-encodes to the same footer.
		again := appendFooter(append([]byte(nil), raw[:dataEnd]...), entries)
		if string(again) != string(raw) {
			t.Fatalf("footer does not round-trip")
		}
	})
}
