package remote

import (
	"context"
	"io"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// Wire is one attempt of each S3 request, made with a backend's SDK. Keys
// are full keys, the store's prefix included. Methods return the SDK's
// errors as they are; Store classifies them with Status. ETags may be
// quoted or not: Store quotes them.
type Wire interface {
	// Open starts a GET of length bytes at off (length < 0: the whole
	// object) and returns the body and its length (-1 if unknown).
	Open(ctx context.Context, key string, off, length int64) (io.ReadCloser, int64, error)
	// Put uploads data in one request, subject to cond.
	Put(ctx context.Context, key string, data []byte, cond objectstore.Condition) (etag string, err error)
	// Head describes an object; Info.Key is the full key.
	Head(ctx context.Context, key string) (objectstore.Info, error)
	// ListPage lists up to 1,000 objects whose keys start with prefix and
	// sort after startAfter ("" for the first page), in lexical order, and
	// reports whether more may follow.
	ListPage(ctx context.Context, prefix, startAfter string) (objects []objectstore.Info, more bool, err error)
	// Delete removes an object; a missing one is not an error.
	Delete(ctx context.Context, key string) error
	// CreateMultipart starts a multipart upload and returns its id.
	CreateMultipart(ctx context.Context, key string) (uploadID string, err error)
	// UploadPart uploads part number (1-based) of an upload.
	UploadPart(ctx context.Context, key, uploadID string, number int, data []byte) (etag string, err error)
	// CompleteMultipart assembles the parts, whose ETags are given in
	// order, subject to cond.
	CompleteMultipart(ctx context.Context, key, uploadID string, partETags []string, cond objectstore.Condition) (etag string, err error)
	// AbortMultipart discards an upload and its parts.
	AbortMultipart(ctx context.Context, key, uploadID string) error
	// Status returns the HTTP status and S3 error code err carries, or
	// zeros when it carries no response (a transport failure).
	Status(err error) (status int, code string)
	// Close releases the SDK client's connections.
	Close() error
}
