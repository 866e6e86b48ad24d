package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/sediment-io/sediment/bench/internal/probe"
)

// target is a broker under test.
type target struct {
	name  string
	addr  string
	stop  func()
	proc  *exec.Cmd // sediment only
	http  string    // sediment only: metrics address
	dir   string
	flags []string
}

// launchKfake starts franz-go's in-memory cluster (one broker).
func launchKfake(blackhole bool) (*target, error) {
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation()}
	name := "kfake"
	if blackhole {
		opts = append(opts, kfake.BlackholeProduce())
		name = "kfake-blackhole"
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, err
	}
	return &target{name: name, addr: c.ListenAddrs()[0], stop: c.Close}, nil
}

// launchSediment starts the broker binary on dir with extra flags and waits
// for /readyz.
func launchSediment(bin, dir string, flags ...string) (*target, error) {
	if extra := os.Getenv("COREBENCH_SEDIMENT_FLAGS"); extra != "" {
		flags = append(flags, strings.Fields(extra)...)
	}
	t := &target{name: "sediment", addr: probe.FreeAddr(), http: probe.FreeAddr(), dir: dir, flags: flags}
	return t, t.start()
}

func (t *target) start() error {
	args := append([]string{"serve", "--listen", t.addr, "--http-listen", t.http, "--data-dir", t.dir, "--log-level", "warn"}, t.flags...)
	t.proc = exec.Command(bin, args...)
	t.proc.Stderr = os.Stderr
	if err := t.proc.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	t.stop = func() {
		t.proc.Process.Signal(syscall.SIGTERM)
		t.proc.Wait()
	}
	return t.waitReady(60 * time.Second)
}

func (t *target) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + t.http + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("sediment not ready after %s", limit)
}

// kill9 kills the broker without any shutdown.
func (t *target) kill9() {
	t.proc.Process.Signal(syscall.SIGKILL)
	t.proc.Wait()
}

// metrics scrapes the broker's /metrics.
func (t *target) metrics() probe.Metrics { return probe.Scrape(t.http) }

// peakRSS reads the process's high-water resident set (VmHWM) in bytes.
func (t *target) peakRSS() int64 {
	if t.proc == nil {
		return 0
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(t.proc.Process.Pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

var bin string

// buildBroker builds cmd/broker into dir.
func buildBroker(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "broker")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/broker")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return out, cmd.Run()
}
