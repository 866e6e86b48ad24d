// Package s3 is the objectstore.Store backend for Amazon S3 and
// S3-compatible servers (MinIO, Ceph RGW, R2 ...), on aws-sdk-go-v2.
//
// Credentials and region come from the SDK's default chain: the
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN variables,
// AWS_PROFILE and the shared config and credentials files, web identity,
// and the ECS and EC2 instance roles; AWS_REGION (or Options.Region, which
// wins) names the region, us-east-1 when nothing does. Options.Endpoint
// points the client at another server; PathStyle puts the bucket in the
// path, as MinIO wants.
//
// Semantics, retries, deadlines and multipart uploads are the ones every
// S3-protocol backend shares (see the remote package): conditional writes
// are S3's If-None-Match: * and If-Match; the SDK's own retryer is off so
// that one policy retries transient failures only. Request and response
// checksums are left to the SDK's "when required" mode: TCP and the
// object format's own checks cover the payload, and MinIO and S3 agree on
// that mode.
//
// The package moves bytes; it never knows what they hold.
package s3
