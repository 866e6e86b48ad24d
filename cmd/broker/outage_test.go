package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

// outageAcks records acknowledgements with their time.
type outageAcks struct {
	ackLog
	times []time.Time // guarded by ackLog.mu
}

// TestMinIOOutage stops MinIO for 20 seconds in the middle of a produce run
// and starts it again, without touching the broker. With --durability wal,
// produce keeps being acknowledged from the WAL until --wal-max-bytes wait,
// then gets a retriable error; with --durability object, produce gets
// retriable errors for the whole outage. Either way, when MinIO is back the
// backlog drains by itself, every acknowledged record is there exactly once,
// and the broker process was never restarted.
func TestMinIOOutage(t *testing.T) {
	for _, mode := range []string{"wal", "object"} {
		t.Run(mode, func(t *testing.T) { testOutage(t, mode) })
	}
}

func testOutage(t *testing.T, durability string) {
	srv := miniotest.Start(t) // our own server: we stop it
	store, _ := minioStore(t, srv, "s3", "outage")
	flags := append(store, "--durability", durability, "--upload-interval", "100ms",
		"--wal-max-bytes", fmt.Sprint(2<<20))
	p := startProc(t, t.TempDir(), "", srv.Env(), flags...)
	createTopics(t, p.addr, "outage", 4)
	ctx, cancel := ctxFor(t, 4*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.ProducerLinger(2*time.Millisecond),
		kgo.RecordRetries(1<<30), kgo.RecordDeliveryTimeout(0), kgo.ProduceRequestTimeout(3*time.Second),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.ProducerBatchCompression(kgo.NoCompression())) // the backlog must really grow
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	acks := &outageAcks{ackLog: ackLog{acked: map[string]bool{}}}
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		producePaced(ctx, cl, "outage", 60_000, 2000, acks)
	}()
	waitFor(t, "a first share of the records acknowledged with MinIO up", func() bool {
		acks.mu.Lock()
		defer acks.mu.Unlock()
		return len(acks.acked) >= 10000 // about 5 s at 2,000 records/s
	})
	down := time.Now()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Second) // the outage the scenario specifies, not a wait for a condition
	t.Logf("before MinIO returns: WAL backlog %v bytes, upload pending %v bytes",
		p.metric("sediment_wal_backlog_bytes"), p.metric("sediment_upload_pending_bytes"))
	up := time.Now()
	if err := srv.Restart(); err != nil {
		t.Fatalf("restart MinIO: %v", err)
	}
	<-produced
	acks.done.Wait()
	during := acks.countBetween(down.Add(2*time.Second), up)
	refused := p.metric("sediment_request_errors_total", `api="Produce"`)
	t.Logf("%s: %d acknowledged during the outage, %v produce errors answered", durability, during, refused)
	switch durability {
	case "wal":
		if during == 0 {
			t.Fatal("no produce was acknowledged from the WAL while MinIO was down")
		}
		if refused == 0 {
			t.Fatal("the WAL backlog never hit --wal-max-bytes: back-pressure not exercised")
		}
	case "object":
		if during > 0 {
			t.Fatalf("%d records acknowledged while MinIO was down with --durability object", during)
		}
	}
	waitBacklogDrained(t, p)
	checkExactlyOnce(t, readTopic(t, p.addr, "outage"), &acks.ackLog)
	if p.cmd.ProcessState != nil {
		t.Fatal("the broker exited during the outage")
	}
}

// producePaced produces n unique records at about rate per second with the
// idempotent producer (retrying forever), recording acknowledgement times.
func producePaced(ctx context.Context, cl *kgo.Client, topic string, n, rate int, acks *outageAcks) {
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if due := start.Add(time.Duration(i) * time.Second / time.Duration(rate)); time.Until(due) > 0 {
			time.Sleep(time.Until(due))
		}
		v := fmt.Sprintf("outage-%06d-%0200d", i, i) // ~200 bytes: 20 s of them overflow --wal-max-bytes
		acks.done.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}, func(r *kgo.Record, err error) {
			defer acks.done.Done()
			acks.mu.Lock()
			defer acks.mu.Unlock()
			if err != nil {
				acks.failed = append(acks.failed, err)
				return
			}
			acks.acked[string(r.Value)] = true
			acks.times = append(acks.times, time.Now())
		})
	}
}

func (a *outageAcks) countBetween(from, to time.Time) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, at := range a.times {
		if at.After(from) && at.Before(to) {
			n++
		}
	}
	return n
}

// waitBacklogDrained waits (bounded) until the broker uploaded everything.
func waitBacklogDrained(t *testing.T, p *brokerProc) {
	t.Helper()
	for i := 0; i < 600; i++ {
		if p.metric("sediment_upload_pending_bytes") == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("upload backlog not drained a minute after MinIO came back: %v bytes\n%s",
		p.metric("sediment_upload_pending_bytes"), p.logs.String())
}
