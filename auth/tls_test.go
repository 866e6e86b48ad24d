package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment-io/sediment/internal/testwait"
)

// testPKI is a CA with the certificates the tests sign with it.
type testPKI struct {
	t      *testing.T
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	serial int64
}

func newPKI(t *testing.T) *testPKI {
	p := &testPKI{t: t, dir: t.TempDir()}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	p.caKey = key
	p.serial = 1
	p.write("ca.pem", "CERTIFICATE", der)
	return p
}

func (p *testPKI) write(name, typ string, der []byte) string {
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// issue signs a leaf certificate for subject, valid from notBefore to
// notAfter, and writes name.pem and name-key.pem.
func (p *testPKI) issue(name string, subject pkix.Name, server bool, notBefore, notAfter time.Time) (certFile, keyFile string) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      subject,
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		p.t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	return p.write(name+".pem", "CERTIFICATE", der), p.write(name+"-key.pem", "PRIVATE KEY", kder)
}

func (p *testPKI) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	return pool
}

type handshakeResult struct {
	server, client       tls.ConnectionState
	serverErr, clientErr error
}

// handshake runs a TLS handshake over a loopback TCP connection, whose
// buffers let either side finish writing while the other has given up.
func handshake(t *testing.T, server *tls.Config, client *tls.Config) handshakeResult {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	deadline := time.Now().Add(10 * time.Second)
	var res handshakeResult
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			res.serverErr = err
			return
		}
		defer c.Close()
		c.SetDeadline(deadline)
		sc := tls.Server(c, server)
		res.serverErr = sc.Handshake()
		res.server = sc.ConnectionState()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(deadline)
	cc := tls.Client(c, client)
	res.clientErr = cc.Handshake()
	res.client = cc.ConnectionState()
	<-done
	return res
}

func clientConfig(p *testPKI, certFile, keyFile string) *tls.Config {
	cfg := &tls.Config{RootCAs: p.pool(), ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			panic(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg
}

func TestTLSClientAuth(t *testing.T) {
	p := newPKI(t)
	now := time.Now()
	sCert, sKey := p.issue("server", pkix.Name{CommonName: "broker"}, true, now.Add(-time.Hour), now.Add(time.Hour))
	cCert, cKey := p.issue("client", pkix.Name{CommonName: "Client", OrganizationalUnit: []string{"ServiceUsers"}, Organization: []string{"Org"}}, false, now.Add(-time.Hour), now.Add(time.Hour))
	eCert, eKey := p.issue("expired", pkix.Name{CommonName: "old"}, false, now.Add(-2*time.Hour), now.Add(-time.Hour))
	other := newPKI(t)
	oCert, oKey := other.issue("stranger", pkix.Name{CommonName: "stranger"}, false, now.Add(-time.Hour), now.Add(time.Hour))

	mapper, err := ParsePrincipalRules(`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L,DEFAULT`)
	if err != nil {
		t.Fatal(err)
	}
	required, err := NewTLSReloader(TLSOptions{CertFile: sCert, KeyFile: sKey, CAFile: filepath.Join(p.dir, "ca.pem"), ClientAuth: ClientAuthRequired})
	if err != nil {
		t.Fatal(err)
	}
	res := handshake(t, required.Config(), clientConfig(p, cCert, cKey))
	if res.serverErr != nil || res.clientErr != nil {
		t.Fatalf("valid client: server %v, client %v", res.serverErr, res.clientErr)
	}
	if res.server.Version < tls.VersionTLS12 {
		t.Fatalf("version %x", res.server.Version)
	}
	if name, err := TLSPrincipal(res.server, mapper); err != nil || name != "client" {
		t.Fatalf("principal %q %v", name, err)
	}
	for name, cfg := range map[string]*tls.Config{
		"no certificate":           clientConfig(p, "", ""),
		"expired certificate":      clientConfig(p, eCert, eKey),
		"another CA's certificate": clientConfig(p, oCert, oKey),
	} {
		if res := handshake(t, required.Config(), cfg); res.serverErr == nil {
			t.Errorf("required, %s: accepted", name)
		}
	}

	requested, err := NewTLSReloader(TLSOptions{CertFile: sCert, KeyFile: sKey, CAFile: filepath.Join(p.dir, "ca.pem"), ClientAuth: ClientAuthRequested})
	if err != nil {
		t.Fatal(err)
	}
	res = handshake(t, requested.Config(), clientConfig(p, "", ""))
	if res.serverErr != nil {
		t.Fatalf("requested, no certificate: %v", res.serverErr)
	}
	if name, _ := TLSPrincipal(res.server, mapper); name != AnonymousPrincipal {
		t.Fatalf("principal without a certificate: %q", name)
	}
	if res := handshake(t, requested.Config(), clientConfig(p, eCert, eKey)); res.serverErr == nil {
		t.Error("requested, expired certificate: accepted")
	}

	old := clientConfig(p, "", "")
	old.MaxVersion = tls.VersionTLS11
	old.MinVersion = tls.VersionTLS10
	if res := handshake(t, requested.Config(), old); res.serverErr == nil {
		t.Error("TLS 1.1 accepted")
	}
	if _, err := NewTLSReloader(TLSOptions{CertFile: sCert, KeyFile: sKey, ClientAuth: ClientAuthRequired}); err == nil {
		t.Error("required without a CA file accepted")
	}
}

// TestTLSReload: a new certificate written over the old files is served
// to the next handshake after the check interval, without a restart; a
// broken file keeps the old one.
func TestTLSReload(t *testing.T) {
	p := newPKI(t)
	now := time.Now()
	sCert, sKey := p.issue("server", pkix.Name{CommonName: "first"}, true, now.Add(-time.Hour), now.Add(time.Hour))
	var reloads, failures atomic.Int32
	r, err := NewTLSReloader(TLSOptions{CertFile: sCert, KeyFile: sKey, ReloadCheck: time.Millisecond, OnReload: func(err error) {
		if err != nil {
			failures.Add(1)
		} else {
			reloads.Add(1)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	servedCN := func() string {
		res := handshake(t, r.Config(), clientConfig(p, "", ""))
		if res.clientErr != nil || len(res.client.PeerCertificates) == 0 {
			t.Fatalf("handshake: %v", res.clientErr)
		}
		return res.client.PeerCertificates[0].Subject.CommonName
	}
	if cn := servedCN(); cn != "first" {
		t.Fatalf("served %q", cn)
	}

	// A garbage certificate: the old one stays.
	if err := os.WriteFile(sCert, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, func() bool { return servedCN() == "first" && failures.Load() > 0 }, "a broken file was not reported")

	p.issue("server", pkix.Name{CommonName: "second"}, true, now.Add(-time.Hour), now.Add(time.Hour))
	later := time.Now().Add(time.Minute) // a changed mtime even on coarse clocks
	for _, f := range []string{sCert, sKey} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	testwait.Until(t, 10*time.Second, func() bool { return servedCN() == "second" }, "the new certificate was not picked up")
	if reloads.Load() == 0 {
		t.Fatal("no reload reported")
	}
}

func TestParseClientAuth(t *testing.T) {
	for s, want := range map[string]ClientAuth{"": ClientAuthNone, "none": ClientAuthNone, "requested": ClientAuthRequested, "required": ClientAuthRequired} {
		if got, err := ParseClientAuth(s); err != nil || got != want {
			t.Errorf("%q: %v %v", s, got, err)
		}
	}
	if _, err := ParseClientAuth("yes"); err == nil {
		t.Error("yes accepted")
	}
}
