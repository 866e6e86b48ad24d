package localfs_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// Without the recorded attribute (a copied folder, a filesystem that lost
// it), the ETag is recomputed from the content, conditional puts still
// work, and the attribute is recorded again.
func TestETagWithoutAttribute(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	etag, err := s.Put(t.Context(), "k/v", []byte("content"), objectstore.Condition{})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "k%", "v")
	if err := unix.Removexattr(p, "user.sediment.etag"); err != nil {
		t.Skipf("no extended attributes here: %v", err)
	}
	if info, err := s.Stat(t.Context(), "k/v"); err != nil || info.ETag != etag {
		t.Fatalf("Stat without attribute = %+v, %v; want ETag %s", info, err, etag)
	}
	buf := make([]byte, 64)
	if n, err := unix.Getxattr(p, "user.sediment.etag", buf); err != nil || string(buf[:n]) != etag {
		t.Errorf("attribute after Stat = %q, %v; want %s recorded again", buf[:n], err, etag)
	}
	unix.Removexattr(p, "user.sediment.etag")
	if _, err := s.Put(t.Context(), "k/v", []byte("new"), objectstore.Condition{IfMatch: etag}); err != nil {
		t.Errorf("Put IfMatch without attribute: %v", err)
	}
}
