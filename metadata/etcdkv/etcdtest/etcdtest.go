// Package etcdtest starts an embedded single-member etcd for tests: on
// loopback, on random ports, in a temporary directory, quiet.
package etcdtest

import (
	"net/url"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// startWait bounds how long Start waits for the member to serve.
const startWait = 60 * time.Second

// Start starts an etcd member and returns its client endpoint (HOST:PORT)
// and a func that stops it. The test's cleanup stops it too.
func Start(t testing.TB) (endpoint string, stop func()) {
	t.Helper()
	return start(t, embed.NewConfig(), "http")
}

// StartTLS is Start with a client port that serves TLS and asks clients
// for a certificate of the same CA (the server's own serves as one).
func StartTLS(t testing.TB) (endpoint string, files TLSFiles, stop func()) {
	t.Helper()
	cfg := embed.NewConfig()
	files = writeTLSFiles(t, t.TempDir())
	cfg.ClientTLSInfo = transport.TLSInfo{CertFile: files.Cert, KeyFile: files.Key,
		TrustedCAFile: files.CACert, ClientCertAuth: true}
	endpoint, stop = start(t, cfg, "https")
	return endpoint, files, stop
}

func start(t testing.TB, cfg *embed.Config, clientScheme string) (endpoint string, stop func()) {
	cfg.Name = "etcdtest"
	cfg.Dir = t.TempDir()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	// Port 0: the kernel picks one.
	client := url.URL{Scheme: clientScheme, Host: "127.0.0.1:0"}
	peer := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("etcdtest: start: %v", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(startWait):
		e.Close()
		t.Fatalf("etcdtest: not ready after %v", startWait)
	case err := <-e.Err():
		e.Close()
		t.Fatalf("etcdtest: %v", err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			e.Close()
		}
	}
	t.Cleanup(stop)
	return e.Clients[0].Addr().String(), stop
}
