package remote

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// putMultipart uploads data as a multipart upload: parts in parallel, each
// retried on its own, then one completion that carries cond. A failed
// upload is aborted so that its parts do not linger in the bucket.
func (s *Store) putMultipart(ctx context.Context, key string, data []byte, cond objectstore.Condition) (string, error) {
	var id string
	_, err := s.do(ctx, "create multipart", 0, func(a *attempt) error {
		var err error
		id, err = s.wire.CreateMultipart(a.ctx, s.full(key))
		return err
	})
	if err != nil {
		return "", s.fail("create multipart", key, err, false)
	}
	partSize := s.partSize(int64(len(data)))
	etags, err := s.uploadParts(ctx, key, id, data, partSize)
	if err != nil {
		s.abort(ctx, key, id)
		return "", s.fail("upload part", key, err, false)
	}
	var etag string
	attempts, err := s.do(ctx, "complete multipart", 0, func(a *attempt) error {
		var err error
		etag, err = s.wire.CompleteMultipart(a.ctx, s.full(key), id, etags, cond)
		return err
	})
	if err != nil {
		s.abort(ctx, key, id)
		return s.settle(ctx, "complete multipart", key, err, attempts, func() string {
			return multipartETag(data, partSize)
		})
	}
	return quoteETag(etag), nil
}

// partSize is the configured part size, grown when an object would need
// more parts than S3 allows.
func (s *Store) partSize(size int64) int64 {
	return max(s.tuning.PartSize, (size+maxParts-1)/maxParts)
}

// uploadParts uploads data in parts of partSize from PartConcurrency
// goroutines and returns the parts' ETags in order. The first failure
// stops the others.
func (s *Store) uploadParts(ctx context.Context, key, id string, data []byte, partSize int64) ([]string, error) {
	n := int((int64(len(data)) + partSize - 1) / partSize)
	etags := make([]string, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for range min(s.tuning.PartConcurrency, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				part := data[int64(i)*partSize : min(int64(i+1)*partSize, int64(len(data)))]
				etag, err := s.uploadPart(ctx, key, id, i+1, part)
				if err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
				etags[i] = etag
			}
		})
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return etags, firstErr
}

// uploadPart uploads one part, retrying transient failures.
func (s *Store) uploadPart(ctx context.Context, key, id string, number int, part []byte) (string, error) {
	var etag string
	_, err := s.do(ctx, "upload part", int64(len(part)), func(a *attempt) error {
		var err error
		etag, err = s.wire.UploadPart(a.ctx, s.full(key), id, number, part)
		return err
	})
	return etag, err
}

// abort discards a failed upload, even when ctx has ended. Its failure is
// not reported: the upload is already lost, and a bucket lifecycle rule
// for incomplete uploads is the backstop.
func (s *Store) abort(ctx context.Context, key, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	s.do(ctx, "abort multipart", 0, func(a *attempt) error {
		err := s.wire.AbortMultipart(a.ctx, s.full(key), id)
		if err != nil && s.classify(err) == failMissingUpload {
			return nil
		}
		return err
	})
}
