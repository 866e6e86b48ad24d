package objectstoretest

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// randomBytes returns n bytes that depend only on seed.
func randomBytes(n int, seed uint64) []byte {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(key).Read(b)
	return b
}

// mustPut stores data under key unconditionally and returns its ETag.
func mustPut(t *testing.T, s objectstore.Store, key string, data []byte) string {
	t.Helper()
	etag, err := s.Put(t.Context(), key, data, objectstore.Condition{})
	if err != nil {
		t.Fatalf("Put(%q, %d bytes): %v", key, len(data), err)
	}
	if etag == "" {
		t.Fatalf("Put(%q) returned an empty ETag", key)
	}
	return etag
}

// mustGet returns the object under key.
func mustGet(t *testing.T, s objectstore.Store, key string) []byte {
	t.Helper()
	data, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return data
}

// mustStat describes the object under key.
func mustStat(t *testing.T, s objectstore.Store, key string) objectstore.Info {
	t.Helper()
	info, err := s.Stat(t.Context(), key)
	if err != nil {
		t.Fatalf("Stat(%q): %v", key, err)
	}
	return info
}

// checkBytes fails the test unless got equals want.
func checkBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: got %d bytes %.16x..., want %d bytes %.16x...", what, len(got), got, len(want), want)
	}
}

// listKeys returns the keys List reports under prefix, in its order.
func listKeys(t *testing.T, s objectstore.Store, prefix string) []string {
	t.Helper()
	keys := []string{}
	err := s.List(t.Context(), prefix, "", func(info objectstore.Info) bool {
		keys = append(keys, info.Key)
		return true
	})
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return keys
}

// withPrefix returns prefix+k for every k.
func withPrefix(prefix string, ks ...string) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = prefix + k
	}
	return out
}
