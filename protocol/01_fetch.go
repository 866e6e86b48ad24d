package protocol

// Fetch v4–v18. Partitions are read in request order: from the tail cache,
// the WAL, or the object store (metadata index + block cache). The first
// partition with data returns at least one whole batch even when it is
// larger than the limits (KIP-74); otherwise partition_max_bytes and
// max_bytes bound the answer. When fewer than min_bytes are ready the fetch
// long-polls on the partitions' high watermarks until max_wait_ms. A
// partition answered with an error carries no records and offsets of -1,
// as in Kafka; partition.Log.Read never returns both.
//
// Fetch sessions (KIP-227) are declined: the answer always carries session
// id 0, which tells the client that no session was created, so every fetch
// is a full fetch; a request that names a session (id != 0 with epoch > 0)
// gets FETCH_SESSION_ID_NOT_FOUND. Every partition reports its last stable
// offset (LSO: the first offset of its oldest open transaction, else the
// high watermark). isolation_level 1 (read_committed) never returns a batch
// at or past the LSO, and answers the aborted transactions overlapping the
// returned batches (sorted by first offset; isolation 0 answers null), by
// which the client drops their records; its long poll also wakes when the
// LSO moves. v13+ names topics by id. Leader epochs
// (CurrentLeaderEpoch, and from v12 LastFetchedEpoch with DivergingEpoch)
// are checked as Kafka does; see fetchEpochs. In a cluster a partition this
// broker does not own is NOT_LEADER_OR_FOLLOWER (or a leader-epoch error
// against its owner's epoch, see notLeaderCode), answered at once; from v16
// such a partition names the current leader, and the response its
// endpoint (KIP-951), as Kafka fills them for NOT_LEADER_OR_FOLLOWER and
// FENCED_LEADER_EPOCH. From v11 a consumer's fetch is served by any broker
// below the partition's committed end, and the owner may answer a rack-aware
// consumer with a PreferredReadReplica (KIP-392, fetch_replica.go); only a
// read_uncommitted one, since a replica does not know the LSO and the
// aborted transactions.

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
)

func init() { register(kmsg.Fetch, 4, 18, handleFetch) }

// maxFetchWait bounds a long poll whatever the client asks.
const maxFetchWait = 5 * time.Minute

// noRecords is the records field of a partition answered without data. It
// must be empty, never null: Kafka always sends empty records, and
// librdkafka rejects a null one ("invalid MessageSetSize -1") and throws
// away the whole response, data of the other partitions included. kmsg
// encodes a nil slice as null.
var noRecords = []byte{}

func handleFetch(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.FetchRequest)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	if req.SessionID != 0 && req.SessionEpoch > 0 {
		resp.ErrorCode = r.code(kerr.FetchSessionIDNotFound.Code)
		return resp, nil
	}
	r.wait = func() { r.longPoll(req, resp) }
	return resp, nil
}

// fetchTarget is one requested partition, resolved.
type fetchTarget struct {
	topic *partition.Topic     // nil when unknown
	part  *partition.Partition // nil when unknown or answered without a read
	req   kmsg.FetchRequestTopicPartition
	resp  *kmsg.FetchResponseTopicPartition
	// replica: another broker owns part (the view says), and it is read
	// here as a replica (KIP-392).
	replica bool
	// replicaRead and bytes are the latest read's: served from the
	// committed log by a broker not owning it, and its record bytes.
	replicaRead bool
	bytes       int
}

// longPoll fills resp, waiting for min_bytes or max_wait_ms.
func (r *request) longPoll(req *kmsg.FetchRequest, resp *kmsg.FetchResponse) {
	targets := r.fetchTargets(req, resp)
	wait := min(time.Duration(req.MaxWaitMillis)*time.Millisecond, maxFetchWait)
	ctx, cancel := context.WithTimeout(r.ctx(), max(wait, 0))
	defer cancel()
	wake := make(chan struct{}, 1)
	defer r.countFetchErrors(targets)
	defer r.countReplicaReads(targets)
	defer r.fetchLeaderHints(req, resp, targets)
	tick, stopTick := replicaTicker(targets)
	defer stopTick()
	for _, t := range targets {
		if t.part != nil {
			t.part.Notify(wake) // registered before reading: no lost wake-up
			defer t.part.StopNotify(wake)
		}
	}
	for _, t := range targets {
		if t.part == nil { // an unknown partition is answered at once
			ctx, cancel = context.WithCancel(ctx)
			cancel()
			break
		}
	}
	for {
		n, failed := r.fillFetch(req, targets)
		if n >= int(req.MinBytes) || failed || ctx.Err() != nil {
			return
		}
		select {
		case <-wake:
			for _, t := range targets {
				if t.part != nil {
					t.part.Notify(wake)
				}
			}
		case <-tick:
		case <-ctx.Done():
			r.fillFetch(req, targets)
			return
		}
	}
}

func (r *request) countFetchErrors(targets []fetchTarget) {
	for _, t := range targets {
		if t.part != nil {
			r.code(t.resp.ErrorCode)
		}
	}
}

// fetchTargets resolves the requested partitions and lays out the response.
func (r *request) fetchTargets(req *kmsg.FetchRequest, resp *kmsg.FetchResponse) []fetchTarget {
	var targets []fetchTarget
	var cluster lazyCluster
	resp.Topics = make([]kmsg.FetchResponseTopic, len(req.Topics))
	for i, rt := range req.Topics {
		var t *partition.Topic
		if req.Version >= 13 {
			t, _ = r.s.log.TopicByID(metadata.TopicID(rt.TopicID))
		} else {
			t, _ = r.s.log.Topic(rt.Topic)
		}
		st := &resp.Topics[i]
		*st = kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		st.Partitions = make([]kmsg.FetchResponseTopicPartition, len(rt.Partitions))
		for j, rp := range rt.Partitions {
			sp := &st.Partitions[j]
			*sp = kmsg.NewFetchResponseTopicPartition()
			sp.Partition, sp.RecordBatches = rp.Partition, noRecords
			ft := fetchTarget{topic: t, req: rp, resp: sp}
			switch {
			case t == nil && req.Version >= 13:
				sp.ErrorCode, sp.HighWatermark = r.code(kerr.UnknownTopicID.Code), -1
			case t == nil || t.Partition(rp.Partition) == nil:
				sp.ErrorCode, sp.HighWatermark = r.code(kerr.UnknownTopicOrPartition.Code), -1
			default:
				ft.part, ft.replica = r.fetchPart(req, &cluster, t, rp, sp)
			}
			targets = append(targets, ft)
		}
	}
	return targets
}

// fetchPart decides how a known partition is answered: read here, as its
// leader or (replica) as a replica of the leader the view names; or
// answered already in sp, with an error, a diverging epoch or a preferred
// read replica (part nil).
func (r *request) fetchPart(req *kmsg.FetchRequest, c *lazyCluster, t *partition.Topic, rp kmsg.FetchRequestTopicPartition, sp *kmsg.FetchResponseTopicPartition) (part *partition.Partition, replica bool) {
	code := r.s.notLeaderCode(t, rp.Partition, rp.CurrentLeaderEpoch)
	switch {
	case code == kerr.NotLeaderForPartition.Code && r.readsAnyBroker(req) && req.IsolationLevel != readCommitted:
		return r.replicaEpochs(t.Partition(rp.Partition), rp, sp), true
	case code != 0:
		sp.ErrorCode = r.code(code)
		sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
		return nil, false
	}
	part = r.fetchEpochs(t.Partition(rp.Partition), rp, sp)
	if part == nil {
		return nil, false
	}
	if node := r.preferredReplica(req, c, part, rp.FetchOffset); node >= 0 {
		redirect(sp, part, node)
		return nil, false
	}
	return part, false
}

// fillFetch (re)reads every target into the response and returns the bytes
// and whether any partition failed (Kafka answers at once then).
func (r *request) fillFetch(req *kmsg.FetchRequest, targets []fetchTarget) (total int, failed bool) {
	budget := int(req.MaxBytes)
	if budget <= 0 {
		budget = 1 << 30
	}
	r.records = r.records[:0]
	for i, t := range targets {
		// The first partition's read loads its own block; the
		// others' blocks load meanwhile (the block cache's readahead
		// slots bound this, also for a partition the response turns
		// out to have no room for).
		if i > 0 && t.part != nil {
			r.s.log.Prefetch(r.ctx(), t.part, t.req.FetchOffset)
		}
	}
	read := r.s.log.Read
	switch {
	case req.IsolationLevel == readCommitted:
		read = r.s.log.ReadCommitted
	case r.readsAnyBroker(req):
		read = r.s.log.ReadReplica
	}
	for i := range targets {
		t := &targets[i]
		if t.part == nil {
			continue
		}
		t.replicaRead, t.bytes = false, 0
		limit := min(int(t.req.PartitionMaxBytes), budget-total)
		if limit <= 0 && total > 0 {
			// No room left, but Kafka still reports the
			// partition's offsets.
			t.resp.RecordBatches = noRecords
			logStart, hw := t.part.Offsets()
			lso := t.part.LastStableOffset()
			if t.replica {
				logStart, hw = t.part.ReplicaOffsets()
				lso = hw
			}
			t.resp.HighWatermark, t.resp.LastStableOffset, t.resp.LogStartOffset = hw, lso, logStart
			t.resp.AbortedTransactions = abortedOf(req, nil)
			continue
		}
		res, err := read(r.ctx(), t.part, t.req.FetchOffset, max(limit, 0), total == 0)
		t.resp.ErrorCode = errorCode(err)
		t.resp.RecordBatches = noRecords
		if err != nil {
			// Kafka reports unknown offsets (-1), and no records, with
			// a failed partition; a replica's out-of-range answer
			// keeps its offsets, by which a client below the log
			// start goes back to the leader (KIP-392).
			t.resp.HighWatermark, t.resp.LastStableOffset, t.resp.LogStartOffset = -1, -1, -1
			t.resp.AbortedTransactions = nil
			if res.Replica && errors.Is(err, partition.ErrOffsetOutOfRange) {
				t.resp.HighWatermark, t.resp.LastStableOffset, t.resp.LogStartOffset = res.HighWatermark, res.HighWatermark, res.LogStartOffset
			}
			failed = true
			continue
		}
		t.replicaRead, t.bytes = res.Replica, res.Bytes
		t.resp.HighWatermark, t.resp.LastStableOffset = res.HighWatermark, res.LastStableOffset
		if res.Replica {
			t.resp.LastStableOffset = res.HighWatermark // a replica knows no open transactions
		}
		t.resp.LogStartOffset, t.resp.AbortedTransactions = res.LogStartOffset, abortedOf(req, res.Aborted)
		switch {
		case res.Wire != nil:
			r.records = append(r.records, fetchRecords{t.resp, res.Wire})
		case len(res.Batches) > 0:
			r.records = append(r.records, fetchRecords{t.resp, res.Batches})
		}
		total += res.Bytes
	}
	return total, failed
}

// fetchLeaderHints names, from v16 in a cluster, the current leader of every
// partition answered NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH, and the
// endpoints of those leaders.
func (r *request) fetchLeaderHints(req *kmsg.FetchRequest, resp *kmsg.FetchResponse, targets []fetchTarget) {
	if r.s.cfg.Cluster == nil || req.Version < 16 {
		return
	}
	var c clusterState
	read := false
	for _, t := range targets {
		if t.topic == nil || !hinted(t.resp.ErrorCode) {
			continue
		}
		if !read {
			c, read = r.s.cluster(), true
		}
		cur := c.currentLeaderOf(t.topic, t.req.Partition)
		t.resp.CurrentLeader.LeaderID, t.resp.CurrentLeader.LeaderEpoch = cur.node, cur.epoch
		if cur.endpoint == nil || slices.ContainsFunc(resp.Brokers, func(b kmsg.FetchResponseBroker) bool { return b.NodeID == cur.node }) {
			continue
		}
		b := kmsg.NewFetchResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack = cur.node, cur.endpoint.Host, cur.endpoint.Port, rackPtr(cur.endpoint.Rack)
		resp.Brokers = append(resp.Brokers, b)
	}
}

// readCommitted is Fetch's and ListOffsets' isolation_level of a
// read_committed consumer.
const readCommitted = 1

// abortedOf lays out the aborted transactions a fetch answers, as Kafka
// does: a list (empty when there are none) for read_committed, null for
// read_uncommitted.
func abortedOf(req *kmsg.FetchRequest, aborted []partition.AbortedTxn) []kmsg.FetchResponseTopicPartitionAbortedTransaction {
	if req.IsolationLevel != readCommitted {
		return nil
	}
	out := make([]kmsg.FetchResponseTopicPartitionAbortedTransaction, 0, len(aborted))
	for _, a := range aborted {
		at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		at.ProducerID, at.FirstOffset = a.ProducerID, a.FirstOffset
		out = append(out, at)
	}
	return out
}
