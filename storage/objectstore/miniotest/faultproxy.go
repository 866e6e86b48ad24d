package miniotest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Fault is what FaultProxy does to a request instead of forwarding it.
type Fault int

const (
	// Unavailable answers 503 with S3's ServiceUnavailable error.
	Unavailable Fault = iota + 1
	// Reset reads the request and resets the connection (TCP RST) without
	// an answer.
	Reset
	// Hang holds the request without an answer until the client gives up
	// (or a minute passes).
	Hang
	// PreconditionFailed answers 412, as a lost conditional write.
	PreconditionFailed
	// LoseAnswer forwards the request, so that the server acts on it, then
	// resets the connection instead of passing the answer on.
	LoseAnswer
)

// FaultProxy is a reverse proxy on loopback in front of a server that
// counts the requests it sees and fails the ones it is told to.
type FaultProxy struct {
	// Addr is the proxy's HOST:PORT.
	Addr string
	srv  *httptest.Server
	next http.Handler

	mu      sync.Mutex // guards planned and counts
	planned []plannedFault
	counts  map[string]int
}

type plannedFault struct {
	fault Fault
	match func(*http.Request) bool
}

// NewFaultProxy starts a proxy to the server at target (HOST:PORT),
// closed when the test ends. Requests are signed for the proxy's address,
// which it keeps as the Host header, so signatures stay valid.
func NewFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	p := &FaultProxy{counts: map[string]int{}}
	p.next = httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: target})
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	p.Addr = p.srv.Listener.Addr().String()
	t.Cleanup(p.srv.Close)
	return p
}

// Endpoint is the proxy's base URL.
func (p *FaultProxy) Endpoint() string { return "http://" + p.Addr }

// Inject makes the next n requests that match (nil: every request) fail
// with f, in the order injected.
func (p *FaultProxy) Inject(f Fault, n int, match func(*http.Request) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range n {
		p.planned = append(p.planned, plannedFault{f, match})
	}
}

// Method matches requests of one HTTP method.
func Method(m string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Method == m }
}

// MethodWithQuery matches requests of one HTTP method whose URL has the
// query parameter param (with any value): "partNumber" for part uploads,
// "uploadId" with POST for multipart completions.
func MethodWithQuery(m, param string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Method == m && r.URL.Query().Has(param) }
}

// Requests returns how many requests of method (empty: any) the proxy has
// seen, faulted ones included.
func (p *FaultProxy) Requests(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if method != "" {
		return p.counts[method]
	}
	n := 0
	for _, c := range p.counts {
		n += c
	}
	return n
}

// Reset forgets the counts and the faults not yet used.
func (p *FaultProxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.planned, p.counts = nil, map[string]int{}
}

func (p *FaultProxy) serve(w http.ResponseWriter, r *http.Request) {
	switch p.take(r) {
	case Unavailable:
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>ServiceUnavailable</Code><Message>injected by FaultProxy</Message></Error>`)
	case PreconditionFailed:
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusPreconditionFailed)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>injected by FaultProxy</Message></Error>`)
	case Reset:
		io.Copy(io.Discard, r.Body)
		resetConn(w)
	case LoseAnswer:
		p.next.ServeHTTP(httptest.NewRecorder(), r)
		resetConn(w)
	case Hang:
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	default:
		p.next.ServeHTTP(w, r)
	}
}

// take counts r and returns the first planned fault it matches, if any.
func (p *FaultProxy) take(r *http.Request) Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[r.Method]++
	for i, f := range p.planned {
		if f.match == nil || f.match(r) {
			p.planned = append(p.planned[:i], p.planned[i+1:]...)
			return f.fault
		}
	}
	return 0
}

// resetConn closes the request's connection with a TCP RST.
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}
