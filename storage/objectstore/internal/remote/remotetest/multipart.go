package remotetest

import (
	"context"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/internal/remote"
	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// smallParts makes objects above 6 MiB multipart uploads in 5 MiB parts
// (the smallest S3 and MinIO accept).
var smallParts = remote.Tuning{MultipartThreshold: 6 << 20, PartSize: remote.MinPartSize}

// Multipart: an object above the threshold goes up in parts (its ETag
// says how many), comes back whole and by ranges across part boundaries,
// and takes conditions like any other; one at the threshold goes up whole;
// no upload is left incomplete.
func Multipart(t *testing.T, srv *miniotest.Server, open Opener) {
	bucket := srv.NewBucket(t)
	s := open(t, srv.Endpoint(), bucket, "mp", smallParts)
	const size = 13<<20 + 7
	data := randomBytes(size, 1)
	etag := mustPut(t, s, "big", data, objectstore.Condition{IfAbsent: true})
	if n := partsOf(etag); n != 3 {
		t.Fatalf("ETag %s of a %d-byte object: %d parts, want 3 of 5 MiB", etag, size, n)
	}
	mustGet(t, s, "big", data)
	checkRanges(t, s, "big", data)
	if info, err := s.Stat(t.Context(), "big"); err != nil || info.Size != size || info.ETag != etag {
		t.Fatalf("Stat = %+v, %v; want size %d and ETag %s", info, err, size, etag)
	}
	if _, err := s.Put(t.Context(), "big", data, objectstore.Condition{IfAbsent: true}); !objectstore.IsPrecondition(err) {
		t.Fatalf("second multipart Put IfAbsent = %v, want IsPrecondition", err)
	}
	next := randomBytes(12<<20, 2)
	etag2 := mustPut(t, s, "big", next, objectstore.Condition{IfMatch: etag})
	if _, err := s.Put(t.Context(), "big", data, objectstore.Condition{IfMatch: etag}); !objectstore.IsPrecondition(err) {
		t.Fatalf("multipart Put IfMatch(stale) = %v, want IsPrecondition", err)
	}
	mustGet(t, s, "big", next)
	if whole := mustPut(t, s, "at-threshold", randomBytes(6<<20, 3), objectstore.Condition{}); partsOf(whole) != 0 {
		t.Fatalf("ETag %s of an object at the threshold: want a single-part ETag", whole)
	}
	if etag2 == etag {
		t.Fatalf("ETag unchanged after replacing the object")
	}
	checkNoIncompleteUploads(t, srv, bucket)
}

// checkRanges reads ranges at and across the 5 MiB part boundaries.
func checkRanges(t *testing.T, s objectstore.Store, key string, data []byte) {
	t.Helper()
	for _, r := range [][2]int64{{5<<20 - 3, 10}, {10<<20 - 1, 2}, {0, 5 << 20}, {5 << 20, 5<<20 + 1}, {13 << 20, 100}, {1, 13 << 20}} {
		got, err := s.GetRange(t.Context(), key, r[0], r[1])
		want := data[r[0]:min(r[0]+r[1], int64(len(data)))]
		if err != nil || string(got) != string(want) {
			t.Fatalf("GetRange(%d, %d) = %d bytes, %v; want %d bytes", r[0], r[1], len(got), err, len(want))
		}
	}
}

// checkNoIncompleteUploads fails if any multipart upload of bucket is
// still open.
func checkNoIncompleteUploads(t *testing.T, srv *miniotest.Server, bucket string) {
	t.Helper()
	client, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for u := range client.ListIncompleteUploads(ctx, bucket, "", true) {
		if u.Err != nil {
			t.Fatalf("list incomplete uploads: %v", u.Err)
		}
		t.Errorf("incomplete multipart upload left behind: %s (%s)", u.Key, u.UploadID)
	}
}
