package remote

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
)

// singlePartETag is the ETag S3 and MinIO give an object stored with one
// PUT (without SSE-KMS): the hex MD5 of its bytes, quoted.
func singlePartETag(data []byte) string {
	sum := md5.Sum(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// multipartETag is the ETag of an object uploaded in parts of partSize:
// the MD5 of the parts' binary MD5s, a dash and the number of parts.
func multipartETag(data []byte, partSize int64) string {
	h := md5.New()
	n := 0
	for off := int64(0); off < int64(len(data)); off += partSize {
		sum := md5.Sum(data[off:min(off+partSize, int64(len(data)))])
		h.Write(sum[:])
		n++
	}
	return fmt.Sprintf(`"%s-%d"`, hex.EncodeToString(h.Sum(nil)), n)
}
