package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// SedimentLaunch is how `--launch sediment` starts the broker: the binary
// (`broker bench` passes its own executable), the bucket and any extra
// `broker serve` flags.
type SedimentLaunch struct {
	Bin         string   // the broker binary; `<Bin> serve ...` is run
	ObjectStore string   // --object-store URL; empty: the local folder default
	Flags       []string // more `broker serve` flags, passed through
	Env         []string // extra environment (AWS_* for a bucket)
	LogPath     string   // the broker's stderr goes here; empty: discarded
	ReadyWithin time.Duration
}

// sedimentTarget is a broker subprocess with its own data directory.
type sedimentTarget struct {
	cmd     *exec.Cmd
	addr    string
	dir     string
	log     *os.File
	exited  chan struct{}
	metrics *scraper
}

func launchSediment(ctx context.Context, l SedimentLaunch) (Target, error) {
	if l.Bin == "" {
		return nil, errors.New("bench: launch sediment: no broker binary (--broker-bin)")
	}
	if _, err := os.Stat(l.Bin); err != nil {
		return nil, fmt.Errorf("bench: launch sediment: broker binary: %w", err)
	}
	dir, err := os.MkdirTemp("", "sediment-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: launch sediment: %w", err)
	}
	t := &sedimentTarget{dir: dir, exited: make(chan struct{})}
	if err := t.start(ctx, l); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

func (t *sedimentTarget) start(ctx context.Context, l SedimentLaunch) error {
	kafka, err := freeAddr()
	if err != nil {
		return err
	}
	web, err := freeAddr()
	if err != nil {
		return err
	}
	t.addr = kafka
	args := []string{"serve", "--listen", kafka, "--http-listen", web,
		"--data-dir", t.dir, "--log-level", "warn"}
	if l.ObjectStore != "" {
		args = append(args, "--object-store", l.ObjectStore)
	}
	t.cmd = exec.Command(l.Bin, append(args, l.Flags...)...)
	t.cmd.Env = append(os.Environ(), l.Env...)
	if l.LogPath != "" {
		if t.log, err = os.Create(l.LogPath); err != nil {
			return fmt.Errorf("bench: broker log: %w", err)
		}
		t.cmd.Stdout, t.cmd.Stderr = t.log, t.log
	}
	if err := t.cmd.Start(); err != nil {
		return fmt.Errorf("bench: start %s: %w", l.Bin, err)
	}
	go func() { t.cmd.Wait(); close(t.exited) }()
	t.metrics = newScraper("http://"+web+"/metrics", t.cmd.Process.Pid)
	within := l.ReadyWithin
	if within <= 0 {
		within = time.Minute
	}
	return t.waitReady(ctx, "http://"+web+"/readyz", within)
}

// waitReady polls /readyz until it answers 200, the broker exits or the
// time is up.
func (t *sedimentTarget) waitReady(ctx context.Context, url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-t.exited:
			return fmt.Errorf("bench: sediment exited before it was ready (%s); see its log", t.cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: sediment not ready after %s", within)
}

func (t *sedimentTarget) Name() string      { return "sediment" }
func (t *sedimentTarget) Bootstrap() string { return t.addr }
func (t *sedimentTarget) Scrape(ctx context.Context) (Snapshot, bool, error) {
	return t.metrics.scrape(ctx)
}

// Close stops the broker with SIGTERM (SIGKILL after 30 s) and removes its
// data directory.
func (t *sedimentTarget) Close() error {
	var err error
	if t.cmd != nil && t.cmd.Process != nil {
		t.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-t.exited:
		case <-time.After(30 * time.Second):
			t.cmd.Process.Kill()
			<-t.exited
			err = errors.New("bench: sediment ignored SIGTERM for 30s and was killed")
		}
	}
	if t.log != nil {
		t.log.Close()
	}
	if rmErr := os.RemoveAll(t.dir); rmErr != nil && err == nil {
		err = fmt.Errorf("bench: remove %s: %w", filepath.Base(t.dir), rmErr)
	}
	return err
}

// freeAddr returns a loopback address with a port free at the time.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("bench: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
