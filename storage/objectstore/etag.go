package objectstore

import (
	"crypto/md5"
	"encoding/hex"
)

// ContentETag returns the ETag S3 gives a single-part upload of data: the
// hex MD5 of the content in double quotes. Backends that compute their own
// ETags (mem, localfs) use it so that the same bytes get the same ETag
// everywhere. MD5 here names content; it protects nothing.
func ContentETag(data []byte) string {
	sum := md5.Sum(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}
