package objectstore

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest key, in bytes, that every backend accepts (the S3
// limit).
const MaxKeyLen = 1024

// ErrInvalidKey is returned (possibly wrapped) when a key breaks the rules
// ValidateKey checks.
var ErrInvalidKey = errors.New("objectstore: invalid key")

// ValidateKey returns nil when key is one every backend stores the same way:
// 1 to MaxKeyLen bytes of UTF-8 without control characters or backslashes,
// made of non-empty slash-separated segments none of which is "." or "..".
// A local folder could not hold the others safely, and S3 mangles some, so
// backends reject them with ErrInvalidKey before touching anything.
func ValidateKey(key string) error {
	if reason := keyProblem(key); reason != "" {
		return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, reason)
	}
	return nil
}

// keyProblem says what is wrong with key, or "" when nothing is.
func keyProblem(key string) string {
	switch {
	case key == "":
		return "empty"
	case len(key) > MaxKeyLen:
		return fmt.Sprintf("longer than %d bytes", MaxKeyLen)
	case !utf8.ValidString(key):
		return "not valid UTF-8"
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return "control character"
		}
		if r == '\\' {
			return "backslash"
		}
	}
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "":
			return "empty path segment (leading, trailing or double slash)"
		case ".", "..":
			return fmt.Sprintf("%q path segment", seg)
		}
	}
	return ""
}
