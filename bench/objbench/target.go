package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/sediment-io/sediment/bench/internal/probe"
)

// bin is the broker binary buildBroker built.
var bin string

// buildBroker builds cmd/broker into dir.
func buildBroker(ctx context.Context, dir string) error {
	bin = filepath.Join(dir, "broker")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/broker")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// broker is a broker process on loopback.
type broker struct {
	addr, http, dir string
	flags, env      []string
	proc            *exec.Cmd
}

// startBroker starts the broker on dir with flags and env and waits for
// /readyz.
func startBroker(dir string, env []string, flags ...string) (*broker, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	b := &broker{addr: probe.FreeAddr(), http: probe.FreeAddr(), dir: dir, flags: flags, env: env}
	return b, b.start()
}

func (b *broker) start() error {
	args := append([]string{"serve", "--listen", b.addr, "--http-listen", b.http, "--data-dir", b.dir, "--log-level", "warn"}, b.flags...)
	b.proc = exec.Command(bin, args...)
	b.proc.Env = append(os.Environ(), b.env...)
	b.proc.Stderr = os.Stderr
	if err := b.proc.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	for range 1200 {
		resp, err := http.Get("http://" + b.http + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("broker not ready after 60s")
}

// stop shuts the broker down gracefully (it uploads what is pending).
func (b *broker) stop() error {
	b.proc.Process.Signal(syscall.SIGTERM)
	return b.proc.Wait()
}

// restart stops the broker gracefully and starts it again on the same
// data, with cold caches.
func (b *broker) restart() error {
	if err := b.stop(); err != nil {
		return fmt.Errorf("graceful stop: %w", err)
	}
	return b.start()
}

// waitUploaded waits (up to a minute) until the WAL backlog has gone to
// the object store and returns the metrics then.
func (b *broker) waitUploaded() probe.Metrics {
	m := b.metrics()
	for i := 0; i < 600 && m["sediment_wal_backlog_bytes"] > 64<<10; i++ {
		time.Sleep(100 * time.Millisecond)
		m = b.metrics()
	}
	return m
}

// metrics scrapes the broker's /metrics.
func (b *broker) metrics() probe.Metrics { return probe.Scrape(b.http) }

// profile records the broker's CPU profile into $OBJBENCH_PROFILE_DIR (when
// set) until the returned function is called, for finding where a phase's
// time goes: OBJBENCH_PROFILE_DIR=/tmp/prof go run ./bench/objbench.
func (b *broker) profile(phase string) (stop func()) {
	dir := os.Getenv("OBJBENCH_PROFILE_DIR")
	if dir == "" {
		return func() {}
	}
	profiles++
	file := filepath.Join(dir, fmt.Sprintf("%02d-%s-%s.pprof", profiles, filepath.Base(b.dir), phase))
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Get("http://" + b.http + "/debug/pprof/profile?seconds=30")
		if err != nil {
			fmt.Fprintf(os.Stderr, "profile: %v\n", err)
			return
		}
		defer resp.Body.Close()
		if out, err := os.Create(file); err == nil {
			io.Copy(out, resp.Body)
			out.Close()
		}
	}()
	return func() { <-done }
}

// profiles numbers the profile files of one run.
var profiles int
