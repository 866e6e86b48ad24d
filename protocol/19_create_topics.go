package protocol

// CreateTopics v0–v7. num_partitions -1 takes num.partitions; a replica
// assignment fixes the partition count instead (and, as in Kafka, requires
// num_partitions and replication_factor -1). The replication factor is
// accepted (-1 or >= 1) and reported back as 1: durability comes from the
// WAL and the object store, not from replicas. Configs are checked against
// the topic configs Sediment knows (INVALID_CONFIG names the bad one).
// A topic named twice in one request is not created and, as in Kafka, is
// answered once, with INVALID_REQUEST, after the other topics.
// validate_only checks everything and creates nothing. v5+ answers with the
// partitions, replication factor and configs; v7+ with the topic id.

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/storage/partition"
)

func init() { register(kmsg.CreateTopics, 0, 7, handleCreateTopics) }

func handleCreateTopics(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	count := map[string]int{}
	var dups []string
	for _, rt := range req.Topics {
		if count[rt.Topic]++; count[rt.Topic] == 2 {
			dups = append(dups, rt.Topic)
		}
	}
	for _, rt := range req.Topics {
		if count[rt.Topic] > 1 {
			continue
		}
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic, st.NumPartitions, st.ReplicationFactor = rt.Topic, -1, -1
		r.createTopic(req, rt, &st)
		resp.Topics = append(resp.Topics, st)
	}
	for _, name := range dups {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic, st.NumPartitions, st.ReplicationFactor = name, -1, -1
		st.ErrorCode = r.code(kerr.InvalidRequest.Code)
		st.ErrorMessage = errorMessage(fmt.Errorf("topic %s is named more than once", name))
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

func (r *request) createTopic(req *kmsg.CreateTopicsRequest, rt kmsg.CreateTopicsRequestTopic, st *kmsg.CreateTopicsResponseTopic) {
	fail := func(code int16, err error) {
		st.ErrorCode, st.ErrorMessage = r.code(code), errorMessage(err)
	}
	if err := validateTopicName(rt.Topic); err != nil {
		fail(kerr.InvalidTopicException.Code, err)
		return
	}
	parts, err := r.partitionCount(rt)
	if err != nil {
		fail(kerr.InvalidPartitions.Code, err)
		return
	}
	if len(rt.ReplicaAssignment) > 0 && rt.ReplicationFactor != -1 {
		// Kafka: a manual assignment fixes the replicas itself.
		fail(kerr.InvalidReplicationFactor.Code, errors.New("a replica assignment was given, but the replication factor is not -1"))
		return
	}
	if rt.ReplicationFactor == 0 || rt.ReplicationFactor < -1 {
		fail(kerr.InvalidReplicationFactor.Code, fmt.Errorf("replication factor %d: use -1 or at least 1", rt.ReplicationFactor))
		return
	}
	configs, err := requestConfigs(rt.Configs)
	if err != nil {
		fail(kerr.InvalidConfig.Code, err)
		return
	}
	t, err := r.s.log.CreateTopic(r.ctx(), rt.Topic, parts, configs, req.ValidateOnly)
	if errors.Is(err, partition.ErrTopicExists) {
		// Kafka's words: kafka-topics --create and other tools print the
		// message as the broker sent it.
		msg := "Topic '" + rt.Topic + "' already exists."
		st.ErrorCode, st.ErrorMessage = r.code(kerr.TopicAlreadyExists.Code), &msg
		return
	}
	if err != nil {
		fail(r.codeOf(err), err)
		return
	}
	st.NumPartitions, st.ReplicationFactor = parts, 1
	own := configs
	if t != nil {
		st.TopicID = t.ID
		own = t.Configs()
	}
	for _, e := range topicConfigEntries(own, r.s.log.BrokerConfig().Map(), nil) {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		v := e.value
		c.Name, c.Value, c.ReadOnly, c.Source = e.def.Name, &v, e.def.ReadOnly, int8(e.source)
		st.Configs = append(st.Configs, c)
	}
}

func (r *request) partitionCount(rt kmsg.CreateTopicsRequestTopic) (int32, error) {
	switch {
	case len(rt.ReplicaAssignment) > 0 && rt.NumPartitions != -1:
		return 0, errors.New("give either num_partitions or a replica assignment, not both")
	case len(rt.ReplicaAssignment) > 0:
		return int32(len(rt.ReplicaAssignment)), nil
	case rt.NumPartitions == -1:
		n, _ := strconv.Atoi(r.s.brokerConfig("num.partitions"))
		return int32(n), nil
	case rt.NumPartitions <= 0 || rt.NumPartitions > partition.MaxPartitions:
		return 0, fmt.Errorf("%d partitions: use -1 or 1..%d", rt.NumPartitions, partition.MaxPartitions)
	}
	return rt.NumPartitions, nil
}

func requestConfigs(cs []kmsg.CreateTopicsRequestTopicConfig) (map[string]string, error) {
	out := map[string]string{}
	for _, c := range cs {
		if c.Value == nil {
			return nil, fmt.Errorf("config %s has a null value", c.Name)
		}
		out[c.Name] = *c.Value
	}
	return out, nil
}
