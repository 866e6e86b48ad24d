package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/txncoord"
)

// txnPeers is the transaction coordinator's Kafka client of the other
// brokers of its cluster: WriteTxnMarkers to a partition's owner or a
// group shard's, and a partition leader's AddPartitionsToTxn VerifyOnly to
// a transaction's coordinator. It speaks the protocol the brokers serve to
// clients, addressed to one broker by node id.
type txnPeers struct{ peerClient }

// newTxnPeers returns the transaction coordinator's client of the brokers
// seeds lists.
func newTxnPeers(seeds func() []string, id string) *txnPeers {
	return &txnPeers{peerClient{seeds: seeds, id: id, what: "transactions",
		opts: []kgo.Opt{kgo.MetadataMinAge(250 * time.Millisecond)}}}
}

// request sends req to broker node and returns its answer.
func (p *txnPeers) request(ctx context.Context, node int32, req kmsg.Request) (kmsg.Response, error) {
	cl, err := p.client()
	if err != nil {
		return nil, err
	}
	return cl.Broker(int(node)).Request(ctx, req)
}

// txnVerify answers a partition leader's check that a transactional
// produce belongs to an ongoing transaction (protocol.Config.TxnVerify,
// KIP-890 part 1): the coordinator here when it owns the id's shard, else
// the owner, asked with AddPartitionsToTxn v4 VerifyOnly.
func (b *broker) txnVerify(ctx context.Context, txnID string, pid int64, epoch int16, tp txncoord.TopicPartition) error {
	if b.etcd == nil {
		return b.txns.Verify(ctx, txnID, pid, epoch, tp)
	}
	n := b.late.n.Load()
	if n == nil {
		return kerr.CoordinatorNotAvailable
	}
	owner, ok := n.ShardLeader(txncoord.ShardOf(txnID))
	if !ok {
		return kerr.CoordinatorNotAvailable
	}
	if owner == b.markers.self {
		return b.txns.Verify(ctx, txnID, pid, epoch, tp)
	}
	return verifyRemote(ctx, b.markers.peers, owner, txnID, pid, epoch, tp)
}

// verifyRemote asks coordinator node to verify tp in txnID's transaction.
func verifyRemote(ctx context.Context, peers *txnPeers, node int32, txnID string, pid int64, epoch int16, tp txncoord.TopicPartition) error {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = txnID, pid, epoch, true
	rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	rt.Topic, rt.Partitions = tp.Topic, []int32{tp.Partition}
	tx.Topics = append(tx.Topics, rt)
	req.Transactions = append(req.Transactions, tx)
	r, err := peers.request(ctx, node, req)
	if err != nil {
		// The coordinator could not be asked: a retriable answer, so that
		// the producer tries again once it is reachable or has moved.
		return fmt.Errorf("transactions: verify %s with node %d: %w: %w", txnID, node, kerr.CoordinatorNotAvailable, err)
	}
	resp := r.(*kmsg.AddPartitionsToTxnResponse)
	if resp.Version < 4 {
		return fmt.Errorf("transactions: verify %s with node %d: it answered AddPartitionsToTxn v%d, want v4+: %w",
			txnID, node, resp.Version, kerr.CoordinatorNotAvailable)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("transactions: verify %s with node %d: %w", txnID, node, err)
	}
	for _, t := range resp.Transactions {
		for _, rt := range t.Topics {
			for _, rp := range rt.Partitions {
				if t.TransactionalID == txnID && rt.Topic == tp.Topic && rp.Partition == tp.Partition {
					return kerr.ErrorForCode(rp.ErrorCode)
				}
			}
		}
	}
	return fmt.Errorf("transactions: verify %s with node %d: no answer for %s/%d: %w", txnID, node, tp.Topic, tp.Partition, kerr.CoordinatorNotAvailable)
}
