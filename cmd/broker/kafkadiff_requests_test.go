//go:build interop

package main

import "github.com/twmb/franz-go/pkg/kmsg"

// The versions the script speaks: both brokers serve them, and each is a
// version today's Java client sends.
const (
	vProduce       = 9
	vFetch         = 12 // the last that names topics (v13+ carry ids)
	vListOffsets   = 7  // max timestamp (KIP-734)
	vMetadata      = 12
	vOffsetCommit  = 8
	vOffsetFetch   = 8
	vFindCoord     = 4
	vJoinGroup     = 9
	vHeartbeat     = 4
	vLeaveGroup    = 5
	vSyncGroup     = 5
	vCreateTopics  = 7
	vDeleteRecords = 2
	vInitProducer  = 4
	vOFLE          = 4
	vDescribeCfgs  = 4
)

// metadataReq asks for topics at version v.
func metadataReq(v int16, autoCreate bool, topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(v)
	req.AllowAutoTopicCreation = autoCreate
	for _, name := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// createTopicReq creates one topic with configs (name=value pairs).
func createTopicReq(name string, partitions int32, replication int16, configs ...string) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(vCreateTopics)
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, replication
	for i := 0; i+1 < len(configs); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = configs[i], kmsg.StringPtr(configs[i+1])
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// produceReq sends one batch to topic/partition with acks.
func produceReq(topic string, partition int32, acks int16, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(vProduce)
	req.Acks, req.TimeoutMillis = acks, 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// fetchReq reads topic/partition from offset, with maxBytes for the
// partition and the response; it waits at most 100 ms for data.
func fetchReq(topic string, partition int32, offset int64, maxBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(vFetch)
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 100, 1, maxBytes
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = partition, offset, maxBytes
	rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = -1, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// listOffsetsReq asks for the offset at timestamp (or -1 latest, -2
// earliest, -3 max timestamp) of topic/partition.
func listOffsetsReq(topic string, partition int32, timestamp int64) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(vListOffsets)
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = partition, timestamp, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// initProducerReq asks for an idempotent producer id.
func initProducerReq() *kmsg.InitProducerIDRequest {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.SetVersion(vInitProducer)
	req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = 60000, -1, -1
	return req
}

// initProducer remembers the producer id and epoch InitProducerID gave
// each side.
func (d *diffRun) initProducer(step string) {
	d.t.Helper()
	d.settle("producer ids", func(*diffSide) kmsg.Request { return initProducerReq() }, func(r kmsg.Response) bool {
		return r.(*kmsg.InitProducerIDResponse).ErrorCode == 0
	})
	resps := d.same(step, func() kmsg.Request { return initProducerReq() })
	for i, s := range d.sides {
		r := resps[i].(*kmsg.InitProducerIDResponse)
		if r.ErrorCode != 0 {
			d.t.Fatalf("%s: %s: error %d", step, s.name, r.ErrorCode)
		}
		s.producerID, s.producerEpoch = r.ProducerID, r.ProducerEpoch
	}
}

// deleteRecordsReq truncates topic/partition before offset.
func deleteRecordsReq(topic string, partition int32, offset int64) *kmsg.DeleteRecordsRequest {
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.SetVersion(vDeleteRecords)
	req.TimeoutMillis = 30000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = partition, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// offsetForEpochReq asks for the end offset of leader epoch epoch.
func offsetForEpochReq(topic string, partition, current, epoch int32) *kmsg.OffsetForLeaderEpochRequest {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.SetVersion(vOFLE)
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = partition, current, epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// describeConfigsReq describes one resource's configs (all when names is
// empty), with synonyms and documentation.
func describeConfigsReq(typ kmsg.ConfigResourceType, name string, names ...string) *kmsg.DescribeConfigsRequest {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.SetVersion(vDescribeCfgs)
	req.IncludeSynonyms, req.IncludeDocumentation = true, true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = typ, name, names
	req.Resources = append(req.Resources, rr)
	return req
}
