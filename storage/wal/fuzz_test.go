package wal

import (
	"bytes"
	"io"
	"log/slog"
	"testing"
)

const fuzzStart Pos = 4096

// FuzzRecover feeds arbitrary bytes to Open as a segment file, after a
// valid header or raw, with and without Repair. Open must never panic,
// never read past the file, fail only with a *CorruptionError, and every
// frame it accepts must re-encode to exactly the bytes on disk.
func FuzzRecover(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(true, false, s)
		f.Add(true, true, s)
		f.Add(false, false, append(appendSegmentHeader(nil, fuzzStart), s...))
	}
	f.Fuzz(func(t *testing.T, withHeader, repair bool, body []byte) {
		file := body
		if withHeader {
			file = append(appendSegmentHeader(nil, fuzzStart), body...)
		}
		fuzzOpen(t, file, repair)
	})
}

func fuzzOpen(t *testing.T, file []byte, repair bool) {
	mem := NewMemFS()
	const dir = "/wal"
	path := dir + "/" + segmentName(fuzzStart)
	mem.SetBytes(path, file)
	opts := Options{Dir: dir, FS: boundsFS{mem, t}, Repair: repair,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	next := fuzzStart
	want := appendSegmentHeader(nil, fuzzStart)
	// skipCommits moves next past flush commits, which are not replayed.
	skipCommits := func() {
		for off := segmentHeaderSize + int(next-fuzzStart); off <= len(file) && commitAt(file[off:], next); off += commitFrameSize {
			want = append(want, file[off:off+commitFrameSize]...)
			next += commitFrameSize
		}
	}
	w, err := Open(opts, func(pos Pos, typ RecordType, payload []byte) error {
		skipCommits()
		enc := encodeFrame(typ, payload)
		off := segmentHeaderSize + int(pos-fuzzStart)
		if pos != next || off+len(enc) > len(file) || !bytes.Equal(file[off:off+len(enc)], enc) {
			t.Fatalf("accepted frame at pos %d (expected %d) does not round-trip", pos, next)
		}
		next += Pos(len(enc))
		want = append(want, enc...)
		return nil
	})
	if err != nil {
		if repair || !IsCorruption(err) {
			t.Fatalf("Open: %v", err)
		}
		return
	}
	defer w.Close()
	skipCommits()
	if w.Head() != next {
		t.Fatalf("head %d after replaying up to %d", w.Head(), next)
	}
	if got, _ := mem.Bytes(path); !bytes.Equal(got, want) {
		t.Fatalf("segment after recovery is %d bytes, want the %d accepted", len(got), len(want))
	}
}

// boundsFS fails the test if any read reaches past the end of a file.
type boundsFS struct {
	*MemFS
	t *testing.T
}

func (b boundsFS) OpenFile(name string) (File, error) {
	f, err := b.MemFS.OpenFile(name)
	return boundsFile{f, b.t}, err
}

type boundsFile struct {
	File
	t *testing.T
}

func (f boundsFile) ReadAt(p []byte, off int64) (int, error) {
	if size, _ := f.Size(); off < 0 || off+int64(len(p)) > size {
		f.t.Fatalf("read of %d bytes at %d past the end of a %d-byte file", len(p), off, size)
	}
	return f.File.ReadAt(p, off)
}

// fuzzSeeds are segment bodies: valid frames, and each kind of damage.
func fuzzSeeds() [][]byte {
	var valid []byte
	for i, s := range []string{"", "a", "hello, sediment", string(make([]byte, 300))} {
		valid = append(valid, encodeFrame(RecordType(i+1), []byte(s))...)
	}
	flipped := bytes.Clone(valid)
	flipped[12] ^= 0xff
	lastFlip := bytes.Clone(valid)
	lastFlip[len(lastFlip)-1] ^= 1
	zeroMid := bytes.Clone(valid)
	clear(zeroMid[9:18])
	committed := append(bytes.Clone(valid), commitFrame(fuzzStart, fuzzStart+Pos(len(valid)))...)
	return [][]byte{
		committed,
		append(bytes.Clone(committed), valid[:20]...),
		nil,
		valid,
		valid[:len(valid)-7],
		valid[:5],
		append(bytes.Clone(valid), make([]byte, 40)...),
		flipped,
		lastFlip,
		zeroMid,
		{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1},
	}
}
