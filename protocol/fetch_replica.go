package protocol

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/storage/partition"
)

// Reads from any broker (KIP-392). Committed data is in the shared bucket,
// so in a cluster every broker is a replica of every partition up to its
// committed end. A read_uncommitted consumer's fetch (ReplicaID -1) from
// v11, which may name the client's rack, is served by a broker that does
// not own the partition from the committed log (partition.Log.ReadReplica)
// instead of NOT_LEADER_OR_FOLLOWER; below v11 clients do not expect a
// follower's answer, and keep getting NOT_LEADER_OR_FOLLOWER. So does a
// read_committed consumer, and it is never sent to a preferred read
// replica: only the owner knows the partition's open transactions, hence
// its last stable offset and aborted transactions. The owner answers a
// consumer in another rack with PreferredReadReplica, a live broker of
// the client's rack, and no records (as Kafka's ReplicaManager skips the
// read then), when the fetch offset is committed: a consumer at the tail
// keeps reading from the owner, whose data is not in the bucket yet.

// replicaPoll is how often a long poll re-reads the partitions it serves as
// a replica: nothing wakes it when the owner commits elsewhere, and the
// log reads a partition's committed end at most once per 100 ms anyway.
const replicaPoll = 100 * time.Millisecond

// readsAnyBroker says whether req may be served by a broker that does not
// own a partition: a consumer's fetch, v11 or later, in a cluster.
func (r *request) readsAnyBroker(req *kmsg.FetchRequest) bool {
	if r.s.cfg.Cluster == nil || req.Version < 11 {
		return false
	}
	if req.Version >= 15 {
		return req.ReplicaState.ID < 0
	}
	return req.ReplicaID < 0
}

// preferredReplica returns the broker the owner sends a consumer in
// req.Rack to for partition p at offset, or -1 to serve it here: -1 when
// the client names no rack, this broker is in it, no other live broker
// is, or offset is not in the committed log. Among several brokers of the
// rack the partition picks one, so that a rack's load spreads.
func (r *request) preferredReplica(req *kmsg.FetchRequest, c *lazyCluster, p *partition.Partition, offset int64) int32 {
	if req.Rack == "" || !r.readsAnyBroker(req) || req.IsolationLevel == readCommitted {
		return -1
	}
	logStart, end, err := r.s.log.CommittedRange(p)
	if err != nil || offset < logStart || offset >= end {
		return -1
	}
	cs := c.get(r.s)
	if self, _ := cs.broker(cs.self); self.Rack == req.Rack {
		return -1
	}
	var in []int32
	for _, b := range cs.brokers { // by node id: the choice is stable
		if b.Rack == req.Rack && b.NodeID != cs.self {
			in = append(in, b.NodeID)
		}
	}
	if len(in) == 0 {
		return -1
	}
	return in[int(p.Index())%len(in)]
}

// lazyCluster reads the cluster view once per request, on first use.
type lazyCluster struct {
	read bool
	c    clusterState
}

func (l *lazyCluster) get(s *Server) clusterState {
	if !l.read {
		l.c, l.read = s.cluster(), true
	}
	return l.c
}

// redirect answers sp with the preferred replica node and the owner's
// offsets, and no records.
func redirect(sp *kmsg.FetchResponseTopicPartition, p *partition.Partition, node int32) {
	logStart, hw := p.Offsets()
	sp.PreferredReadReplica = node
	sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = hw, p.LastStableOffset(), logStart
}

// countReplicaReads adds a fetch's partitions served as a replica, in its
// final answer, to the metrics.
func (r *request) countReplicaReads(targets []fetchTarget) {
	bytes, served := 0, false
	for _, t := range targets {
		if t.replicaRead {
			bytes, served = bytes+t.bytes, true
		}
		if t.resp.PreferredReadReplica >= 0 {
			r.s.m.preferredReplica.Inc()
		}
	}
	if served {
		r.s.m.replicaRequests.Inc()
		r.s.m.replicaBytes.Add(float64(bytes))
	}
}

// replicaTicker returns a channel that ticks every replicaPoll while
// targets holds a partition served as a replica (nil otherwise), and its
// stop.
func replicaTicker(targets []fetchTarget) (<-chan time.Time, func()) {
	for _, t := range targets {
		if t.replica && t.part != nil {
			tk := time.NewTicker(replicaPoll)
			return tk.C, tk.Stop
		}
	}
	return nil, func() {}
}
