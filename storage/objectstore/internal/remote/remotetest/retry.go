package remotetest

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// Retry: through a proxy that fails requests on purpose, transient
// failures (503, connection resets, hung requests, lost answers) are
// retried until the request succeeds, a bounded number of times, and
// definite answers (412, 404) are not retried at all.
func Retry(t *testing.T, srv *miniotest.Server, open Opener) {
	bucket := srv.NewBucket(t)
	proxy := miniotest.NewFaultProxy(t, srv.Addr)
	var retries atomic.Int64
	tuning := smallParts
	tuning.MaxAttempts, tuning.BaseDelay, tuning.MaxDelay = 4, time.Millisecond, 10*time.Millisecond
	tuning.RequestTimeout = 500 * time.Millisecond
	tuning.OnRetry = func(string, error) { retries.Add(1) }
	s := open(t, proxy.Endpoint(), bucket, "retry", tuning)
	mustPut(t, s, "there", []byte("there"), objectstore.Condition{})
	for _, c := range retryCases {
		t.Run(c.name, func(t *testing.T) {
			proxy.Reset()
			retries.Store(0)
			proxy.Inject(c.fault, c.times, c.match)
			c.run(t, s)
			if got := proxy.Requests(c.method); got != c.wantRequests {
				t.Errorf("%d %s requests reached the proxy, want %d", got, c.method, c.wantRequests)
			}
			got := retries.Load()
			if c.wantRetries >= 0 && got != int64(c.wantRetries) || c.wantRetries < 0 && (got < 1 || got >= int64(c.wantRequests)) {
				t.Errorf("OnRetry called %d times, want %d", got, c.wantRetries)
			}
		})
	}
}

type retryCase struct {
	name         string
	fault        miniotest.Fault
	times        int
	match        func(*http.Request) bool
	run          func(t *testing.T, s objectstore.Store)
	method       string // the requests counted
	wantRequests int
	wantRetries  int // -1: at least one (Go's transport may retry an idempotent request on a reused connection itself)
}

var retryCases = []retryCase{
	{"503 on put", miniotest.Unavailable, 2, miniotest.Method("PUT"), func(t *testing.T, s objectstore.Store) {
		mustPut(t, s, "k503", []byte("v"), objectstore.Condition{})
		mustGet(t, s, "k503", []byte("v"))
	}, "PUT", 3, 2},
	{"reset on get", miniotest.Reset, 2, miniotest.Method("GET"), func(t *testing.T, s objectstore.Store) {
		mustGet(t, s, "there", []byte("there"))
	}, "GET", 3, -1},
	{"hung stat", miniotest.Hang, 1, miniotest.Method("HEAD"), func(t *testing.T, s objectstore.Store) {
		if _, err := s.Stat(t.Context(), "there"); err != nil {
			t.Fatalf("Stat after a hung attempt: %v", err)
		}
	}, "HEAD", 2, 1},
	{"503 on one part", miniotest.Unavailable, 1, miniotest.MethodWithQuery("PUT", "partNumber"), func(t *testing.T, s objectstore.Store) {
		data := randomBytes(11<<20, 4)
		if etag := mustPut(t, s, "parts", data, objectstore.Condition{}); partsOf(etag) != 3 {
			t.Fatalf("ETag %s: want 3 parts", etag)
		}
		mustGet(t, s, "parts", data)
	}, "PUT", 4, 1},
	{"lost answer to a put if absent", miniotest.LoseAnswer, 1, miniotest.Method("PUT"), func(t *testing.T, s objectstore.Store) {
		etag := mustPut(t, s, "lost", []byte("mine"), objectstore.Condition{IfAbsent: true})
		checkETag(t, s, "lost", etag)
	}, "PUT", 2, 1},
	{"lost answer to a multipart completion", miniotest.LoseAnswer, 1, miniotest.MethodWithQuery("POST", "uploadId"), func(t *testing.T, s objectstore.Store) {
		etag := mustPut(t, s, "lost-mp", randomBytes(7<<20, 5), objectstore.Condition{IfAbsent: true})
		checkETag(t, s, "lost-mp", etag)
	}, "POST", 3, 1}, // create, and two completions
	{"no retry on 412", 0, 0, nil, func(t *testing.T, s objectstore.Store) {
		if _, err := s.Put(t.Context(), "there", []byte("x"), objectstore.Condition{IfAbsent: true}); !objectstore.IsPrecondition(err) {
			t.Fatalf("Put IfAbsent on an existing key = %v, want IsPrecondition", err)
		}
	}, "PUT", 1, 0},
	{"no retry on 404", 0, 0, nil, func(t *testing.T, s objectstore.Store) {
		if _, err := s.Get(t.Context(), "missing"); !objectstore.IsNotExist(err) {
			t.Fatalf("Get(missing) = %v, want IsNotExist", err)
		}
	}, "GET", 1, 0},
	{"attempts are bounded", miniotest.Unavailable, 100, miniotest.Method("PUT"), func(t *testing.T, s objectstore.Store) {
		_, err := s.Put(t.Context(), "never", []byte("x"), objectstore.Condition{})
		if err == nil || !strings.Contains(err.Error(), "ServiceUnavailable") {
			t.Fatalf("Put against a store that always answers 503 = %v, want the 503 error", err)
		}
	}, "PUT", 4, 3},
}

// checkETag fails unless key's stored ETag is etag.
func checkETag(t *testing.T, s objectstore.Store, key, etag string) {
	t.Helper()
	info, err := s.Stat(t.Context(), key)
	if err != nil || info.ETag != etag {
		t.Fatalf("Stat(%q) = %+v, %v; want ETag %s", key, info, err, etag)
	}
}
