package remote

import (
	"fmt"
	"time"
)

// Tuning holds the knobs both S3-protocol backends share. Zero fields take
// the defaults below.
type Tuning struct {
	// MultipartThreshold: objects larger than this go up as multipart
	// uploads (default 64 MiB).
	MultipartThreshold int64
	// PartSize is the size of each part but the last (default 16 MiB; S3
	// and MinIO want at least 5 MiB).
	PartSize int64
	// PartConcurrency is how many parts of one object upload at once
	// (default 4).
	PartConcurrency int
	// MaxAttempts bounds the attempts of one request, the first included
	// (default 5; 1 disables retries).
	MaxAttempts int
	// BaseDelay and MaxDelay bound the exponential backoff between
	// attempts (defaults 100 ms and 5 s); each wait is jittered.
	BaseDelay, MaxDelay time.Duration
	// RequestTimeout is one attempt's deadline before its body is counted
	// (default 10 s). It stays well under the read cache's 30 s block-load
	// deadline, so that a GET stalled on one connection is tried again on
	// another within the deadline rather than taking all of it.
	RequestTimeout time.Duration
	// MinThroughput, in bytes/s, extends an attempt's deadline by the time
	// its body takes at this rate (default 1 MiB/s).
	MinThroughput int64
	// OnRetry, when set, is called before each retry with the request's
	// operation and the error of the failed attempt.
	OnRetry func(op string, err error)
}

// Defaults of Tuning.
const (
	DefaultMultipartThreshold = 64 << 20
	DefaultPartSize           = 16 << 20
	MinPartSize               = 5 << 20
	maxParts                  = 10_000
)

// withDefaults returns t with its zero fields filled.
func (t Tuning) withDefaults() Tuning {
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&t.MultipartThreshold, DefaultMultipartThreshold)
	def(&t.PartSize, DefaultPartSize)
	def(&t.MinThroughput, 1<<20)
	if t.PartConcurrency == 0 {
		t.PartConcurrency = 4
	}
	if t.MaxAttempts == 0 {
		t.MaxAttempts = 5
	}
	if t.BaseDelay == 0 {
		t.BaseDelay = 100 * time.Millisecond
	}
	if t.MaxDelay == 0 {
		t.MaxDelay = 5 * time.Second
	}
	if t.RequestTimeout == 0 {
		t.RequestTimeout = 10 * time.Second
	}
	return t
}

// validate rejects settings no server accepts or that make no sense.
func (t Tuning) validate() error {
	switch {
	case t.PartSize < MinPartSize:
		return fmt.Errorf("part size %d: want at least %d (5 MiB)", t.PartSize, MinPartSize)
	case t.MultipartThreshold < t.PartSize:
		return fmt.Errorf("multipart threshold %d: want at least the part size %d", t.MultipartThreshold, t.PartSize)
	case t.PartConcurrency < 1 || t.MaxAttempts < 1 || t.MinThroughput < 1:
		return fmt.Errorf("part concurrency %d, max attempts %d, min throughput %d: want each at least 1",
			t.PartConcurrency, t.MaxAttempts, t.MinThroughput)
	case t.BaseDelay < 0 || t.MaxDelay < t.BaseDelay || t.RequestTimeout < 0:
		return fmt.Errorf("delays %s..%s, request timeout %s: want 0 <= base <= max and a timeout >= 0",
			t.BaseDelay, t.MaxDelay, t.RequestTimeout)
	}
	return nil
}
