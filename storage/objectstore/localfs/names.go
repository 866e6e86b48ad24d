package localfs

import (
	"path/filepath"
	"strings"

	"github.com/sediment-io/sediment/storage/objectstore"
)

const (
	// dirMark ends the name of every directory standing for a key prefix.
	dirMark = "%"
	// stagingName is the directory of temp files. It is not the encoding of
	// any segment (its '%' is not followed by "25"), so List never sees it.
	stagingName = ".%tmp"
)

// path returns the file that holds key, or an error if key is invalid.
func (s *Store) path(key string) (string, error) {
	if err := objectstore.ValidateKey(key); err != nil {
		return "", err
	}
	segs := strings.Split(key, "/")
	parts := make([]string, 0, len(segs)+1)
	parts = append(parts, s.root)
	for i, seg := range segs {
		name := encodeSegment(seg)
		if i < len(segs)-1 {
			name += dirMark
		}
		parts = append(parts, name)
	}
	return filepath.Join(parts...), nil
}

// encodeSegment returns the file name of one key segment.
func encodeSegment(seg string) string {
	return strings.ReplaceAll(seg, "%", "%25")
}

// decodeName returns the key segment whose encoding is name, and false when
// name is not the canonical encoding of a valid segment.
func decodeName(name string) (string, bool) {
	seg := strings.ReplaceAll(name, "%25", "%")
	ok := objectstore.ValidateKey(seg) == nil && encodeSegment(seg) == name
	return seg, ok
}
