package minio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	miniogo "github.com/minio/minio-go/v7"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// wire makes one attempt of each request with minio-go (remote.Wire).
type wire struct {
	core      miniogo.Core
	bucket    string
	transport *http.Transport
}

func (w *wire) Open(ctx context.Context, key string, off, length int64) (io.ReadCloser, int64, error) {
	var opts miniogo.GetObjectOptions
	var err error
	if length >= 0 {
		err = opts.SetRange(off, off+length-1)
	} else if off > 0 {
		err = opts.SetRange(off, 0)
	}
	if err != nil {
		return nil, 0, err
	}
	body, info, _, err := w.core.GetObject(ctx, w.bucket, key, opts)
	if err != nil {
		return nil, 0, err
	}
	return body, info.Size, nil
}

func (w *wire) Put(ctx context.Context, key string, data []byte, cond objectstore.Condition) (string, error) {
	info, err := w.core.PutObject(ctx, w.bucket, key, bytes.NewReader(data), int64(len(data)), "", "", putOptions(cond))
	if err != nil {
		return "", err
	}
	return info.ETag, nil
}

// putOptions carries cond as If-None-Match: * and If-Match (minio-go adds
// the quotes).
func putOptions(cond objectstore.Condition) miniogo.PutObjectOptions {
	var opts miniogo.PutObjectOptions
	if cond.IfAbsent {
		opts.SetMatchETagExcept("*")
	}
	if cond.IfMatch != "" {
		opts.SetMatchETag(strings.Trim(cond.IfMatch, `"`))
	}
	return opts
}

func (w *wire) Head(ctx context.Context, key string) (objectstore.Info, error) {
	info, err := w.core.StatObject(ctx, w.bucket, key, miniogo.StatObjectOptions{})
	if err != nil {
		return objectstore.Info{}, err
	}
	return objectstore.Info{Key: key, Size: info.Size, ETag: info.ETag, Modified: info.LastModified}, nil
}

func (w *wire) ListPage(ctx context.Context, prefix, startAfter string) ([]objectstore.Info, bool, error) {
	const pageSize = 1000
	noOwner := false
	opts := miniogo.ListObjectsOptions{Prefix: prefix, Recursive: true, MaxKeys: pageSize,
		StartAfter: startAfter, FetchOwner: &noOwner}
	var page []objectstore.Info
	for o := range w.core.ListObjectsIter(ctx, w.bucket, opts) {
		if o.Err != nil {
			return nil, false, o.Err
		}
		page = append(page, objectstore.Info{Key: o.Key, Size: o.Size, ETag: o.ETag, Modified: o.LastModified})
		if len(page) == pageSize {
			return page, true, nil
		}
	}
	return page, false, ctx.Err()
}

func (w *wire) Delete(ctx context.Context, key string) error {
	return w.core.RemoveObject(ctx, w.bucket, key, miniogo.RemoveObjectOptions{})
}

func (w *wire) CreateMultipart(ctx context.Context, key string) (string, error) {
	return w.core.NewMultipartUpload(ctx, w.bucket, key, miniogo.PutObjectOptions{})
}

func (w *wire) UploadPart(ctx context.Context, key, uploadID string, number int, data []byte) (string, error) {
	part, err := w.core.PutObjectPart(ctx, w.bucket, key, uploadID, number, bytes.NewReader(data), int64(len(data)),
		miniogo.PutObjectPartOptions{})
	if err != nil {
		return "", err
	}
	return part.ETag, nil
}

func (w *wire) CompleteMultipart(ctx context.Context, key, uploadID string, partETags []string, cond objectstore.Condition) (string, error) {
	parts := make([]miniogo.CompletePart, len(partETags))
	for i, etag := range partETags {
		parts[i] = miniogo.CompletePart{PartNumber: i + 1, ETag: etag}
	}
	info, err := w.core.CompleteMultipartUpload(ctx, w.bucket, key, uploadID, parts, putOptions(cond))
	if err != nil {
		return "", err
	}
	return info.ETag, nil
}

func (w *wire) AbortMultipart(ctx context.Context, key, uploadID string) error {
	return w.core.AbortMultipartUpload(ctx, w.bucket, key, uploadID)
}

// Status reads minio-go's ErrorResponse.
func (w *wire) Status(err error) (int, string) {
	var er miniogo.ErrorResponse
	if errors.As(err, &er) {
		return er.StatusCode, er.Code
	}
	return 0, ""
}

func (w *wire) Close() error {
	w.transport.CloseIdleConnections()
	return nil
}
