package localfs

import (
	"fmt"
	"io"
	"os"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// etagAttr is the extended attribute holding a file's ETag. Frozen: files
// written by earlier versions carry it.
const etagAttr = "user.sediment.etag"

// etagOf returns the ETag of the open object file f of the given size: the
// recorded one if there is one, else one computed from the content, which
// it then tries to record.
func etagOf(f *os.File, size int64) (string, error) {
	if tag, ok := getETagAttr(f); ok {
		return tag, nil
	}
	data, err := io.ReadAll(io.NewSectionReader(f, 0, size))
	if err != nil {
		return "", fmt.Errorf("hash content: %w", err)
	}
	tag := objectstore.ContentETag(data)
	setETagAttr(f, tag)
	return tag, nil
}

// validETag reports whether tag has the shape of objectstore.ContentETag,
// so that a damaged or foreign attribute is recomputed, never trusted.
func validETag(tag string) bool {
	if len(tag) != objectstore.ContentETagLen || tag[0] != '"' || tag[len(tag)-1] != '"' {
		return false
	}
	for _, c := range tag[1 : len(tag)-1] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
