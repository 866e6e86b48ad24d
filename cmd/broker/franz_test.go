package main

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestFranzSmoke(t *testing.T) {
	tb := startTestBroker(t, "")
	ctx := testCtx(t, 60*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.addr), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic("smoke"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("v%d", i))}, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	wg.Wait()
	cons, err := kgo.NewClient(kgo.SeedBrokers(tb.addr), kgo.ConsumeTopics("smoke"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := 0
	for got < 100 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if want := []byte(fmt.Sprintf("v%d", r.Offset)); !bytes.Equal(r.Value, want) {
				t.Errorf("offset %d: %q want %q", r.Offset, r.Value, want)
			}
			got++
		})
	}
	_ = context.Background
}
