package protocol

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestPipelining writes many requests back to back on one connection before
// reading any response; the answers must come back in request order with
// matching correlation ids, including around a long-polling fetch, an
// acks=0 produce (no answer) and more requests than the broker keeps in
// flight per connection.
func TestPipelining(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	topic := b.createTopic("pipe", 1, nil)
	c := b.dial()

	var reqs []kmsg.Request
	add := func(r kmsg.Request) { reqs = append(reqs, r) }
	apiv := kmsg.NewPtrApiVersionsRequest()
	apiv.Version = 3
	add(apiv)
	add(metadataReq(12, false, "pipe"))
	// A long poll with no data: answered after max_wait_ms, and the
	// metadata request behind it must wait for it.
	poll := fetchReq(12, "pipe", [16]byte{}, 0, 0)
	poll.MaxWaitMillis, poll.MinBytes = 100, 1
	add(poll)
	add(metadataReq(1, false))
	for i := range 2*maxInFlight + 10 {
		switch i % 5 {
		case 0:
			add(produceReq(9, -1, "pipe", 0, plainBatch(1, 10, 1).build(t)))
		case 1:
			add(produceReq(7, 0, "pipe", 0, plainBatch(1, 10, 1).build(t))) // never answered
		case 2:
			add(listOffsetsReq(7, "pipe", []int64{-1}))
		case 3:
			add(fetchReq(13, "", topic.ID, 0, 0))
		default:
			add(metadataReq(int16(i%14), false, "pipe"))
		}
	}
	// A long poll that data ends: it waits for the produce behind it on
	// the same connection (whose data becomes visible once durable).
	_, hw := topic.Partition(0).Offsets()
	tail := fetchReq(11, "pipe", [16]byte{}, 0, hw+int64(countProduces(reqs)))
	tail.MaxWaitMillis, tail.MinBytes = 300_000, 1
	add(tail)
	add(produceReq(9, 1, "pipe", 0, plainBatch(3, 10, 1).build(t)))
	add(metadataReq(9, false, "pipe"))

	var wire []byte
	corrs := make([]int32, len(reqs))
	for i, r := range reqs {
		var frame []byte
		frame, corrs[i] = c.frame(r)
		wire = append(wire, frame...)
	}
	c.nc.SetWriteDeadline(time.Now().Add(ioBound))
	done := make(chan struct{})
	go func() { // the requests outgrow the socket buffers only with a broken broker
		defer close(done)
		c.nc.Write(wire)
	}()
	defer func() { <-done }()
	for i, r := range reqs {
		if p, ok := r.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
			continue
		}
		resp := c.recv(r, corrs[i])
		switch resp := resp.(type) {
		case *kmsg.ProduceResponse:
			wantCode(t, "pipelined produce", resp.Topics[0].Partitions[0].ErrorCode, 0)
		case *kmsg.FetchResponse:
			p := resp.Topics[0].Partitions[0]
			wantCode(t, "pipelined fetch", p.ErrorCode, 0)
			if r == kmsg.Request(tail) && len(p.RecordBatches) == 0 {
				t.Errorf("the long poll at offset %d ended without data", tail.Topics[0].Partitions[0].FetchOffset)
			}
		}
	}
}

func countProduces(reqs []kmsg.Request) int {
	n := 0
	for _, r := range reqs {
		if _, ok := r.(*kmsg.ProduceRequest); ok {
			n++
		}
	}
	return n
}
