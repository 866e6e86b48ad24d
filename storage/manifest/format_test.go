package manifest

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

func testRun(n int) []metadata.Segment {
	id := metadata.TopicID{1, 2, 3}
	segs := make([]metadata.Segment, n)
	base := int64(100)
	for i := range segs {
		segs[i] = metadata.Segment{Topic: id, Partition: 7, BaseOffset: base, EndOffset: base + int64(i+1),
			Object: "data/0001700000000000-abcd" + strings.Repeat("x", i%3) + ".obj", Pos: int64(i * 1000), Len: int64(500 + i),
			MaxTimestamp: int64(1_700_000_000_000 - i)}
		base = segs[i].EndOffset
	}
	return segs
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for _, n := range []int{1, 2, 30, 256} {
		run := testRun(n)
		got, err := Decode(Encode(run))
		if err != nil {
			t.Fatalf("%d entries: %v", n, err)
		}
		if !reflect.DeepEqual(got, run) {
			t.Fatalf("%d entries: round trip differs:\n got %+v\nwant %+v", n, got[0], run[0])
		}
	}
}

// Every single-byte change and every truncation is refused.
func TestDecodeRefusesDamage(t *testing.T) {
	b := Encode(testRun(5))
	for i := range b {
		d := bytes.Clone(b)
		d[i] ^= 0x41
		if _, err := Decode(d); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: err = %v", i, err)
		}
	}
	for n := range len(b) {
		if _, err := Decode(b[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut to %d bytes: err = %v", n, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(testRun(1)))
	f.Add(Encode(testRun(7)))
	f.Add([]byte("SDMF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		segs, err := Decode(b)
		if err != nil {
			return
		}
		if again, err := Decode(Encode(segs)); err != nil || !reflect.DeepEqual(again, segs) {
			t.Fatalf("accepted manifest does not round-trip: %v", err)
		}
	})
}

func TestCacheChecksAgainstTheEntry(t *testing.T) {
	run := testRun(4)
	body := Encode(run)
	gets := 0
	c := &Cache{Get: func(context.Context, string) ([]byte, error) { gets++; return body, nil }, Max: 1}
	entry := metadata.ManifestEntry(run, "manifest/k")
	for range 2 {
		got, err := c.Expand(context.Background(), entry)
		if err != nil || len(got) != 4 {
			t.Fatalf("expand: %d entries, %v", len(got), err)
		}
	}
	if gets != 1 {
		t.Fatalf("%d GETs for one manifest, want 1 (cached)", gets)
	}
	bad := entry
	bad.Object, bad.EndOffset = "manifest/other", entry.EndOffset+1
	if _, err := c.Expand(context.Background(), bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a manifest that does not cover its entry: err = %v", err)
	}
	if s, ok := Floor(run, run[2].BaseOffset); !ok || !reflect.DeepEqual(s, run[2]) {
		t.Fatalf("floor at a base: %+v %v", s, ok)
	}
	if s, ok := Floor(run, run[3].EndOffset-1); !ok || !reflect.DeepEqual(s, run[3]) {
		t.Fatalf("floor inside the last: %+v %v", s, ok)
	}
	if _, ok := Floor(run, run[0].BaseOffset-1); ok {
		t.Fatal("floor below the first entry found one")
	}
}
