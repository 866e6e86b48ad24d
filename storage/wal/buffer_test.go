package wal

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestFrameBufferStraddlesChunks(t *testing.T) {
	var b frameBuffer
	var want []byte
	r := rand.New(rand.NewPCG(1, 2))
	for want = nil; len(want) < 3*chunkSize+12345; {
		p := make([]byte, r.IntN(300_000))
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		b.write(p)
		want = append(want, p...)
	}
	if b.len() != len(want) {
		t.Fatalf("len %d, want %d", b.len(), len(want))
	}
	for _, span := range [][2]int{{0, 10}, {chunkSize - 5, chunkSize + 5}, {100, 2*chunkSize + 7}, {len(want) - 3, len(want)}} {
		got := make([]byte, span[1]-span[0])
		if !b.readAt(got, span[0]) || !bytes.Equal(got, want[span[0]:span[1]]) {
			t.Fatalf("readAt %v differs", span)
		}
		var each []byte
		b.each(span[0], span[1], func(p []byte) error { each = append(each, p...); return nil })
		if !bytes.Equal(each, want[span[0]:span[1]]) {
			t.Fatalf("each %v differs", span)
		}
	}
	if b.readAt(make([]byte, 2), len(want)-1) {
		t.Fatal("read past the end succeeded")
	}
	b.release()
	if b.len() != 0 {
		t.Fatal("not empty after release")
	}
}
