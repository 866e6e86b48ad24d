// Package etcdtest starts an embedded single-member etcd for tests: on
// loopback, on random ports, in a temporary directory, quiet.
package etcdtest

import (
	"net/url"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// startWait bounds how long Start waits for the member to serve.
const startWait = 60 * time.Second

// Start starts an etcd member and returns its client endpoint (HOST:PORT)
// and a func that stops it. The test's cleanup stops it too.
func Start(t testing.TB) (endpoint string, stop func()) {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Name = "etcdtest"
	cfg.Dir = t.TempDir()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	loopback := url.URL{Scheme: "http", Host: "127.0.0.1:0"} // port 0: the kernel picks one
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{loopback}, []url.URL{loopback}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{loopback}, []url.URL{loopback}
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
