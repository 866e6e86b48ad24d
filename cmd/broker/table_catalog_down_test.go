package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/table/catalog"
	"github.com/sediment-io/sediment/table/catalog/resttest"
)

// TestTableCatalogDownAtStart: a REST catalog that answers 503 when the
// broker starts does not stop the broker. Kafka is served, a table topic's
// status says it waits for the catalog, and once the catalog answers the
// records produced meanwhile reach the table, each once. A --table-catalog
// that can never work still fails start-up, naming the flag.
func TestTableCatalogDownAtStart(t *testing.T) {
	old := catalogRetry
	catalogRetry = 200 * time.Millisecond
	t.Cleanup(func() { catalogRetry = old })

	rest := resttest.Start(t, "api/catalog", "tok")
	target, err := url.Parse(rest.URL)
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	down.Store(true)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "catalog down for the test", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(gate.Close)
	catURL := "rest+" + gate.URL + target.Path + "?token=tok"

	dataDir := t.TempDir()
	tb := startTestBroker(t, dataDir, "--table-catalog", catURL)
	const topic, n = "waits", 50
	createTableTopic(t, tb.addr, topic, 1, nil)
	values := make([]string, n)
	for i := range values {
		values[i] = fmt.Sprintf(`{"id":%d}`, i)
	}
	produceValues(t, tb.addr, topic, 1, values)
	if state := tableState(t, tb.addr, topic); !strings.HasPrefix(state, "waiting for the table catalog") {
		t.Fatalf("status state %q while the catalog is down, want waiting for the table catalog", state)
	}
	if state := tableState(t, tb.addr, "plain"); state != "" {
		t.Fatalf("a topic that is no table has status state %q", state)
	}

	down.Store(false)
	cat, err := catalog.Open(testCtx(t, time.Minute), catURL, catalog.Options{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	if rows := waitTableRows(t, cat, topic, n); len(rows) != n {
		t.Fatalf("table holds %d rows, want %d", len(rows), n)
	}

	cfg, err := parseServe([]string{"--listen", "127.0.0.1:0", "--http-listen", "", "--data-dir", t.TempDir(),
		"--table-catalog", "ftp://nowhere/catalog"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	b, err := startBroker(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		b.close()
	}
	if err == nil || !strings.Contains(err.Error(), "--table-catalog") {
		t.Fatalf("start with an unusable --table-catalog: %v, want an error naming the flag", err)
	}
}

// tableState is the topic's sediment.table.status.state entry ("" when it
// has none), creating the topic first when it does not exist.
func tableState(t *testing.T, addr, topic string) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := testCtx(t, 30*time.Second)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil && !strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
		t.Fatal(err)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := rc.On(topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Configs {
		if c.Key == "sediment.table.status.state" {
			return c.MaybeValue()
		}
	}
	return ""
}
