package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/storage/record"
)

// tablePeers is a Kafka client of this broker's own cluster, for the two
// things the table converter of a cluster member needs from other brokers:
// appending dead letters to a partition another broker owns, and asking
// the broker that converts a table for its status. It speaks the Kafka
// protocol like any client, so it needs nothing the brokers do not serve
// already, and it reaches an owner however ownership moves.
type tablePeers struct{ peerClient }

// newTablePeers returns the table converter's client of the brokers seeds
// lists.
func newTablePeers(seeds func() []string, id string) *tablePeers {
	// The producer is idempotent (franz-go's default): a retry of a batch
	// whose outcome is unknown, also to the partition's next owner after a
	// failover, carries the same producer id and sequence and is not
	// written twice. Acks are from the owner after its durable commit.
	return &tablePeers{peerClient{seeds: seeds, id: id, what: "tables", opts: []kgo.Opt{
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0), kgo.MetadataMinAge(250 * time.Millisecond),
		// A dead-letter topic the converter just created may be unknown
		// to a broker for a moment: wait for it (the append's context
		// bounds the wait) rather than fail and convert again.
		kgo.UnknownTopicRetries(-1)}}}
}

// deadLetter appends r to partition part of topic through its owner and
// returns once the owner acknowledged it (table.Options.DeadLetter).
func (p *tablePeers) deadLetter(ctx context.Context, topic string, part int32, r record.Record) error {
	cl, err := p.client()
	if err != nil {
		return err
	}
	kr := &kgo.Record{Topic: topic, Partition: part, Key: r.Key, Value: r.Value, Timestamp: time.UnixMilli(r.Timestamp)}
	for _, h := range r.Headers {
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	if err := cl.ProduceSync(ctx, kr).FirstErr(); err != nil {
		return fmt.Errorf("tables: dead letter to %s/%d through its owner: %w", topic, part, err)
	}
	return nil
}

// tableStatus asks broker node for topic's table status entries, as that
// broker sees them itself (the names asked for include
// localTableStatusName, so it never asks on).
func (p *tablePeers) tableStatus(ctx context.Context, node int32, topic string, names []string) ([][2]string, error) {
	cl, err := p.client()
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	res.ConfigNames = append(append([]string(nil), names...), localTableStatusName)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl.Broker(int(node)))
	if err != nil {
		return nil, fmt.Errorf("tables: status of %s from node %d: %w", topic, node, err)
	}
	if len(resp.Resources) != 1 {
		return nil, fmt.Errorf("tables: status of %s from node %d: %d resources in the answer", topic, node, len(resp.Resources))
	}
	rr := resp.Resources[0]
	if err := kerr.ErrorForCode(rr.ErrorCode); err != nil {
		return nil, fmt.Errorf("tables: status of %s from node %d: %w", topic, node, err)
	}
	var out [][2]string
	for _, c := range rr.Configs {
		if c.Value != nil {
			out = append(out, [2]string{c.Name, *c.Value})
		}
	}
	return out, nil
}

// brokerAddrs returns the Kafka addresses of the cluster's live brokers.
func (l *lateNode) brokerAddrs() []string {
	n := l.n.Load()
	if n == nil {
		return nil
	}
	var out []string
	for _, b := range n.Brokers() {
		out = append(out, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
	}
	return out
}
