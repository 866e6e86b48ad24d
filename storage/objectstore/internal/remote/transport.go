package remote

import (
	"net"
	"net/http"
	"time"
)

// NewTransport returns the HTTP transport a store sends all its requests
// through, set up by TuneTransport.
func NewTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	TuneTransport(tr)
	return tr
}

// TuneTransport sets up tr for a store: one pool of keep-alive connections
// with enough idle ones per host for parallel part uploads and block reads,
// and no transparent gzip (objects are opaque bytes). Deadlines are per
// attempt, set by Store, so only the connection-level ones are set here.
// TLS settings (a custom CA bundle) are left alone.
func TuneTransport(tr *http.Transport) {
	tr.Proxy = http.ProxyFromEnvironment
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.ForceAttemptHTTP2 = true
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = 64
	tr.IdleConnTimeout = 90 * time.Second
	tr.TLSHandshakeTimeout = 10 * time.Second
	tr.ExpectContinueTimeout = time.Second
	tr.DisableCompression = true
}
