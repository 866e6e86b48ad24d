package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// FailoverFigure is one failover measured in a round: the broker that
// owned the most partitions was SIGKILLed, and each of its partitions
// timed from the kill to the first acknowledgement of a record sent to it
// after the kill (an acknowledgement the killed broker cannot have
// given). The time includes what a real client goes through: its retries,
// its metadata refreshes and the lease TTL the others wait out.
type FailoverFigure struct {
	KilledNode    int32               `json:"killed_node"`
	AfterSeconds  float64             `json:"after_s"` // into the round's produce phase
	Moved         int                 `json:"moved_partitions"`
	Recovered     int                 `json:"recovered_partitions"` // with an acknowledgement after the kill
	MinSeconds    float64             `json:"min_s"`
	MedianSeconds float64             `json:"median_s"`
	MaxSeconds    float64             `json:"max_s"`
	Partitions    []PartitionFailover `json:"partitions,omitempty"`
	Error         string              `json:"error,omitempty"`
}

// PartitionFailover is one moved partition; Seconds is -1 when no record
// sent to it after the kill was acknowledged in the round.
type PartitionFailover struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Seconds   float64 `json:"s"`
}

// failoverProducerOpts keep a producer retrying through a failover: the
// moved partitions have no owner for about a lease TTL, and a record that
// failed there would end the round.
var failoverProducerOpts = []kgo.Opt{kgo.RecordRetries(1 << 30), kgo.RecordDeliveryTimeout(2 * time.Minute)}

// failover kills a cluster's busiest broker during a round and times the
// moved partitions.
type failover struct {
	cluster *clusterTarget
	after   time.Duration
	armed   atomic.Bool // set once killAt and first are; acks before are ignored cheaply
	mu      sync.Mutex  // guards the fields below
	killAt  time.Time
	fig     FailoverFigure
	first   map[topicPartition]time.Duration // the moved partitions; -1 until acknowledged
}

// takeFailover returns the failover of the run's first live round (nil
// when none is asked or it was taken).
func (c *clusterTarget) takeFailover() *failover {
	if c.failoverAfter <= 0 || c.failoverTaken {
		return nil
	}
	c.failoverTaken = true
	return &failover{cluster: c, after: c.failoverAfter}
}

// start arms the ack hook on c and kills the busiest broker `after` into
// the produce phase; the returned stop ends it and returns the figure.
func (f *failover) start(ctx context.Context, c *counters, produceStart time.Time, topics []string) (stop func() *FailoverFigure) {
	c.onAck = f.acked
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			f.fail(fmt.Errorf("the round ended before --failover-after %s", f.after))
			return
		case <-time.After(time.Until(produceStart.Add(f.after))):
		}
		f.fig.AfterSeconds = time.Since(produceStart).Seconds()
		if err := f.kill(ctx, topics); err != nil {
			f.fail(err)
		}
	}()
	return func() *FailoverFigure {
		cancel()
		<-done
		return f.figure()
	}
}

func (f *failover) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fig.Error == "" {
		f.fig.Error = err.Error()
	}
}

// kill reads the partitions' owners from etcd and SIGKILLs the broker
// owning the most.
func (f *failover) kill(ctx context.Context, topics []string) error {
	owners, err := f.cluster.owners(ctx, topics)
	if err != nil {
		return err
	}
	victim, moved := busiest(owners)
	if len(moved) == 0 {
		return fmt.Errorf("no own/ keys for the round's %d topics in etcd: no broker owns a partition", len(topics))
	}
	if int(victim) >= len(f.cluster.brokers) || victim < 0 {
		return fmt.Errorf("the busiest owner, node %d, is not a broker the bench started", victim)
	}
	return f.cluster.brokers[victim].kill(ctx, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.killAt = time.Now()
		f.fig.KilledNode, f.fig.Moved = victim, len(moved)
		f.first = make(map[topicPartition]time.Duration, len(moved))
		for _, tp := range moved {
			f.first[tp] = -1
		}
		f.armed.Store(true)
	})
}

// busiest is the node owning the most partitions (the lowest such id)
// and its partitions, sorted.
func busiest(owners map[topicPartition]int32) (node int32, parts []topicPartition) {
	count := map[int32]int{}
	for _, n := range owners {
		count[n]++
	}
	node = -1
	for n, k := range count {
		if node < 0 || k > count[node] || k == count[node] && n < node {
			node = n
		}
	}
	for tp, n := range owners {
		if n == node {
			parts = append(parts, tp)
		}
	}
	slices.SortFunc(parts, func(a, b topicPartition) int {
		if a.topic != b.topic {
			return cmp.Compare(a.topic, b.topic)
		}
		return int(a.partition - b.partition)
	})
	return node, parts
}

// acked is the producers' hook: the first acknowledgement of a record sent
// after the kill times its partition.
func (f *failover) acked(tp topicPartition, sent, at time.Time) {
	if !f.armed.Load() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, moved := f.first[tp]; moved && d < 0 && sent.After(f.killAt) {
		f.first[tp] = at.Sub(f.killAt)
	}
}

// figure summarizes the moved partitions.
func (f *failover) figure() *FailoverFigure {
	f.mu.Lock()
	defer f.mu.Unlock()
	fig := f.fig
	var recovered []float64
	for tp, d := range f.first {
		s := -1.0
		if d >= 0 {
			s = d.Seconds()
			recovered = append(recovered, s)
		}
		fig.Partitions = append(fig.Partitions, PartitionFailover{Topic: tp.topic, Partition: tp.partition, Seconds: s})
	}
	sort.Slice(fig.Partitions, func(i, j int) bool {
		a, b := fig.Partitions[i], fig.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	fig.Recovered = len(recovered)
	fig.MinSeconds, fig.MedianSeconds, fig.MaxSeconds = spread(recovered)
	return &fig
}

// spread is the minimum, median and maximum of xs (zeros when empty).
func spread(xs []float64) (lo, median, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return s[0], median, s[n-1]
}
