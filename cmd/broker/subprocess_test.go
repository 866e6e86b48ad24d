package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// brokerProc is a broker running as a subprocess (this test binary, see
// TestMain), so that tests can kill it for real.
type brokerProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	addr    string
	http    string
	dataDir string
	exited  chan error
	logs    *logTail
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startProc starts a broker subprocess on addr (empty: a free port) and
// waits until it answers /readyz.
func startProc(t *testing.T, dataDir, addr string, env []string, flags ...string) *brokerProc {
	t.Helper()
	return startBinary(t, os.Args[0], dataDir, addr, append([]string{"SEDIMENT_TEST_BROKER=1"}, env...), nil, flags...)
}

// startBinary is startProc for the broker binary bin, run with attr (nil:
// as this process), and env added to this process's environment.
func startBinary(t *testing.T, bin, dataDir, addr string, env []string, attr *syscall.SysProcAttr, flags ...string) *brokerProc {
	t.Helper()
	if addr == "" {
		addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	}
	httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	args := append([]string{"serve", "--listen", addr, "--http-listen", httpAddr, "--data-dir", dataDir}, flags...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = attr
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &brokerProc{t: t, cmd: cmd, addr: addr, http: httpAddr, dataDir: dataDir, exited: make(chan error, 1), logs: newLogTail()}
	go p.logs.consume(stderr)
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() { p.kill() })
	p.waitReady()
	return p
}

func (p *brokerProc) waitReady() {
	p.t.Helper()
	rebinds := 0
	for i := 0; i < 600; i++ {
		select {
		case err := <-p.exited:
			if rebinds < 3 && p.httpPortTaken() {
				// The port freePort found was taken before the broker bound
				// it (a loaded machine's outbound connections share the
				// range): start again on another one.
				rebinds++
				p.relaunch()
				continue
			}
			p.exited <- err
			p.t.Fatalf("broker exited during start-up: %v\n%s", err, p.logs.String())
		default:
		}
		resp, err := http.Get("http://" + p.http + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.t.Fatalf("broker not ready after 30s\n%s", p.logs.String())
}

// httpPortTaken says whether the broker that just exited could not bind
// its --http-listen address.
func (p *brokerProc) httpPortTaken() bool {
	logs := p.logs.String()
	return strings.Contains(logs, "--http-listen "+p.http) && strings.Contains(logs, "address already in use")
}

// relaunch starts the exited broker again with the same arguments but a
// new --http-listen port.
func (p *brokerProc) relaunch() {
	p.t.Helper()
	args := slices.Clone(p.cmd.Args)
	p.http = fmt.Sprintf("127.0.0.1:%d", freePort(p.t))
	for i := range args[:len(args)-1] {
		if args[i] == "--http-listen" {
			args[i+1] = p.http
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env, cmd.SysProcAttr, cmd.Dir = p.cmd.Env, p.cmd.SysProcAttr, p.cmd.Dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.cmd, p.logs = cmd, newLogTail()
	go p.logs.consume(stderr)
	go func() { p.exited <- cmd.Wait() }()
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *brokerProc) kill() {
	if p.exitedYet() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait()
}

// exitedYet says whether the process has exited. Unlike a look at
// cmd.ProcessState, which cmd.Wait writes, it is safe while the process
// may exit by itself (a crash seam).
func (p *brokerProc) exitedYet() bool {
	select {
	case err := <-p.exited:
		p.exited <- err
		return true
	default:
		return false
	}
}

// terminate sends SIGTERM (graceful shutdown) and waits.
func (p *brokerProc) terminate() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	return p.wait()
}

func (p *brokerProc) wait() error {
	select {
	case err := <-p.exited:
		p.exited <- err
		return err
	case <-time.After(60 * time.Second):
		p.t.Fatalf("broker did not exit\n%s", p.logs.String())
		return nil
	}
}

// metric returns the sum of a Prometheus metric's samples whose label set
// contains every given label (name="value" strings).
func (p *brokerProc) metric(name string, labels ...string) float64 {
	p.t.Helper()
	resp, err := http.Get("http://" + p.http + "/metrics")
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || (len(line) > len(name) && line[len(name)] != '{' && line[len(name)] != ' ') {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(line, l)
		}
		if f := strings.Fields(line); ok && len(f) >= 2 {
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}

// logTail keeps the last lines a subprocess wrote, for failure messages.
type logTail struct {
	lines chan string
}

func newLogTail() *logTail { return &logTail{lines: make(chan string, 200)} }

func (l *logTail) consume(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		select {
		case l.lines <- sc.Text():
		default: // full: drop the oldest
			select {
			case <-l.lines:
			default:
			}
			l.lines <- sc.Text()
		}
	}
}

// String drains what is buffered.
func (l *logTail) String() string {
	var b strings.Builder
	for {
		select {
		case s := <-l.lines:
			b.WriteString(s + "\n")
		default:
			return b.String()
		}
	}
}

func ctxFor(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx, cancel
}
