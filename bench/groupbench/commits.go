package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// commitFigure is one commit-rate run.
type commitFigure struct {
	Committers    int     `json:"committers"`
	Partitions    int     `json:"partitions_per_commit"`
	CommitsPerSec float64 `json:"commits_per_s"`
	OffsetsPerSec float64 `json:"offsets_per_s"`
	TxnsPerSec    float64 `json:"metadata_txns_per_s"`
	P50Ms         float64 `json:"p50_ms"`
	P99Ms         float64 `json:"p99_ms"`
}

// runCommits has concurrent committers, each its own client and group
// (standalone commits, generation -1), commit as fast as their answers
// come for d, and reports the sustained rate, the latency and the metadata
// transactions per second the persister needed.
func runCommits(b *broker, d time.Duration) []commitFigure {
	const topic = "commits"
	b.createTopic(topic, 16)
	var out []commitFigure
	for _, run := range []struct{ committers, parts int }{{1, 1}, {16, 1}, {64, 1}, {64, 16}} {
		fig := commitRun(b, topic, run.committers, run.parts, d)
		fmt.Fprintf(os.Stderr, "commits: %+v\n", fig)
		out = append(out, fig)
	}
	return out
}

func commitRun(b *broker, topic string, committers, parts int, d time.Duration) commitFigure {
	var mu sync.Mutex // guards lat
	var lat []time.Duration
	txns := b.metric("sediment_group_metadata_txns_total")
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for i := range committers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := commitLoop(ctx, b, fmt.Sprintf("commits-%d-%d-%d", committers, parts, i), topic, parts)
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	took := time.Since(start).Seconds()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fig := commitFigure{Committers: committers, Partitions: parts,
		CommitsPerSec: float64(len(lat)) / took, OffsetsPerSec: float64(len(lat)*parts) / took,
		TxnsPerSec: (b.metric("sediment_group_metadata_txns_total") - txns) / took}
	if len(lat) > 0 {
		fig.P50Ms, fig.P99Ms = ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])
	}
	return fig
}

// commitLoop commits until ctx ends and returns each commit's latency.
func commitLoop(ctx context.Context, b *broker, group, topic string, parts int) []time.Duration {
	// Kafka 4.0's versions: OffsetCommit v9 names topics, v10 wants ids.
	cl := b.client(kgo.RequestRetries(0), kgo.MaxVersions(kversion.V4_0_0()))
	defer cl.Close()
	var lat []time.Duration
	for n := int64(1); ctx.Err() == nil; n++ {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = group, -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		for p := range parts {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset = int32(p), n
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = []kmsg.OffsetCommitRequestTopic{rt}
		start := time.Now()
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil {
			check(err)
		}
		for _, p := range resp.Topics[0].Partitions {
			check(kerr.ErrorForCode(p.ErrorCode))
		}
		lat = append(lat, time.Since(start))
	}
	return lat
}
