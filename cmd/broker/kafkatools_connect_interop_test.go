//go:build interop

package main

// Kafka Connect against Sediment: a standalone worker (ConnectStandalone,
// as bin/connect-standalone.sh runs it) with the FileStream source and
// sink connectors carries a file through a topic into another file.
// Distributed mode keeps its configs, offsets and statuses in compacted
// topics and waits for them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sediment-io/sediment/interop/jvm"
)

const connectStandalone = "org.apache.kafka.connect.cli.ConnectStandalone"

// TestInteropConnectStandalone: a file in, the same file out, byte for
// byte. Half the lines are in the file when the worker starts, the rest
// are appended once the first half came out, so the source tails the file
// as it does in production. The sink's committed offsets and the topic's
// log end are then read with the broker's CLI.
func TestInteropConnectStandalone(t *testing.T) {
	addr := toolsCluster(t)
	const topic, lines = "connect-lines", 2000
	createTopics(t, addr, topic, 1) // one partition: the sink writes in log order
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	data := connectLines(lines)
	half := bytes.Index(data, []byte(fmt.Sprintf("\n%05d ", lines/2))) + 1
	if err := os.WriteFile(in, data[:half], 0o644); err != nil {
		t.Fatal(err)
	}
	w := startConnect(t, dir, addr,
		map[string]string{"name": "file-source", "connector.class": "FileStreamSource", "tasks.max": "1", "file": in, "topic": topic},
		map[string]string{"name": "file-sink", "connector.class": "FileStreamSink", "tasks.max": "1", "file": out, "topics": topic})
	w.waitRunning(t, "file-source", "file-sink")
	w.waitFile(t, out, data[:half])
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.Write(data[half:])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	w.waitFile(t, out, data)

	if _, end := logOffsetsCLI(t, addr, topic); end[topic+"/0"] != lines {
		t.Errorf("broker topics describe: log end of %s is %d, want %d (one record a line)", topic, end[topic+"/0"], lines)
	}
	w.waitFor(t, "the sink to commit every line", func() bool {
		o := groupOffsetsCLI(t, addr, "connect-file-sink")[topic+"/0"]
		return o.CurrentOffset != nil && *o.CurrentOffset == lines && o.Lag != nil && *o.Lag == 0
	})
	w.stop(t)
	// The JVM exits 143 once its shutdown hooks (Connect's clean stop)
	// have run after SIGTERM.
	if code := w.cmd.ProcessState.ExitCode(); code != 143 && code != 0 || strings.Contains(w.log(), " ERROR ") {
		t.Errorf("Connect's stop: exit %d; log:\n%s", code, w.log())
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, data) {
		t.Errorf("after the worker stopped, the output differs from the input (%v)", err)
	}
}

// connectLines is the test file: numbered lines with multi-byte UTF-8,
// tabs, quotes and some long lines. It has no empty lines and no \r: the
// FileStream source splits on either and drops empty lines.
func connectLines(n int) []byte {
	variants := []string{"plain ascii", "naïve café – 日本語 – ☃", "tab\tseparated\tfields", `{"json": "quoted \"value\""}`, strings.Repeat("long-", 1600)}
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "%05d %s\n", i, variants[i%len(variants)])
	}
	return b.Bytes()
}

// connectWorker is a running standalone Connect worker.
type connectWorker struct {
	cmd     *exec.Cmd
	done    chan struct{}
	rest    string // http://127.0.0.1:PORT
	logPath string
	err     error // the exit of cmd, once done is closed
}

// startConnect writes the worker and connector properties into dir and
// starts ConnectStandalone against the broker at addr; t.Cleanup stops it.
func startConnect(t *testing.T, dir, addr string, connectors ...map[string]string) *connectWorker {
	t.Helper()
	port := freeLoopbackPort(t)
	worker := map[string]string{
		"bootstrap.servers":            addr,
		"key.converter":                "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":              "org.apache.kafka.connect.storage.StringConverter",
		"offset.storage.file.filename": filepath.Join(dir, "connect.offsets"),
		"offset.flush.interval.ms":     "500",
		"listeners":                    fmt.Sprintf("http://127.0.0.1:%d", port),
		// connect-file is on the classpath and has ServiceLoader
		// manifests: no plugin.path, no slow reflective scan.
		"plugin.discovery": "service_load",
	}
	args := []string{writeProps(t, dir, "worker.properties", worker)}
	for _, c := range connectors {
		args = append(args, writeProps(t, dir, c["name"]+".properties", c))
	}
	w := &connectWorker{done: make(chan struct{}), rest: fmt.Sprintf("http://127.0.0.1:%d", port), logPath: filepath.Join(dir, "connect.log")}
	logFile, err := os.Create(w.logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	w.cmd = jvm.Command(ctx, javaClasspath(t), nil, connectStandalone, args...)
	w.cmd.Stdout, w.cmd.Stderr = logFile, logFile
	if err := w.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", connectStandalone, err)
	}
	go func() {
		w.err = w.cmd.Wait()
		logFile.Close()
		close(w.done)
	}()
	t.Cleanup(func() { w.stop(t); cancel() })
	return w
}

// stop sends SIGTERM, as an operator's supervisor does, and waits for the
// worker's shutdown; one that does not end within a minute is killed and
// fails the test.
func (w *connectWorker) stop(t *testing.T) {
	t.Helper()
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(time.Minute):
		_ = w.cmd.Process.Kill()
		<-w.done
		t.Errorf("Connect did not stop within a minute of SIGTERM; log:\n%s", w.log())
	}
}

// log is the tail of what the worker printed.
func (w *connectWorker) log() string {
	b, _ := os.ReadFile(w.logPath)
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

// waitFor polls cond (bounded) and fails the test, with the worker's log,
// if the worker exits or cond does not hold within four minutes.
func (w *connectWorker) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for !cond() {
		select {
		case <-w.done:
			t.Fatalf("Connect exited (%v) while waiting for %s; log:\n%s", w.err, what, w.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; Connect log:\n%s", what, w.log())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitRunning waits until the REST API reports each connector and its
// tasks RUNNING.
func (w *connectWorker) waitRunning(t *testing.T, names ...string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	for _, name := range names {
		w.waitFor(t, name+" to run", func() bool {
			resp, err := client.Get(w.rest + "/connectors/" + name + "/status")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			var st struct {
				Connector struct{ State string }   `json:"connector"`
				Tasks     []struct{ State string } `json:"tasks"`
			}
			if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&st) != nil {
				return false
			}
			if st.Connector.State == "FAILED" || len(st.Tasks) > 0 && st.Tasks[0].State == "FAILED" {
				t.Fatalf("connector %s failed; log:\n%s", name, w.log())
			}
			return st.Connector.State == "RUNNING" && len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING"
		})
	}
}

// waitFile waits until path holds want; a file that grows past want, or
// differs from it where both have bytes, fails at once.
func (w *connectWorker) waitFile(t *testing.T, path string, want []byte) {
	t.Helper()
	w.waitFor(t, fmt.Sprintf("%s to hold %d bytes", filepath.Base(path), len(want)), func() bool {
		got, _ := os.ReadFile(path)
		n := min(len(got), len(want))
		if len(got) > len(want) || !bytes.Equal(got[:n], want[:n]) {
			t.Fatalf("%s: %d bytes, differing from the input at byte %d", path, len(got), firstDiff(got, want))
		}
		return len(got) == len(want)
	})
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// writeProps writes a Java properties file of props into dir.
func writeProps(t *testing.T, dir, name string, props map[string]string) string {
	t.Helper()
	var b strings.Builder
	for k, v := range props {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// freeLoopbackPort returns a loopback port free a moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
