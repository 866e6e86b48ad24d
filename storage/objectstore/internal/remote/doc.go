// Package remote is what the two S3-protocol backends, s3 (aws-sdk-go-v2)
// and minio (minio-go), share: everything about an objectstore.Store except
// the SDK calls themselves.
//
// A backend implements Wire, one attempt of each S3 request with its SDK,
// and reports an error's HTTP status and S3 error code. Store turns a Wire
// into an objectstore.Store with the same semantics on both SDKs:
//
//   - every key is checked with objectstore.ValidateKey and stored under the
//     store's key prefix (List strips it again);
//   - each attempt has its own deadline, longer for larger bodies; failed
//     attempts are retried with exponential backoff and jitter when the
//     failure is transient (5xx, throttling, 408, connection resets and
//     refusals, attempt timeouts), a bounded number of times, and never on a
//     definite answer such as 404 or 412;
//   - 404 is ErrNotExist (ErrPrecondition for a put If-Match, as the
//     interface says), 412 is ErrPrecondition, a range past the end is
//     ErrInvalidRange and a range at the end is empty;
//   - objects above a threshold go up as multipart uploads, parts in
//     parallel and retried one by one, the condition applied at completion,
//     and aborted on failure;
//   - a conditional put that loses after an earlier attempt of the same call
//     may have landed is checked against the stored ETag, so that a lost
//     answer does not turn our own write into a precondition failure.
//
// The package never imports an SDK.
package remote
