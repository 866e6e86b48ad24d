package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/sediment-io/sediment/internal/modroot"
)

// errNoEtcd says how to get the etcd server a cluster run needs.
var errNoEtcd = errors.New("etcd server binary not found: run `make .bin/etcd` (builds it from the etcd module in go.mod) or set SEDIMENT_ETCD to the path of an etcd binary")

// etcdBinary returns SEDIMENT_ETCD, else .bin/etcd at the module root
// above the working directory.
func etcdBinary() (string, error) {
	if p := os.Getenv("SEDIMENT_ETCD"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("bench: SEDIMENT_ETCD=%s: %w (%w)", p, err, errNoEtcd)
		}
		return p, nil
	}
	root, err := modroot.Dir()
	if err != nil {
		return "", fmt.Errorf("bench: %w (%w)", err, errNoEtcd)
	}
	p := filepath.Join(root, ".bin", "etcd")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("bench: %s: %w", p, errNoEtcd)
	}
	return p, nil
}

// etcdProcess is a single-member etcd server subprocess on loopback, with
// its data in a temporary directory, in etcd's default configuration (the
// limits an external etcd has unless its operator changes them).
type etcdProcess struct {
	cmd      *exec.Cmd
	dir      string
	endpoint string // client HOST:PORT; /metrics and /health are served there too
	log      *os.File
	exited   chan struct{}
	client   *clientv3.Client
}

// startEtcd starts etcd and waits until it answers /health. Its output
// goes to logPath (empty: discarded).
func startEtcd(ctx context.Context, logPath string) (*etcdProcess, error) {
	bin, err := etcdBinary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sediment-bench-etcd-")
	if err != nil {
		return nil, fmt.Errorf("bench: etcd: %w", err)
	}
	e := &etcdProcess{dir: dir, exited: make(chan struct{})}
	if err := e.start(ctx, bin, logPath); err != nil {
		e.stop()
		return nil, err
	}
	return e, nil
}

func (e *etcdProcess) start(ctx context.Context, bin, logPath string) error {
	client, err := freeAddr()
	if err != nil {
		return err
	}
	peer, err := freeAddr()
	if err != nil {
		return err
	}
	e.endpoint = client
	e.cmd = exec.Command(bin, "--name", "bench", "--data-dir", filepath.Join(e.dir, "data"),
		"--listen-client-urls", "http://"+client, "--advertise-client-urls", "http://"+client,
		"--listen-peer-urls", "http://"+peer, "--initial-advertise-peer-urls", "http://"+peer,
		"--initial-cluster", "bench=http://"+peer, "--log-level", "warn")
	if logPath != "" {
		if e.log, err = os.Create(logPath); err != nil {
			return fmt.Errorf("bench: etcd log: %w", err)
		}
		e.cmd.Stdout, e.cmd.Stderr = e.log, e.log
	}
	if err := e.cmd.Start(); err != nil {
		return fmt.Errorf("bench: start %s: %w", bin, err)
	}
	go func() { e.cmd.Wait(); close(e.exited) }()
	if err := e.waitHealthy(ctx, time.Minute); err != nil {
		return err
	}
	e.client, err = clientv3.New(clientv3.Config{Endpoints: []string{client}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("bench: etcd client: %w", err)
	}
	return nil
}

// waitHealthy polls /health until etcd says it serves, it exits or the
// time is up.
func (e *etcdProcess) waitHealthy(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + e.endpoint + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-e.exited:
			return fmt.Errorf("bench: etcd exited before it was healthy (%s); see its log", e.cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: etcd not healthy after %s", within)
}

// metricsURL is etcd's Prometheus endpoint.
func (e *etcdProcess) metricsURL() string { return "http://" + e.endpoint + "/metrics" }

// stop ends etcd with SIGTERM (SIGKILL after 30 s) and removes its data.
func (e *etcdProcess) stop() error {
	var err error
	if e.client != nil {
		e.client.Close()
	}
	if e.cmd != nil && e.cmd.Process != nil {
		e.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-e.exited:
		case <-time.After(30 * time.Second):
			e.cmd.Process.Kill()
			<-e.exited
			err = errors.New("bench: etcd ignored SIGTERM for 30s and was killed")
		}
	}
	if e.log != nil {
		e.log.Close()
	}
	if rmErr := os.RemoveAll(e.dir); rmErr != nil && err == nil {
		err = fmt.Errorf("bench: remove %s: %w", filepath.Base(e.dir), rmErr)
	}
	return err
}
