package readcache

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/sediment-io/sediment/storage/record"
)

// split cuts b into random slices, empty ones included.
func split(rng *rand.Rand, b []byte) spans {
	var s spans
	for len(b) > 0 {
		n := min(rng.IntN(40), len(b))
		s = append(s, b[:n])
		b = b[n:]
	}
	return s
}

// spans reads, cuts and splits into batches the same bytes as the joined
// slice, wherever the slices are cut.
func TestSpans(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var joined []byte
	var want [][]byte
	for i := range 5 {
		raw := record.EncodeBatch([]record.Record{{Value: bytes.Repeat([]byte{byte(i)}, rng.IntN(30))}})
		joined = append(joined, raw...)
		want = append(want, raw)
	}
	for range 200 {
		s := split(rng, joined)
		if s.size() != int64(len(joined)) {
			t.Fatalf("size %d, want %d", s.size(), len(joined))
		}
		from := rng.Int64N(int64(len(joined)))
		to := from + rng.Int64N(int64(len(joined))-from+1)
		if got := bytes.Join(s.cut(from, to), nil); !bytes.Equal(got, joined[from:to]) {
			t.Fatalf("cut(%d, %d) = %x, want %x", from, to, got, joined[from:to])
		}
		if got := s.at(from, to-from); !bytes.Equal(got, joined[from:to]) {
			t.Fatalf("at(%d, %d) = %x, want %x", from, to-from, got, joined[from:to])
		}
		got, err := s.batches()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d batches, want %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("batch %d differs", i)
			}
		}
	}
	if _, err := split(rng, joined[:len(joined)-1]).batches(); err == nil {
		t.Fatal("a truncated last batch split without an error")
	}
}
