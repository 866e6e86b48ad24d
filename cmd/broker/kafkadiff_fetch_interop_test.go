//go:build interop

package main

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInteropDiffFetch: Fetch at every edge (the start, the middle of a
// batch, the high watermark, beyond it, below the log start, a limit
// smaller than one batch, one that cuts a batch), ListOffsets (earliest,
// latest, by timestamp, max timestamp), OffsetForLeaderEpoch and
// DeleteRecords, on the same three batches in both brokers.
func TestInteropDiffFetch(t *testing.T) {
	d := newDiffRun(t)
	topic := diffTopic(t, "f")
	d.same("CreateTopics", func() kmsg.Request { return createTopicReq(topic, 1, 1) })
	d.waitTopics(topic)
	a := plainBatch(diffTS, "a0", "a1", "a2").encode()
	b := plainBatch(diffTS+10, "b3", "b4").encode()
	c := diffBatch{timestamp: diffTS + 20, producerID: -1, epoch: -1, sequence: -1, values: []string{"c5", "c6", "c7", "c8"}, padding: 100}.encode()
	for _, batch := range [][]byte{a, b, c} {
		d.same("Produce", func() kmsg.Request { return produceReq(topic, 0, -1, batch) })
	}
	fetch := func(step string, offset int64, maxBytes int32) {
		d.same(step, func() kmsg.Request { return fetchReq(topic, 0, offset, maxBytes) })
	}
	fetch("Fetch from 0", 0, 1<<20)
	fetch("Fetch mid batch", 1, 1<<20)
	fetch("Fetch last of a batch", 4, 1<<20)
	fetch("Fetch at the high watermark", 9, 1<<20)
	fetch("Fetch beyond the high watermark", 10, 1<<20)
	fetch("Fetch negative offset", -1, 1<<20)
	fetch("Fetch max bytes below one batch", 0, 10)
	fetch("Fetch max bytes cutting a batch", 0, int32(len(a)+len(b)+20))
	d.same("Fetch unknown partition", func() kmsg.Request { return fetchReq(topic, 3, 0, 1<<20) })
	d.same("Fetch unknown topic", func() kmsg.Request { return fetchReq(diffTopic(t, "none"), 0, 0, 1<<20) })
	for _, epoch := range []int32{0, 1} {
		d.same("Fetch current leader epoch", func() kmsg.Request {
			req := fetchReq(topic, 0, 0, 1<<20)
			req.Topics[0].Partitions[0].CurrentLeaderEpoch = epoch
			return req
		})
	}
	d.same("Fetch last fetched epoch diverging", func() kmsg.Request {
		req := fetchReq(topic, 0, 20, 1<<20)
		req.Topics[0].Partitions[0].LastFetchedEpoch = 0
		return req
	})

	listOffsets := func(step string, ts int64) {
		d.same(step, func() kmsg.Request { return listOffsetsReq(topic, 0, ts) })
	}
	listOffsets("ListOffsets earliest", -2)
	listOffsets("ListOffsets latest", -1)
	listOffsets("ListOffsets max timestamp", -3)
	listOffsets("ListOffsets exact timestamp", diffTS+1)
	listOffsets("ListOffsets timestamp between batches", diffTS+5)
	listOffsets("ListOffsets timestamp after all", diffTS+1000)
	listOffsets("ListOffsets timestamp before all", 1)
	d.same("ListOffsets unknown partition", func() kmsg.Request { return listOffsetsReq(topic, 3, -1) })
	d.same("ListOffsets current leader epoch", func() kmsg.Request {
		req := listOffsetsReq(topic, 0, -1)
		req.Topics[0].Partitions[0].CurrentLeaderEpoch = 1
		return req
	})

	d.same("OffsetForLeaderEpoch epoch 0", func() kmsg.Request { return offsetForEpochReq(topic, 0, -1, 0) })
	d.same("OffsetForLeaderEpoch later epoch", func() kmsg.Request { return offsetForEpochReq(topic, 0, -1, 3) })
	d.same("OffsetForLeaderEpoch current epoch 0", func() kmsg.Request { return offsetForEpochReq(topic, 0, 0, 0) })
	d.same("OffsetForLeaderEpoch fenced current epoch", func() kmsg.Request { return offsetForEpochReq(topic, 0, 1, 0) })
	d.same("OffsetForLeaderEpoch unknown partition", func() kmsg.Request { return offsetForEpochReq(topic, 3, -1, 0) })

	d.same("DeleteRecords mid batch", func() kmsg.Request { return deleteRecordsReq(topic, 0, 4) })
	listOffsets("ListOffsets earliest after delete", -2)
	listOffsets("ListOffsets timestamp after delete", diffTS+1)
	fetch("Fetch below the log start", 0, 1<<20)
	fetch("Fetch at the log start", 4, 1<<20)
	d.same("DeleteRecords backwards", func() kmsg.Request { return deleteRecordsReq(topic, 0, 2) })
	d.same("DeleteRecords beyond the high watermark", func() kmsg.Request { return deleteRecordsReq(topic, 0, 100) })
	d.same("DeleteRecords unknown partition", func() kmsg.Request { return deleteRecordsReq(topic, 3, 0) })
	d.same("DeleteRecords to the high watermark", func() kmsg.Request { return deleteRecordsReq(topic, 0, -1) })
	listOffsets("ListOffsets earliest after delete all", -2)
	listOffsets("ListOffsets max timestamp after delete all", -3)
	fetch("Fetch after delete all", 9, 1<<20)
}
