package remote

import (
	"context"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// Put stores data under key, subject to cond: in one request up to the
// multipart threshold, as a multipart upload above it.
func (s *Store) Put(ctx context.Context, key string, data []byte, cond objectstore.Condition) (string, error) {
	if err := s.checkKey("put", key); err != nil {
		return "", err
	}
	if int64(len(data)) > s.tuning.MultipartThreshold {
		return s.putMultipart(ctx, key, data, cond)
	}
	var etag string
	attempts, err := s.do(ctx, "put", int64(len(data)), func(a *attempt) error {
		var err error
		etag, err = s.wire.Put(a.ctx, s.full(key), data, cond)
		return err
	})
	if err != nil {
		return s.settle(ctx, "put", key, err, attempts, func() string { return singlePartETag(data) })
	}
	return quoteETag(etag), nil
}

// settle turns the final error of a write into the caller's answer. A
// conditional write that lost (412, or 404 for If-Match) after an earlier
// attempt failed without an answer may have lost to that very attempt,
// which landed: when the stored ETag is the one our bytes get, the write
// succeeded. Otherwise, and when the store's ETags are not content hashes
// (SSE-KMS), the loss stands.
func (s *Store) settle(ctx context.Context, op, key string, err error, attempts int,
	ours func() string) (string, error) {
	f := s.classify(err)
	lost := f == failPrecondition || f == failNotExist || f == failMissingUpload
	if attempts > 1 && lost && ctx.Err() == nil {
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.tuning.RequestTimeout)
		defer cancel()
		info, herr := s.Stat(hctx, key)
		if want := ours(); herr == nil && info.ETag == want {
			return want, nil
		}
	}
	return "", s.fail(op, key, err, true)
}

// Delete removes key; a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.checkKey("delete", key); err != nil {
		return err
	}
	_, err := s.do(ctx, "delete", 0, func(a *attempt) error {
		err := s.wire.Delete(a.ctx, s.full(key))
		if err != nil && s.classify(err) == failNotExist {
			return nil
		}
		return err
	})
	if err != nil {
		return s.fail("delete", key, err, false)
	}
	return nil
}

// abortTimeout bounds the clean-up of a failed multipart upload, which runs
// even when the caller's context has ended.
const abortTimeout = 30 * time.Second
