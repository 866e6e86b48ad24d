package protocol

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchFrameMatchesKmsg encodes random fetch answers at every served
// version both ways, the records by reference and kmsg with the records
// copied in, and wants the same bytes: partitions with and without data,
// record lengths whose prefixes take one to three bytes, several topics.
func TestFetchFrameMatchesKmsg(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for v := int16(4); v <= 18; v++ {
		for round := range 20 {
			resp := kmsg.NewPtrFetchResponse()
			resp.SetVersion(v)
			resp.ThrottleMillis = rng.Int32N(10)
			r := &request{key: int16(kmsg.Fetch), corrID: rng.Int32(), resp: resp}
			want := map[*kmsg.FetchResponseTopicPartition][]byte{}
			for ti := range 1 + rng.IntN(3) {
				rt := kmsg.NewFetchResponseTopic()
				rt.Topic = string(rune('a' + ti))
				rt.TopicID = [16]byte{byte(ti), byte(round)}
				rt.Partitions = make([]kmsg.FetchResponseTopicPartition, 1+rng.IntN(4))
				resp.Topics = append(resp.Topics, rt)
			}
			for ti := range resp.Topics {
				for pi := range resp.Topics[ti].Partitions {
					p := &resp.Topics[ti].Partitions[pi]
					*p = kmsg.NewFetchResponseTopicPartition()
					p.Partition, p.HighWatermark, p.RecordBatches = int32(pi), rng.Int64N(1<<40), noRecords
					if rng.IntN(4) == 0 {
						continue // no data
					}
					var batches [][]byte
					var all []byte
					for range 1 + rng.IntN(3) {
						b := make([]byte, []int{1, 100, 200, 20000, 70000}[rng.IntN(5)])
						for i := range b {
							b[i] = byte(rng.Uint32())
						}
						batches = append(batches, b)
						all = append(all, b...)
					}
					r.records = append(r.records, fetchRecords{p, batches})
					want[p] = all
				}
			}
			got := frameBytes(encodeResponse(nil, r))
			for p, all := range want {
				p.RecordBatches = all
			}
			ref := appendResponse(nil, r)
			if !bytes.Equal(got, ref) {
				t.Fatalf("v%d round %d: by reference %d bytes, kmsg %d bytes, differ", v, round, len(got), len(ref))
			}
			checkEncodedResponse(t, r, got)
		}
	}
}
