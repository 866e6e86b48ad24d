package protocol

// Metadata v0–v13. On one node this broker is the whole cluster: it leads
// every partition, at the partition's current leader epoch (v7+), with
// itself as the only replica. In a cluster (Config.Cluster) the brokers are
// the live ones (with their racks, v1+), the controller is the elected one,
// and each partition's leader is its owner at its owner epoch, the only
// replica and in-sync replica; a partition that no live broker owns is
// LEADER_NOT_AVAILABLE with leader -1 and no replicas, as Kafka answers
// during a leader election. Unknown
// topics are created when auto.create.topics.enable is true and the request
// allows it (always for v0–v3, which have no flag; kafka-python relies on
// that), with num.partitions partitions. v10+ carries topic ids; from v12 a
// topic asked for by id is answered by id (UNKNOWN_TOPIC_ID when
// unknown), while v10–v11 may not name topics by id (INVALID_REQUEST).

import (
	"errors"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
)

func init() { register(kmsg.Metadata, 0, 13, handleMetadata) }

// authorizedAll is the bitfield of every ACL operation Kafka reports for a
// topic when nothing is denied.
const authorizedAll = int32(1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11)

// authorizedOmitted is what Kafka returns when authorized operations were
// not requested.
const authorizedOmitted = int32(-2147483648)

func handleMetadata(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.MetadataRequest)
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	c := r.s.cluster()
	resp.Brokers = metadataBrokers(c)
	resp.ClusterID = &r.s.cfg.ClusterID
	resp.ControllerID = c.controller
	resp.AuthorizedOperations = authorizedOmitted
	all := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	if all {
		for _, t := range r.s.log.Topics() {
			resp.Topics = append(resp.Topics, r.topicMetadata(c, req, t))
		}
		return resp, nil
	}
	if req.Version < 12 && namesByID(req) {
		// v10 and v11 carry the id field but name topics only by name;
		// Kafka refuses such a request with INVALID_REQUEST on every topic.
		for _, rt := range req.Topics {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic, mt.TopicID = rt.Topic, rt.TopicID
			mt.ErrorCode = r.code(kerr.InvalidRequest.Code)
			resp.Topics = append(resp.Topics, mt)
		}
		return resp, nil
	}
	autoCreate := req.Version < 4 || req.AllowAutoTopicCreation
	for _, rt := range req.Topics {
		resp.Topics = append(resp.Topics, r.metadataFor(c, req, rt, autoCreate))
	}
	return resp, nil
}

// namesByID says whether a request names a topic by id or without a name.
func namesByID(req *kmsg.MetadataRequest) bool {
	for _, rt := range req.Topics {
		if rt.Topic == nil || rt.TopicID != ([16]byte{}) {
			return true
		}
	}
	return false
}

// metadataBrokers lists the live brokers.
func metadataBrokers(c clusterState) []kmsg.MetadataResponseBroker {
	out := make([]kmsg.MetadataResponseBroker, 0, len(c.brokers))
	for _, cb := range c.brokers {
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port, b.Rack = cb.NodeID, cb.Host, cb.Port, rackPtr(cb.Rack)
		out = append(out, b)
	}
	return out
}

// metadataFor answers one requested topic, creating it when allowed. A
// topic with an id is looked up by it whatever its name: the Java client
// sends an empty name, not a null one, beside the id.
func (r *request) metadataFor(c clusterState, req *kmsg.MetadataRequest, rt kmsg.MetadataRequestTopic, autoCreate bool) kmsg.MetadataResponseTopic {
	if rt.Topic == nil || rt.TopicID != ([16]byte{}) {
		if t, ok := r.s.log.TopicByID(metadata.TopicID(rt.TopicID)); ok {
			return r.topicMetadata(c, req, t)
		}
		mt := kmsg.NewMetadataResponseTopic()
		mt.TopicID, mt.ErrorCode = rt.TopicID, r.code(kerr.UnknownTopicID.Code)
		return mt
	}
	name := *rt.Topic
	if t, ok := r.s.log.Topic(name); ok {
		return r.topicMetadata(c, req, t)
	}
	// In a cluster the topic may be new on another broker; look again.
	if err := r.s.log.SyncTopicsIfStale(r.ctx(), 100*time.Millisecond); err != nil {
		r.s.lg.Warn("topic sync failed", "topic", name, "err", err)
	}
	if t, ok := r.s.log.Topic(name); ok {
		return r.topicMetadata(c, req, t)
	}
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic = rt.Topic
	if err := validateTopicName(name); err != nil {
		mt.ErrorCode = r.code(kerr.InvalidTopicException.Code)
		return mt
	}
	if !autoCreate || r.s.brokerConfig("auto.create.topics.enable") != "true" {
		mt.ErrorCode = r.code(kerr.UnknownTopicOrPartition.Code)
		return mt
	}
	n, _ := strconv.Atoi(r.s.brokerConfig("num.partitions"))
	t, err := r.s.log.CreateTopic(r.ctx(), name, int32(n), nil, false)
	if errors.Is(err, partition.ErrTopicExists) {
		t, _ = r.s.log.Topic(name)
	} else if err != nil {
		r.s.lg.Warn("auto-create failed", "topic", name, "err", err)
		mt.ErrorCode = r.code(kerr.LeaderNotAvailable.Code) // retriable
		return mt
	}
	if t == nil {
		mt.ErrorCode = r.code(kerr.LeaderNotAvailable.Code)
		return mt
	}
	return r.topicMetadata(c, req, t)
}

func (r *request) topicMetadata(c clusterState, req *kmsg.MetadataRequest, t *partition.Topic) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	name := t.Name
	mt.Topic, mt.TopicID = &name, t.ID
	mt.AuthorizedOperations = authorizedOmitted
	if req.IncludeTopicAuthorizedOperations {
		mt.AuthorizedOperations = authorizedAll
	}
	for _, p := range t.Partitions() {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = p.Index()
		node, epoch, ok := c.leader(t, p)
		if !ok {
			mp.ErrorCode, mp.Leader, mp.LeaderEpoch = r.code(kerr.LeaderNotAvailable.Code), -1, p.LeaderEpoch()
			mp.Replicas, mp.ISR = []int32{}, []int32{}
		} else {
			mp.Leader, mp.LeaderEpoch = node, epoch
			mp.Replicas, mp.ISR = []int32{node}, []int32{node}
		}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}

// brokerConfig returns a broker config's effective value.
func (s *Server) brokerConfig(name string) string {
	return s.log.BrokerConfig().Values().String(name)
}
