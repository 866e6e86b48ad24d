package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/groupcoord"
	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/txncoord"
)

// offsetsTopic is the topic name a WriteTxnMarkers request gives a group
// coordinator shard under, as Kafka's __consumer_offsets partition: the
// partition number is the shard.
const offsetsTopic = "__consumer_offsets"

// Bounds of one WriteMarkers call's own retries of targets whose owner
// moved; past them the coordinator retries the call.
const (
	markerAttempts = 5
	markerBackoff  = 100 * time.Millisecond
)

// txnMarkers writes a transaction's outcome where it lives
// (txncoord.Markers): a control batch into each of its partitions, and the
// completion of its pending offsets in each group shard. A target this
// broker owns is written locally; another broker's gets a WriteTxnMarkers
// request, the way a Kafka coordinator reaches partition leaders.
type txnMarkers struct {
	log     *partition.Log
	groups  *groupcoord.Coordinator
	late    *lateNode // the cluster membership; unused on one node
	cluster bool      // a cluster member: targets may be owned elsewhere
	self    int32
	peers   *txnPeers
	hook    func(phase string) // the crash tests' seam; nil in production
	logger  *slog.Logger
}

var _ txncoord.Markers = (*txnMarkers)(nil)

// markerTarget is one place an outcome is written: a partition, or a group
// coordinator shard (group set, Topic offsetsTopic, Partition the shard).
type markerTarget struct {
	tp    txncoord.TopicPartition
	group bool
}

// errNoOwner: the target has no owner at the moment (it is moving).
var errNoOwner = errors.New("transactions: no owner to write the marker to")

// WriteMarkers writes the first target alone, so that a crash between
// markers leaves some written and some not (the crash tests' seam), then
// every other target at once, each owner's in one request.
func (m *txnMarkers) WriteMarkers(ctx context.Context, req txncoord.MarkerRequest) error {
	targets := m.targets(req)
	if len(targets) == 0 {
		return nil
	}
	if err := m.writeRetrying(ctx, req, targets[:1]); err != nil {
		return err
	}
	if m.hook != nil {
		m.hook("between-markers")
	}
	return m.writeRetrying(ctx, req, targets[1:])
}

// targets lists the partitions of req, then the group shards of its
// groups, each once.
func (m *txnMarkers) targets(req txncoord.MarkerRequest) []markerTarget {
	var out []markerTarget
	for _, tp := range req.Partitions {
		out = append(out, markerTarget{tp: tp})
	}
	seen := map[int32]bool{}
	for _, g := range req.Groups {
		shard := groupcoord.ShardOf(g)
		if !seen[shard] {
			seen[shard] = true
			out = append(out, markerTarget{tp: txncoord.TopicPartition{Topic: offsetsTopic, Partition: shard}, group: true})
		}
	}
	return out
}

// writeRetrying writes targets, retrying those whose owner moved or
// could not be reached, with their ownership looked up again; a fenced
// marker (a newer producer epoch or coordinator) is not retried.
func (m *txnMarkers) writeRetrying(ctx context.Context, req txncoord.MarkerRequest, targets []markerTarget) error {
	backoff := markerBackoff
	for attempt := 1; ; attempt++ {
		failed, err := m.write(ctx, req, targets)
		if len(failed) == 0 {
			return nil
		}
		if fenced(err) || attempt == markerAttempts {
			return fmt.Errorf("transactions: markers of %s (producer %d, epoch %d): %w", req.TransactionalID, req.ProducerID, req.ProducerEpoch, err)
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
		targets = failed
	}
}

// fenced says whether err refuses the marker for good: a newer producer
// epoch or coordinator epoch wrote there already.
func fenced(err error) bool {
	return errors.Is(err, kerr.InvalidProducerEpoch) || errors.Is(err, kerr.TransactionCoordinatorFenced) ||
		errors.Is(err, kerr.ProducerFenced)
}

// write writes each target once, in parallel: local ones directly, the
// others in one request per owner. It returns the targets that failed and
// their errors joined.
func (m *txnMarkers) write(ctx context.Context, req txncoord.MarkerRequest, targets []markerTarget) ([]markerTarget, error) {
	var (
		mu     sync.Mutex // guards failed and errs
		failed []markerTarget
		errs   []error
		wg     sync.WaitGroup
	)
	fail := func(t markerTarget, err error) {
		mu.Lock()
		defer mu.Unlock()
		failed = append(failed, t)
		errs = append(errs, fmt.Errorf("%s/%d: %w", t.tp.Topic, t.tp.Partition, err))
	}
	remote := map[int32][]markerTarget{}
	for _, t := range targets {
		owner, p, skip, err := m.owner(t)
		switch {
		case skip:
		case err != nil:
			fail(t, err)
		case owner == m.self:
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := m.writeLocal(ctx, req, t, p); err != nil {
					fail(t, err)
				}
			}()
		default:
			remote[owner] = append(remote[owner], t)
		}
	}
	for node, ts := range remote {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t, err := range m.writeRemote(ctx, req, node, ts) {
				fail(t, err)
			}
		}()
	}
	wg.Wait()
	return failed, errors.Join(errs...)
}

// owner finds who writes target t: this broker (with the partition, for a
// partition target) or another node. skip: the partition's topic is gone,
// so there is nothing to mark (Kafka skips a deleted partition too).
func (m *txnMarkers) owner(t markerTarget) (node int32, p *partition.Partition, skip bool, err error) {
	if !t.group {
		topic, ok := m.log.Topic(t.tp.Topic)
		parts := []*partition.Partition(nil)
		if ok {
			parts = topic.Partitions()
		}
		if t.tp.Partition < 0 || int(t.tp.Partition) >= len(parts) {
			m.logger.Info("transactions: no marker for a partition that no longer exists", "topic", t.tp.Topic, "partition", t.tp.Partition)
			return 0, nil, true, nil
		}
		p = parts[t.tp.Partition]
		if !m.cluster {
			return m.self, p, false, nil
		}
		n := m.late.n.Load()
		if n == nil {
			return 0, nil, false, errNoOwner
		}
		node, _, ok := n.Leader(topic.ID, t.tp.Partition)
		if !ok {
			return 0, nil, false, errNoOwner
		}
		return node, p, false, nil
	}
	if !m.cluster {
		return m.self, nil, false, nil
	}
	n := m.late.n.Load()
	if n == nil {
		return 0, nil, false, errNoOwner
	}
	node, ok := n.ShardLeader(t.tp.Partition)
	if !ok {
		return 0, nil, false, errNoOwner
	}
	return node, nil, false, nil
}

// writeLocal writes one target this broker owns and returns once it is
// durable.
func (m *txnMarkers) writeLocal(ctx context.Context, req txncoord.MarkerRequest, t markerTarget, p *partition.Partition) error {
	if t.group {
		return m.groups.CompleteTxn(ctx, t.tp.Partition, req.ProducerID, req.ProducerEpoch, req.Commit)
	}
	_, err := m.log.WriteMarker(ctx, p, partition.Marker{ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch,
		Commit: req.Commit, CoordinatorEpoch: req.CoordinatorEpoch})
	return err
}

// writeRemote sends node one WriteTxnMarkers request for targets and
// returns the error of each target that failed.
func (m *txnMarkers) writeRemote(ctx context.Context, req txncoord.MarkerRequest, node int32, targets []markerTarget) map[markerTarget]error {
	mreq := kmsg.NewPtrWriteTxnMarkersRequest()
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = req.ProducerID, req.ProducerEpoch, req.Commit, req.CoordinatorEpoch
	index := map[string]int{}
	for _, t := range targets {
		i, ok := index[t.tp.Topic]
		if !ok {
			i = len(mk.Topics)
			index[t.tp.Topic] = i
			mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			mt.Topic = t.tp.Topic
			mk.Topics = append(mk.Topics, mt)
		}
		mk.Topics[i].Partitions = append(mk.Topics[i].Partitions, t.tp.Partition)
	}
	mreq.Markers = append(mreq.Markers, mk)
	out := map[markerTarget]error{}
	resp, err := m.peers.request(ctx, node, mreq)
	if err != nil {
		for _, t := range targets {
			out[t] = fmt.Errorf("node %d: %w", node, err)
		}
		return out
	}
	answered := map[txncoord.TopicPartition]int16{}
	for _, rm := range resp.(*kmsg.WriteTxnMarkersResponse).Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				answered[txncoord.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}] = rp.ErrorCode
			}
		}
	}
	for _, t := range targets {
		code, ok := answered[t.tp]
		switch {
		case !ok:
			out[t] = fmt.Errorf("node %d: no answer for the partition", node)
		case code != 0:
			out[t] = fmt.Errorf("node %d: %w", node, kerr.ErrorForCode(code))
		}
	}
	return out
}
