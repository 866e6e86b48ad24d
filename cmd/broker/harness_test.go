package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"
)

// testBroker runs a broker in-process on a free loopback port.
type testBroker struct {
	t    *testing.T
	cfg  *serveConfig
	b    *broker
	addr string
}

// startTestBroker starts a broker on dataDir (a fresh temp dir when empty)
// with extra flags.
func startTestBroker(t *testing.T, dataDir string, flags ...string) *testBroker {
	t.Helper()
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	args := append([]string{"--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--data-dir", dataDir}, flags...)
	cfg, err := parseServe(args, func(string) string { return "" })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	b, err := startBroker(context.Background(), cfg, logger)
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	tb := &testBroker{t: t, cfg: cfg, b: b, addr: b.ln.Addr().String()}
	t.Cleanup(tb.stop)
	return tb
}

func (tb *testBroker) stop() {
	if tb.b != nil {
		tb.b.close()
		tb.b = nil
	}
}

func (tb *testBroker) port() int {
	_, p, _ := net.SplitHostPort(tb.addr)
	n, _ := strconv.Atoi(p)
	return n
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
