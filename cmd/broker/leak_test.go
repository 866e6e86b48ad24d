package main

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestNoGoroutineLeak: a broker that served clients and was closed leaves
// no goroutine of its own behind.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	tb := startTestBroker(t, "")
	ctx := testCtx(t, 30*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.addr), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic("leak"),
		kgo.ConsumeTopics("leak"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.PollRecords(ctx, 1)
	cl.Close()
	tb.stop()
	for i := 0; i < 100 && (runtime.NumGoroutine() > before || len(ourGoroutines()) > 0); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if leaked := ourGoroutines(); len(leaked) > 0 {
		t.Fatalf("%d goroutines left after close:\n%s", len(leaked), strings.Join(leaked, "\n\n"))
	}
}

// ourGoroutines returns the stacks of live goroutines running this
// repository's code, other than the test's own and those of the MinIO
// server that earlier tests of the package share (it runs until the
// package's tests end).
func ourGoroutines() []string {
	buf := make([]byte, 4<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "sediment-io/sediment/") && !strings.Contains(g, "testing.tRunner") &&
			!strings.Contains(g, "/storage/objectstore/miniotest.") {
			out = append(out, g)
		}
	}
	return out
}
