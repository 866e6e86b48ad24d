//go:build linux || darwin

package localfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// getETagAttr returns the ETag recorded on f, if any and well formed.
func getETagAttr(f *os.File) (string, bool) {
	var buf [64]byte
	n, err := unix.Fgetxattr(int(f.Fd()), etagAttr, buf[:])
	if err != nil || !validETag(string(buf[:n])) {
		return "", false
	}
	return string(buf[:n]), true
}

// setETagAttr records tag on f, best-effort: where it fails (no xattr
// support, no permission) the ETag is recomputed when next needed.
func setETagAttr(f *os.File, tag string) {
	_ = unix.Fsetxattr(int(f.Fd()), etagAttr, []byte(tag), 0)
}
