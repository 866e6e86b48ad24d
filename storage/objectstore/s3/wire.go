package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// wire makes one attempt of each request with the SDK (remote.Wire).
type wire struct {
	client *awss3.Client
	bucket string
	http   *http.Client
}

func (w *wire) Open(ctx context.Context, key string, off, length int64) (io.ReadCloser, int64, error) {
	in := &awss3.GetObjectInput{Bucket: &w.bucket, Key: &key}
	if length >= 0 {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", off, off+length-1))
	} else if off > 0 {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-", off))
	}
	out, err := w.client.GetObject(ctx, in)
	if err != nil {
		return nil, 0, err
	}
	return out.Body, aws.ToInt64(out.ContentLength), nil
}

func (w *wire) Put(ctx context.Context, key string, data []byte, cond objectstore.Condition) (string, error) {
	in := &awss3.PutObjectInput{Bucket: &w.bucket, Key: &key, Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data)))}
	in.IfNoneMatch, in.IfMatch = condition(cond)
	out, err := w.client.PutObject(ctx, in)
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

// condition returns the If-None-Match and If-Match headers of cond.
func condition(cond objectstore.Condition) (ifNoneMatch, ifMatch *string) {
	if cond.IfAbsent {
		ifNoneMatch = aws.String("*")
	}
	if cond.IfMatch != "" {
		ifMatch = aws.String(cond.IfMatch)
	}
	return ifNoneMatch, ifMatch
}

func (w *wire) Head(ctx context.Context, key string) (objectstore.Info, error) {
	out, err := w.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &w.bucket, Key: &key})
	if err != nil {
		return objectstore.Info{}, err
	}
	return objectstore.Info{Key: key, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag),
		Modified: aws.ToTime(out.LastModified)}, nil
}

func (w *wire) ListPage(ctx context.Context, prefix, startAfter string) ([]objectstore.Info, bool, error) {
	in := &awss3.ListObjectsV2Input{Bucket: &w.bucket, Prefix: &prefix, MaxKeys: aws.Int32(1000)}
	if startAfter != "" {
		in.StartAfter = &startAfter
	}
	out, err := w.client.ListObjectsV2(ctx, in)
	if err != nil {
		return nil, false, err
	}
	page := make([]objectstore.Info, len(out.Contents))
	for i, o := range out.Contents {
		page[i] = objectstore.Info{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), ETag: aws.ToString(o.ETag),
			Modified: aws.ToTime(o.LastModified)}
	}
	return page, aws.ToBool(out.IsTruncated), nil
}

func (w *wire) Delete(ctx context.Context, key string) error {
	_, err := w.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &w.bucket, Key: &key})
	return err
}

func (w *wire) CreateMultipart(ctx context.Context, key string) (string, error) {
	out, err := w.client.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: &w.bucket, Key: &key})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.UploadId), nil
}

func (w *wire) UploadPart(ctx context.Context, key, uploadID string, number int, data []byte) (string, error) {
	out, err := w.client.UploadPart(ctx, &awss3.UploadPartInput{Bucket: &w.bucket, Key: &key, UploadId: &uploadID,
		PartNumber: aws.Int32(int32(number)), Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

func (w *wire) CompleteMultipart(ctx context.Context, key, uploadID string, partETags []string, cond objectstore.Condition) (string, error) {
	parts := make([]types.CompletedPart, len(partETags))
	for i, etag := range partETags {
		parts[i] = types.CompletedPart{ETag: aws.String(etag), PartNumber: aws.Int32(int32(i + 1))}
	}
	in := &awss3.CompleteMultipartUploadInput{Bucket: &w.bucket, Key: &key, UploadId: &uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
	in.IfNoneMatch, in.IfMatch = condition(cond)
	out, err := w.client.CompleteMultipartUpload(ctx, in)
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

func (w *wire) AbortMultipart(ctx context.Context, key, uploadID string) error {
	_, err := w.client.AbortMultipartUpload(ctx, &awss3.AbortMultipartUploadInput{Bucket: &w.bucket, Key: &key, UploadId: &uploadID})
	return err
}

// Status reads the HTTP status from the SDK's response error and the S3
// code from its API error.
func (w *wire) Status(err error) (int, string) {
	status, code := 0, ""
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	return status, code
}

func (w *wire) Close() error {
	w.http.CloseIdleConnections()
	return nil
}
