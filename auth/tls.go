package auth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// ClientAuth is ssl.client.auth: whether a TLS listener asks clients for a
// certificate.
type ClientAuth int

// The ssl.client.auth values. A certificate a client does send is always
// verified against the client CA.
const (
	ClientAuthNone      ClientAuth = iota // "none": no certificate asked (Kafka's default)
	ClientAuthRequested                   // "requested": asked, optional
	ClientAuthRequired                    // "required": a verified certificate or no connection
)

// ParseClientAuth parses an ssl.client.auth value.
func ParseClientAuth(s string) (ClientAuth, error) {
	switch s {
	case "", "none":
		return ClientAuthNone, nil
	case "requested":
		return ClientAuthRequested, nil
	case "required":
		return ClientAuthRequired, nil
	}
	return 0, fmt.Errorf("auth: ssl.client.auth %q: want required, requested or none", s)
}

// String returns the ssl.client.auth value.
func (c ClientAuth) String() string {
	switch c {
	case ClientAuthRequested:
		return "requested"
	case ClientAuthRequired:
		return "required"
	}
	return "none"
}

// DefaultReloadCheck is how often, at most, a TLS listener looks at its
// files' modification times.
const DefaultReloadCheck = 5 * time.Second

// TLSOptions configures a TLS listener.
type TLSOptions struct {
	// CertFile and KeyFile are the server's PEM certificate chain and key
	// (ssl.keystore.location).
	CertFile, KeyFile string
	// CAFile holds the PEM certificates of the CAs client certificates
	// are verified against (ssl.truststore.location); required unless
	// ClientAuth is none.
	CAFile string
	// ClientAuth is ssl.client.auth; default none.
	ClientAuth ClientAuth
	// ReloadCheck is how often at most the files are checked for a change
	// (modification time or size); default DefaultReloadCheck.
	ReloadCheck time.Duration
	// OnReload, if set, is told of each reload attempt: nil after the new
	// files were loaded, else why they were not and the old ones stay.
	OnReload func(error)
}

// TLSReloader serves a listener's TLS configuration and reloads it when its
// files change, without a restart: a handshake at least ReloadCheck after
// the last check stats the files and, if one changed, reads them again.
// Connections already open keep the configuration they were made with.
type TLSReloader struct {
	opts TLSOptions

	mu      sync.Mutex // guards the fields below
	current *tls.Config
	stamps  []fileStamp
	checked time.Time
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// NewTLSReloader loads the files once; an error there is a configuration
// error for the operator.
func NewTLSReloader(opts TLSOptions) (*TLSReloader, error) {
	if opts.CertFile == "" || opts.KeyFile == "" {
		return nil, errors.New("auth: TLS needs a certificate and a key file")
	}
	if opts.ClientAuth != ClientAuthNone && opts.CAFile == "" {
		return nil, fmt.Errorf("auth: ssl.client.auth=%s needs a client CA file", opts.ClientAuth)
	}
	if opts.ReloadCheck <= 0 {
		opts.ReloadCheck = DefaultReloadCheck
	}
	r := &TLSReloader{opts: opts}
	stamps, err := r.stat()
	if err != nil {
		return nil, err
	}
	cfg, err := r.load()
	if err != nil {
		return nil, err
	}
	r.current, r.stamps, r.checked = cfg, stamps, time.Now()
	return r, nil
}

// Config returns the tls.Config to give tls.NewListener: each handshake
// takes the current configuration through GetConfigForClient.
func (r *TLSReloader) Config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return r.Current(), nil
		},
	}
}

// Current returns the configuration in force, first reloading the files
// if the check is due and one of them changed.
func (r *TLSReloader) Current() *tls.Config {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) < r.opts.ReloadCheck {
		return r.current
	}
	r.checked = time.Now()
	stamps, err := r.stat()
	if err == nil && equalStamps(stamps, r.stamps) {
		return r.current
	}
	var cfg *tls.Config
	if err == nil {
		cfg, err = r.load()
	}
	if err == nil {
		r.current, r.stamps = cfg, stamps
	}
	if r.opts.OnReload != nil {
		r.opts.OnReload(err)
	}
	return r.current
}

func (r *TLSReloader) files() []string {
	fs := []string{r.opts.CertFile, r.opts.KeyFile}
	if r.opts.CAFile != "" {
		fs = append(fs, r.opts.CAFile)
	}
	return fs
}

func (r *TLSReloader) stat() ([]fileStamp, error) {
	var out []fileStamp
	for _, f := range r.files() {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, fmt.Errorf("auth: TLS file: %w", err)
		}
		out = append(out, fileStamp{mod: fi.ModTime(), size: fi.Size()})
	}
	return out, nil
}

func equalStamps(a, b []fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].mod.Equal(b[i].mod) || a[i].size != b[i].size {
			return false
		}
	}
	return true
}

// load reads the files into a fresh configuration.
func (r *TLSReloader) load() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(r.opts.CertFile, r.opts.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("auth: TLS certificate %s, key %s: %w", r.opts.CertFile, r.opts.KeyFile, err)
	}
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
	}
	if r.opts.CAFile != "" {
		pem, err := os.ReadFile(r.opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("auth: TLS client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("auth: TLS client CA %s: no PEM certificate in it", r.opts.CAFile)
		}
		cfg.ClientCAs = pool
	}
	switch r.opts.ClientAuth {
	case ClientAuthRequested:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case ClientAuthRequired:
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		cfg.ClientAuth = tls.NoClientCert
	}
	return cfg, nil
}
