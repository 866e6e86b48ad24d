package remote

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// retriable reports whether a failed attempt may succeed if tried again:
// the server was overloaded or broke (5xx, 429, 408, S3 throttling codes),
// a conditional write collided with another in flight (409), the
// connection failed, or the attempt ran out of time. A definite answer
// (404, 412, 403, 400 ...) is never retried.
func (s *Store) retriable(err error) bool {
	if errors.Is(err, errAttemptTimeout) {
		return true
	}
	if status, code := s.wire.Status(err); status != 0 || code != "" {
		return retriableResponse(status, code)
	}
	return retriableTransport(err)
}

// retriableCodes are S3 error codes that say "try again", whatever the
// status that came with them.
var retriableCodes = map[string]bool{
	"SlowDown": true, "Throttling": true, "ThrottlingException": true, "RequestLimitExceeded": true,
	"RequestTimeout": true, "RequestTimeTooSkewed": true, "InternalError": true, "ServiceUnavailable": true,
	"XMinioServerNotInitialized": true, "ConditionalRequestConflict": true, "OperationAborted": true,
}

func retriableResponse(status int, code string) bool {
	return status >= 500 || status == http.StatusTooManyRequests || status == http.StatusRequestTimeout ||
		retriableCodes[code]
}

// retriableTransport reports whether err, which carries no response, is a
// network failure: a refused, reset or broken connection, a body cut short,
// a network timeout.
func retriableTransport(err error) bool {
	for _, target := range []error{io.ErrUnexpectedEOF, io.EOF, syscall.ECONNRESET, syscall.ECONNREFUSED,
		syscall.ECONNABORTED, syscall.EPIPE, syscall.ETIMEDOUT} {
		if errors.Is(err, target) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// failure names what a failed request meant for the caller.
type failure int

const (
	failPlain         failure = iota
	failNotExist              // the key is missing
	failPrecondition          // a conditional write lost
	failInvalidRange          // the range starts past the end
	failMissingUpload         // the multipart upload is gone
)

// classify reads a final error's response.
func (s *Store) classify(err error) failure {
	status, code := s.wire.Status(err)
	switch {
	case code == "NoSuchUpload":
		return failMissingUpload
	case code == "NoSuchBucket":
		return failPlain
	case status == http.StatusNotFound || code == "NoSuchKey" || code == "NotFound":
		return failNotExist
	case status == http.StatusPreconditionFailed || code == "PreconditionFailed":
		return failPrecondition
	case status == http.StatusRequestedRangeNotSatisfiable || code == "InvalidRange":
		return failInvalidRange
	}
	return failPlain
}

// fail wraps the final error of op on key with the package prefix, the
// place, and the objectstore sentinel its response means. A missing key is
// a lost precondition for writes (a put If-Match on a missing key); a
// missing bucket or multipart upload is neither.
func (s *Store) fail(op, key string, err error, write bool) error {
	var sentinel error
	switch s.classify(err) {
	case failNotExist:
		sentinel = objectstore.ErrNotExist
		if write {
			sentinel = objectstore.ErrPrecondition
		}
	case failPrecondition:
		sentinel = objectstore.ErrPrecondition
	case failInvalidRange:
		sentinel = objectstore.ErrInvalidRange
	}
	place := fmt.Sprintf("%s: %s %s", s.name, op, s.where(key))
	if status, code := s.wire.Status(err); code != "" && !strings.Contains(err.Error(), code) {
		place += fmt.Sprintf(": HTTP %d %s", status, code)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		return fmt.Errorf("%s: %w: %w", place, sentinel, err)
	}
	return fmt.Errorf("%s: %w", place, err)
}
