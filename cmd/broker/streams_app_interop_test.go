//go:build interop

package main

// The Kafka Streams word count (interop/java, io.sediment.interop.streams)
// as a subprocess of the Streams interop test: started, watched through the
// lines it prints, and stopped the way an operator stops it.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sediment-io/sediment/interop/jvm"
)

const wordCountClass = "io.sediment.interop.streams.WordCount"

// streamsApp is one run of the word count JVM.
type streamsApp struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	done   chan struct{} // closed when the process has exited and its output is read
	err    error         // the exit status, set before done closes

	mu     sync.Mutex
	lines  []string // stdout, one event a line
	stderr bytes.Buffer
}

// startWordCount starts the word count on addr with its own application
// id and state dir, and the processing guarantee if one is given
// (at_least_once otherwise); the test's cleanup kills it if a stop never
// came.
func startWordCount(t *testing.T, addr, appID, input, output, stateDir string, guarantee ...string) *streamsApp {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	a := &streamsApp{cancel: cancel, done: make(chan struct{})}
	args := append([]string{addr, appID, input, output, stateDir}, guarantee...)
	a.cmd = jvm.Command(ctx, javaClasspath(t), nil, wordCountClass, args...)
	a.cmd.Stderr = streamsLockedWriter{&a.mu, &a.stderr}
	stdout, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", wordCountClass, err)
	}
	go a.read(stdout)
	t.Cleanup(func() {
		a.cancel() // kills the JVM unless it already exited
		<-a.done
	})
	return a
}

func (a *streamsApp) read(stdout interface{ Read([]byte) (int, error) }) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		a.mu.Lock()
		a.lines = append(a.lines, sc.Text())
		a.mu.Unlock()
	}
	a.err = a.cmd.Wait()
	close(a.done)
}

// output returns what the app printed so far, for failure messages.
func (a *streamsApp) output() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return "stdout:\n" + strings.Join(a.lines, "\n") + "\nstderr (tail):\n" + streamsTail(a.stderr.String(), 6000)
}

// failure returns the first line that says the app is broken, if any.
func (a *streamsApp) failure() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, l := range a.lines {
		if strings.HasPrefix(l, "FAILED") || strings.HasSuffix(l, "->ERROR") {
			return l
		}
	}
	return ""
}

// printed returns the lines that start with prefix.
func (a *streamsApp) printed(prefix string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, l := range a.lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// exited reports whether the process is gone.
func (a *streamsApp) exited() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, as `kill` or a container runtime would: the app's
// shutdown hook closes the Streams client, which commits what it has
// processed. The JVM exits with the signal's status after the hook ran; the
// hook's CLOSED line says the close finished in time.
func (a *streamsApp) stop(t *testing.T) {
	t.Helper()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil && !a.exited() {
		t.Fatalf("SIGTERM the word count: %v", err)
	}
	select {
	case <-a.done:
	case <-time.After(2 * time.Minute):
		a.cancel()
		<-a.done
		t.Fatalf("the word count did not stop within 2 minutes of SIGTERM\n%s", a.output())
	}
	var exit *exec.ExitError
	if a.err != nil && !(errors.As(a.err, &exit) && (exit.ExitCode() == 143 || exit.ExitCode() == -1)) {
		t.Fatalf("the word count exited with %v\n%s", a.err, a.output())
	}
	if len(a.printed("CLOSED")) != 1 {
		t.Fatalf("the word count did not close cleanly\n%s", a.output())
	}
}

// kill ends the JVM with SIGKILL, as a crash would: no close, no commit.
func (a *streamsApp) kill() {
	a.cancel()
	<-a.done
}

type streamsLockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w streamsLockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func streamsTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
