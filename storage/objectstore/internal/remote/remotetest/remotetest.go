// Package remotetest holds the tests every S3-protocol backend runs
// against a real MinIO beyond the conformance suite: multipart uploads,
// retries (through a fault-injecting proxy), credentials from the
// environment, and key-prefix isolation. Each backend's test package calls
// its functions with an Opener.
package remotetest

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/internal/remote"
)

// Opener opens the backend's store on bucket/prefix of the server at
// endpoint (http://HOST:PORT) with tuning, closed when the test ends; it
// fails the test when the store cannot be opened.
type Opener func(t *testing.T, endpoint, bucket, prefix string, tuning remote.Tuning) objectstore.Store

// randomBytes returns n bytes that depend only on seed.
func randomBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed^0x5ed1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func mustPut(t *testing.T, s objectstore.Store, key string, data []byte, cond objectstore.Condition) string {
	t.Helper()
	etag, err := s.Put(t.Context(), key, data, cond)
	if err != nil {
		t.Fatalf("Put(%q, %d bytes): %v", key, len(data), err)
	}
	return etag
}

func mustGet(t *testing.T, s objectstore.Store, key string, want []byte) {
	t.Helper()
	got, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get(%q): %d bytes, not the %d bytes put", key, len(got), len(want))
	}
}

// partsOf returns the part count an S3 multipart ETag ends with ("-3"),
// or 0 for a single-part ETag.
func partsOf(etag string) int {
	i := strings.LastIndexByte(etag, '-')
	if i < 0 {
		return 0
	}
	n := 0
	for _, c := range strings.Trim(etag[i+1:], `"`) {
		n = n*10 + int(c-'0')
	}
	return n
}
