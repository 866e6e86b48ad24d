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
	cfg.Dir = t.TempDir()
	// Port 0: the kernel picks one.
	m := &Member{cfg: cfg, client: url.URL{Scheme: clientScheme, Host: "127.0.0.1:0"},
		peer: url.URL{Scheme: "http", Host: "127.0.0.1:0"}}
	m.launch(t)
	t.Cleanup(m.Stop)
	return m.Endpoint(), m.Stop
}

// Member is an embedded etcd member that a test may stop and start again
// on the same ports and data, as an etcd that went down and came back.
type Member struct {
	cfg          *embed.Config
	client, peer url.URL
	e            *embed.Etcd // nil while stopped
}

// StartMember starts a member that Restart can bring back after Stop.
func StartMember(t testing.TB) *Member {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	m := &Member{cfg: cfg, client: url.URL{Scheme: "http", Host: "127.0.0.1:0"},
		peer: url.URL{Scheme: "http", Host: "127.0.0.1:0"}}
	m.launch(t)
	t.Cleanup(m.Stop)
	return m
}

// Endpoint is the member's client HOST:PORT; it stays the same across a
// restart.
func (m *Member) Endpoint() string { return m.client.Host }

// Stop stops the member; clients see it unreachable.
func (m *Member) Stop() {
	if m.e != nil {
		m.e.Close()
		m.e = nil
	}
}

// Restart starts a stopped member again on its ports and data directory.
func (m *Member) Restart(t testing.TB) {
	t.Helper()
	m.Stop()
	m.cfg.ClusterState = embed.ClusterStateFlagExisting
	m.launch(t)
}

func (m *Member) launch(t testing.TB) {
	cfg := m.cfg
	cfg.Name = "etcdtest"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{m.client}, []url.URL{m.client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{m.peer}, []url.URL{m.peer}
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
	// Pin the ports the kernel picked, for a restart.
	m.client.Host = e.Clients[0].Addr().String()
	m.peer.Host = e.Peers[0].Addr().String()
	m.e = e
}
