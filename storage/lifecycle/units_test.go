package lifecycle

import (
	"testing"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// Retention removes a prefix of the oldest segments: those below the log
// start, then (delete policy only) those past retention.ms, then those
// beyond retention.bytes.
func TestExpiredSegments(t *testing.T) {
	now := time.UnixMilli(100_000)
	segs := []metadata.Segment{ // 10 bytes each, newest record at 10, 20, ... ms
		{BaseOffset: 0, EndOffset: 10, Len: 10, MaxTimestamp: 10},
		{BaseOffset: 10, EndOffset: 20, Len: 10, MaxTimestamp: 20},
		{BaseOffset: 20, EndOffset: 30, Len: 10, MaxTimestamp: 99_000},
		{BaseOffset: 30, EndOffset: 40, Len: 10, MaxTimestamp: 99_500},
	}
	for _, tc := range []struct {
		name     string
		logStart int64
		cfg      Retention
		want     int
	}{
		{"nothing expires", 0, Retention{Ms: -1, Bytes: -1}, 0},
		{"below the log start", 15, Retention{Ms: -1, Bytes: -1}, 1},
		{"past retention.ms", 0, Retention{Ms: 60_000, Bytes: -1}, 2},
		{"beyond retention.bytes", 0, Retention{Ms: -1, Bytes: 10}, 3},
		{"the rest still reaches retention.bytes", 0, Retention{Ms: -1, Bytes: 15}, 2},
		{"compact keeps all but the log start", 25, Retention{Ms: 1, Bytes: 1, Compact: true}, 2},
	} {
		if got := expiredSegments(segs, tc.logStart, tc.cfg, now); got != tc.want {
			t.Errorf("%s: %d segments expire, want %d", tc.name, got, tc.want)
		}
	}
}

// A pass starts at the partition after the one the last pass visited
// last, and wraps around.
func TestRotateAfter(t *testing.T) {
	parts := []Partition{{Topic: "a", Index: 0}, {Topic: "a", Index: 1}, {Topic: "b", Index: 0}}
	for _, tc := range []struct {
		last partRef
		want string
	}{
		{partRef{}, "a0 a1 b0"},
		{partRef{"a", 0}, "a1 b0 a0"},
		{partRef{"a", 1}, "b0 a0 a1"},
		{partRef{"b", 0}, "a0 a1 b0"},
		{partRef{"a", 7}, "b0 a0 a1"}, // a partition gone since
	} {
		got := ""
		for i, p := range rotateAfter(append([]Partition(nil), parts...), tc.last) {
			if i > 0 {
				got += " "
			}
			got += p.Topic + string(rune('0'+p.Index))
		}
		if got != tc.want {
			t.Errorf("after %v: %s, want %s", tc.last, got, tc.want)
		}
	}
}

// objectTime reads the creation time of upload and compacted object keys.
func TestObjectTime(t *testing.T) {
	for key, want := range map[string]int64{
		"data/0001700000000123-0-abcdef.obj":                                1700000000123,
		CompactedPrefix + "t/3/00000000000000000042-1700000000456-beef.obj": 1700000000456,
		"manifest/t/3/00000000000000000042-1700000000789-beef.mf":           1700000000789,
		"data/garbage.obj": 0,
	} {
		got := objectTime(key)
		if want == 0 {
			if !got.IsZero() {
				t.Errorf("%s: %v, want the zero time", key, got)
			}
			continue
		}
		if got.UnixMilli() != want {
			t.Errorf("%s: %d, want %d", key, got.UnixMilli(), want)
		}
	}
}
