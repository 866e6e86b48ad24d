//go:build interop

package main

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// diffTS is the create time of the script's first record: fixed, so that
// both brokers store and index the same timestamps.
const diffTS = int64(1_700_000_000_000)

// TestInteropDiffProduce: Produce that succeeds, with acks 1 and -1, and
// every error a producer can provoke: a bad CRC, a batch over
// max.message.bytes, an unknown partition or topic, bad acks, and the
// idempotent producer's out-of-order sequence, duplicate and fenced epoch.
func TestInteropDiffProduce(t *testing.T) {
	d := newDiffRun(t)
	topic, small := diffTopic(t, "p"), diffTopic(t, "small")
	d.same("CreateTopics", func() kmsg.Request { return createTopicReq(topic, 2, 1) })
	d.same("CreateTopics max.message.bytes", func() kmsg.Request {
		return createTopicReq(small, 1, 1, "max.message.bytes", "300")
	})
	d.waitTopics(topic, small)

	ok := plainBatch(diffTS, "a", "b", "c").encode()
	d.same("Produce acks=-1", func() kmsg.Request { return produceReq(topic, 0, -1, ok) })
	d.same("Produce acks=1", func() kmsg.Request { return produceReq(topic, 1, 1, ok) })
	d.same("Produce bad CRC", func() kmsg.Request { return produceReq(topic, 0, -1, badCRC(ok)) })
	big := diffBatch{timestamp: diffTS, producerID: -1, epoch: -1, sequence: -1, values: []string{"big"}, padding: 400}.encode()
	d.same("Produce too large", func() kmsg.Request { return produceReq(small, 0, -1, big) })
	d.same("Produce fits", func() kmsg.Request { return produceReq(small, 0, -1, ok) })
	d.same("Produce unknown partition", func() kmsg.Request { return produceReq(topic, 7, -1, ok) })
	d.same("Produce unknown topic", func() kmsg.Request { return produceReq(diffTopic(t, "none"), 0, -1, ok) })
	d.same("Produce bad acks", func() kmsg.Request { return produceReq(topic, 0, 2, ok) })
	d.same("Produce truncated batch", func() kmsg.Request { return produceReq(topic, 0, -1, ok[:len(ok)-3]) })

	d.initProducer("InitProducerID")
	idem := func(step string, seq int32, epochDelta int16, values ...string) {
		d.exchange(step, func(s *diffSide) kmsg.Request {
			b := diffBatch{timestamp: diffTS, producerID: s.producerID, epoch: s.producerEpoch + epochDelta, sequence: seq, values: values}
			return produceReq(topic, 1, -1, b.encode())
		})
	}
	idem("Produce idempotent seq 0", 0, 0, "i0", "i1", "i2")
	idem("Produce idempotent seq 3", 3, 0, "i3")
	idem("Produce idempotent duplicate", 3, 0, "i3")
	idem("Produce idempotent old duplicate", 0, 0, "i0", "i1", "i2")
	idem("Produce idempotent gap", 9, 0, "i9")
	idem("Produce idempotent seq 4", 4, 0, "i4")
	idem("Produce idempotent bumped epoch seq 0", 0, 1, "e0")
	idem("Produce idempotent bumped epoch seq 5", 5, 1, "e5")
	idem("Produce idempotent fenced epoch", 5, 0, "i5")
	d.exchange("Produce unknown producer id", func(s *diffSide) kmsg.Request {
		b := diffBatch{timestamp: diffTS, producerID: s.producerID + 1000, epoch: 0, sequence: 7, values: []string{"u"}}
		return produceReq(topic, 1, -1, b.encode())
	})
	for p := range int32(2) {
		d.same(fmt.Sprintf("Fetch after produce p%d", p), func() kmsg.Request { return fetchReq(topic, p, 0, 1<<20) })
	}
}

// TestInteropDiffLogAppendTime: a topic with message.timestamp.type
// LogAppendTime: the broker stamps each batch, and Produce, Fetch and
// ListOffsets report that stamp. Only the clock's reading may differ.
func TestInteropDiffLogAppendTime(t *testing.T) {
	d := newDiffRun(t)
	topic := diffTopic(t, "lat")
	d.same("CreateTopics LogAppendTime", func() kmsg.Request {
		return createTopicReq(topic, 1, 1, "message.timestamp.type", "LogAppendTime")
	})
	d.waitTopics(topic)
	for _, b := range []diffBatch{plainBatch(diffTS, "a", "b"), plainBatch(diffTS+10, "c")} {
		d.same("Produce LogAppendTime", func() kmsg.Request { return produceReq(topic, 0, -1, b.encode()) })
	}
	d.same("Fetch LogAppendTime", func() kmsg.Request { return fetchReq(topic, 0, 0, 1<<20) })
	d.same("ListOffsets LogAppendTime max timestamp", func() kmsg.Request { return listOffsetsReq(topic, 0, -3) })
	d.same("ListOffsets LogAppendTime by create time", func() kmsg.Request { return listOffsetsReq(topic, 0, diffTS) })
}
