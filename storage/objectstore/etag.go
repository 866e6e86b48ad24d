package objectstore

import (
	"encoding/binary"
	"encoding/hex"

	"github.com/cespare/xxhash/v2"
)

// ContentETag is the ETag the mem and localfs backends give an object: the
// 64-bit xxHash of the content as 16 hex digits in double quotes, so that
// the same bytes get the same ETag everywhere. ETags are opaque to callers
// (S3 uses MD5 for single-part uploads); xxHash is chosen because it costs
// a few percent of MD5's CPU on the upload path. It names content; it
// protects nothing.
func ContentETag(data []byte) string {
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], xxhash.Sum64(data))
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// ContentETagLen is the length of a ContentETag, quotes included.
const ContentETagLen = 2 + 16
