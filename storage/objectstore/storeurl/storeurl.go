// Package storeurl opens an object store from the URL given to
// --object-store, choosing the backend by scheme:
//
//	file://DIR    a local folder that behaves like a bucket (localfs)
//
// Validate checks a URL without opening anything, for the broker's flag
// validation.
package storeurl

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/localfs"
)

// Validate reports whether raw is a usable --object-store URL; the error
// says what is wrong and what the accepted forms are.
func Validate(raw string) error {
	_, err := parse(raw)
	return err
}

// Open opens the store raw names.
func Open(ctx context.Context, raw string) (objectstore.Store, error) {
	u, err := parse(raw)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "file":
		return localfs.Open(filePath(u))
	}
	return nil, fmt.Errorf("storeurl: scheme %q is not supported", u.Scheme)
}

const accepted = "want file://DIR"

func parse(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q: %v (%s)", raw, err, accepted)
	}
	switch u.Scheme {
	case "file":
		if filePath(u) == "" {
			return nil, fmt.Errorf("%q has no directory (%s)", raw, accepted)
		}
		return u, nil
	}
	return nil, fmt.Errorf("%q: unsupported scheme %q (%s)", raw, u.Scheme, accepted)
}

// filePath is the directory of a file:// URL; relative paths (file://data)
// are kept relative.
func filePath(u *url.URL) string {
	if u.Host+u.Path == "" {
		return ""
	}
	return filepath.Clean(u.Host + u.Path)
}
