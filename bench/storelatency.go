package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// latencyProxy stands between a launched broker and the run's MinIO and
// holds every request for a fixed time before forwarding it: a loopback
// MinIO answers in well under a millisecond, while a bucket across a
// network takes tens of milliseconds a request, and the upload pipeline
// and read cache are built for the latter. The Host header is passed
// through unchanged, so the client's request signatures stay valid.
type latencyProxy struct {
	srv *http.Server
	ln  net.Listener
}

func startLatencyProxy(target string, delay time.Duration) (*latencyProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("bench: store latency proxy: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: store latency proxy: %w", err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Host = r.In.Host
	}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		rp.ServeHTTP(w, r)
	})
	p := &latencyProxy{srv: &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}, ln: ln}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// endpoint is the proxy's URL, to use in place of the server's.
func (p *latencyProxy) endpoint() string { return "http://" + p.ln.Addr().String() }

func (p *latencyProxy) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("bench: store latency proxy: %w", err)
	}
	return nil
}
