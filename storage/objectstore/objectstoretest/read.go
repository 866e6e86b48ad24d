package objectstoretest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// testPutGet: bytes come back exactly, and neither the caller's slice
// after Put nor a returned slice aliases the stored object.
func testPutGet(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "obj"
	data := make([]byte, 256)
	for i := range data {
		data[i] = byte(i)
	}
	want := append([]byte(nil), data...)
	mustPut(t, s, key, data)
	data[0] = 0xff
	got := mustGet(t, s, key)
	checkBytes(t, "Get after Put", got, want)
	got[1] = 0xff
	checkBytes(t, "second Get", mustGet(t, s, key), want)
}

// testGetMissing: every read of a missing key says IsNotExist.
func testGetMissing(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "missing"
	ctx := t.Context()
	if _, err := s.Get(ctx, key); !objectstore.IsNotExist(err) {
		t.Errorf("Get(missing) = %v, want IsNotExist", err)
	}
	if _, err := s.GetRange(ctx, key, 0, 1); !objectstore.IsNotExist(err) {
		t.Errorf("GetRange(missing) = %v, want IsNotExist", err)
	}
	if _, err := s.Stat(ctx, key); !objectstore.IsNotExist(err) {
		t.Errorf("Stat(missing) = %v, want IsNotExist", err)
	}
}

// testGetRange: ranges at the start, middle and end, ranges cut short by
// the end, and offsets at and past the end.
func testGetRange(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "obj"
	data := randomBytes(100, 1)
	mustPut(t, s, key, data)
	for _, c := range []struct{ off, length, wantLen int64 }{
		{0, 10, 10}, {45, 10, 10}, {90, 10, 10}, {0, 100, 100},
		{95, 10, 5}, {0, 1000, 100}, {99, 1, 1}, {100, 10, 0}, {50, 0, 0},
	} {
		got, err := s.GetRange(t.Context(), key, c.off, c.length)
		if err != nil {
			t.Fatalf("GetRange(%d, %d): %v", c.off, c.length, err)
		}
		if int64(len(got)) != c.wantLen {
			t.Fatalf("GetRange(%d, %d) returned %d bytes, want %d", c.off, c.length, len(got), c.wantLen)
		}
		checkBytes(t, "GetRange", got, data[c.off:c.off+c.wantLen])
	}
	if _, err := s.GetRange(t.Context(), key, 101, 1); !errors.Is(err, objectstore.ErrInvalidRange) {
		t.Errorf("GetRange(off > size) = %v, want ErrInvalidRange", err)
	}
	if _, err := s.GetRange(t.Context(), key, -1, 1); err == nil {
		t.Errorf("GetRange(off -1) succeeded, want an error")
	}
}

// testOpenRange: OpenRange streams what GetRange returns, reports a
// missing key and a range past the end when it opens, and keeps reading
// after the context it was opened with ends; a stream of a large object
// read in small pieces comes back whole.
func testOpenRange(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "obj"
	data := randomBytes(100, 3)
	mustPut(t, s, key, data)
	read := func(off, length int64) ([]byte, error) {
		ctx, cancel := context.WithCancel(t.Context())
		r, err := s.OpenRange(ctx, key, off, length)
		cancel()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return io.ReadAll(r)
	}
	for _, c := range []struct{ off, length, wantLen int64 }{
		{0, 10, 10}, {45, 10, 10}, {0, 100, 100}, {95, 10, 5}, {0, 1000, 100}, {100, 10, 0}, {50, 0, 0},
	} {
		got, err := read(c.off, c.length)
		if err != nil {
			t.Fatalf("OpenRange(%d, %d): %v", c.off, c.length, err)
		}
		checkBytes(t, fmt.Sprintf("OpenRange(%d, %d)", c.off, c.length), got, data[c.off:c.off+c.wantLen])
	}
	if _, err := read(101, 1); !errors.Is(err, objectstore.ErrInvalidRange) {
		t.Errorf("OpenRange(off > size) = %v, want ErrInvalidRange", err)
	}
	if _, err := s.OpenRange(t.Context(), prefix+"missing", 0, 1); !objectstore.IsNotExist(err) {
		t.Errorf("OpenRange(missing) = %v, want IsNotExist", err)
	}

	const size = 12 << 20
	large := randomBytes(size, 4)
	mustPut(t, s, prefix+"large", large)
	r, err := s.OpenRange(t.Context(), prefix+"large", 1<<20+7, size)
	if err != nil {
		t.Fatalf("OpenRange(large): %v", err)
	}
	defer r.Close()
	var got []byte
	buf := make([]byte, 100<<10)
	for range size { // a Read returns at least one byte or an error
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading the large stream at %d: %v", len(got), err)
		}
	}
	checkBytes(t, "OpenRange(large) read in pieces", got, large[1<<20+7:])
}

// testEmptyObject: a zero-byte object is an object like any other.
func testEmptyObject(t *testing.T, s objectstore.Store, prefix string) {
	key := prefix + "empty"
	etag := mustPut(t, s, key, nil)
	checkBytes(t, "Get(empty)", mustGet(t, s, key), nil)
	if info := mustStat(t, s, key); info.Size != 0 || info.ETag != etag {
		t.Errorf("Stat(empty) = %+v, want size 0 and ETag %s", info, etag)
	}
	got, err := s.GetRange(t.Context(), key, 0, 10)
	if err != nil || len(got) != 0 {
		t.Errorf("GetRange(empty, 0, 10) = %d bytes, %v; want 0 bytes", len(got), err)
	}
	if _, err := s.GetRange(t.Context(), key, 1, 1); !errors.Is(err, objectstore.ErrInvalidRange) {
		t.Errorf("GetRange(empty, 1, 1) = %v, want ErrInvalidRange", err)
	}
	if keys := listKeys(t, s, prefix); len(keys) != 1 || keys[0] != key {
		t.Errorf("List = %q, want [%q]", keys, key)
	}
}

// testNestedKeys: deep keys, and a key that is also a prefix of others.
func testNestedKeys(t *testing.T, s objectstore.Store, prefix string) {
	deepKeys(t, s, prefix, prefix+"x/y")
}

// testDeepKeys is testNestedKeys with a sibling of the deep key's folder
// in place of the key that is also its folder.
func testDeepKeys(t *testing.T, s objectstore.Store, prefix string) {
	deepKeys(t, s, prefix, prefix+"x/y0")
}

func deepKeys(t *testing.T, s objectstore.Store, prefix, mid string) {
	deep := prefix + "x/y/z/w.obj"
	mustPut(t, s, deep, []byte("deep"))
	mustPut(t, s, mid, []byte("mid"))
	checkBytes(t, "Get(deep)", mustGet(t, s, deep), []byte("deep"))
	checkBytes(t, "Get(mid)", mustGet(t, s, mid), []byte("mid"))
	if keys := listKeys(t, s, prefix+"x/y/"); len(keys) != 1 || keys[0] != deep {
		t.Errorf("List(x/y/) = %q, want [%q]", keys, deep)
	}
	for _, key := range []string{deep, mid} {
		if err := s.Delete(t.Context(), key); err != nil {
			t.Fatalf("Delete(%q): %v", key, err)
		}
	}
	if keys := listKeys(t, s, prefix); len(keys) != 0 {
		t.Errorf("List after deleting everything = %q, want none", keys)
	}
}

// testLargeObject: 24 MiB round trip and ranges deep inside it.
func testLargeObject(t *testing.T, s objectstore.Store, prefix string) {
	const size = 24 << 20
	key := prefix + "large"
	data := randomBytes(size, 2)
	etag := mustPut(t, s, key, data)
	checkBytes(t, "Get(large)", mustGet(t, s, key), data)
	if info := mustStat(t, s, key); info.Size != size || info.ETag != etag {
		t.Errorf("Stat(large) = %+v, want size %d and ETag %s", info, size, etag)
	}
	for _, r := range [][2]int64{{16<<20 - 3, 5 << 20}, {size - 10, 1 << 20}, {1 << 20, 1}} {
		got, err := s.GetRange(t.Context(), key, r[0], r[1])
		if err != nil {
			t.Fatalf("GetRange(large, %d, %d): %v", r[0], r[1], err)
		}
		checkBytes(t, "GetRange(large)", got, data[r[0]:min(r[0]+r[1], size)])
	}
}
