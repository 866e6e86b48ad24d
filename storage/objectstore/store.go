// Package objectstore defines the small interface Sediment needs from an
// object store (S3, MinIO, or a local folder that behaves like a bucket) and
// holds its backends in sub-packages: localfs (the embedded default), mem
// (tests and fault injection), s3 (aws-sdk-go-v2) and minio (minio-go);
// storeurl picks one from the --object-store URL, storemetrics counts the
// calls, objectstoretest is the conformance suite all of them pass.
//
// The interface is deliberately narrow: whole-object put and get, ranged get
// (in one buffer or as a stream), conditional put, stat, list and delete. Everything the broker stores is
// written once and never modified in place, so no backend needs appends or
// partial writes. Keys are slash-separated paths without a leading slash;
// ValidateKey states the rules, and every backend rejects other keys with
// ErrInvalidKey. A portable key set also never stores one object's key as
// the folder of another (a/b and a/b/c): MinIO accepts both but never lists
// the deeper one, so Sediment's key layouts avoid such pairs. Each backend
// has its own ETags; ContentETag is the one mem and localfs compute, as S3
// does for single-part uploads.
//
// A package never knows the wire or the metadata: it moves bytes.
package objectstore

import (
	"context"
	"errors"
	"io"
	"time"
)

// ErrNotExist is returned (possibly wrapped) when a key does not exist.
var ErrNotExist = errors.New("objectstore: object does not exist")

// ErrPrecondition is returned (possibly wrapped) when a conditional put
// loses: the key exists for IfAbsent, or its ETag differs for IfMatch.
var ErrPrecondition = errors.New("objectstore: precondition failed")

// ErrInvalidRange is returned (possibly wrapped) by GetRange when the offset
// lies beyond the end of the object.
var ErrInvalidRange = errors.New("objectstore: invalid range")

// IsNotExist reports whether err says the object does not exist.
func IsNotExist(err error) bool { return errors.Is(err, ErrNotExist) }

// IsPrecondition reports whether err says a conditional put lost its race.
func IsPrecondition(err error) bool { return errors.Is(err, ErrPrecondition) }

// Info describes one stored object.
type Info struct {
	Key      string
	Size     int64
	ETag     string    // opaque; changes whenever the content is replaced
	Modified time.Time // last write time as the store reports it
}

// Condition makes a put conditional. The zero value is unconditional.
type Condition struct {
	// IfAbsent makes the put fail with ErrPrecondition when the key exists
	// (S3 "If-None-Match: *").
	IfAbsent bool
	// IfMatch, when non-empty, makes the put fail with ErrPrecondition
	// unless the key exists with exactly this ETag (S3 "If-Match").
	IfMatch string
}

// Store is an object store. Implementations are safe for concurrent use.
type Store interface {
	// Get returns the whole object.
	Get(ctx context.Context, key string) ([]byte, error)
	// GetRange returns length bytes starting at off, fewer if the object
	// ends first. An off beyond the end is ErrInvalidRange; off equal to the
	// size returns no bytes.
	GetRange(ctx context.Context, key string, off, length int64) ([]byte, error)
	// OpenRange is GetRange as a stream, for a sequential reader that
	// wants the bytes as they arrive instead of in one buffer: one request
	// for the whole range, read at the caller's pace. Errors that GetRange
	// returns at once (ErrNotExist, ErrInvalidRange) OpenRange returns at
	// once too. ctx bounds the opening only; the reader outlives it and
	// holds a connection or a file until Close.
	OpenRange(ctx context.Context, key string, off, length int64) (io.ReadCloser, error)
	// Put stores data under key, replacing any previous object, subject to
	// cond. It returns the new object's ETag. A reader never observes a
	// partly written object.
	Put(ctx context.Context, key string, data []byte, cond Condition) (etag string, err error)
	// Stat describes the object without reading it.
	Stat(ctx context.Context, key string) (Info, error)
	// List calls fn for every object whose key starts with prefix and
	// sorts after after ("": from the first), in lexical key order, until
	// fn returns false or the listing ends. A listing resumed after a key
	// costs the store nothing for the keys before it (S3's StartAfter).
	List(ctx context.Context, prefix, after string, fn func(Info) bool) error
	// Delete removes key. Deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// Close releases the store's resources.
	Close() error
}
