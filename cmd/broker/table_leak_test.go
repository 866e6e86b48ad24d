package main

import (
	"strings"
	"testing"
	"time"
)

// TestTableNoGoroutineLeak: a broker that converted a table topic and was
// closed leaves none of its goroutines (converter, workers) behind. The
// shared MinIO server other tests started is not the broker's.
func TestTableNoGoroutineLeak(t *testing.T) {
	tb := startTestBroker(t, "")
	createTableTopic(t, tb.addr, "leaky", 2, nil)
	produceValues(t, tb.addr, "leaky", 2, []string{`{"a":1}`, `{"a":2}`, `bad`})
	waitTableRows(t, tb.b.tables.cat, "leaky", 2)
	tb.stop()
	var leaked []string
	for range 100 {
		leaked = leaked[:0]
		for _, g := range ourGoroutines() {
			if !strings.Contains(g, "/miniotest.") { // the shared MinIO of other tests
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%d goroutines left after close:\n%s", len(leaked), strings.Join(leaked, "\n\n"))
}
