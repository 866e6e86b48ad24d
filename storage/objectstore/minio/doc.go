// Package minio is the objectstore.Store backend on minio-go, for MinIO
// servers and any other S3-compatible endpoint reached by host and port.
//
// Credentials come from a chain: the AWS variables (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), then MinIO's
// (MINIO_ROOT_USER/MINIO_ROOT_PASSWORD, MINIO_ACCESS_KEY/MINIO_SECRET_KEY),
// then the AWS shared credentials file under AWS_PROFILE. The region is
// Options.Region, else AWS_REGION, else us-east-1 (MinIO's default), so
// that no bucket-location request precedes the first call.
//
// Semantics, retries, deadlines and multipart uploads are the ones every
// S3-protocol backend shares (see the remote package); minio-go's own
// retries are off (MaxRetries 1) so that one policy retries transient
// failures only.
//
// The package moves bytes; it never knows what they hold.
package minio
