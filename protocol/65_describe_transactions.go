package protocol

// DescribeTransactions v0 (KIP-664): the state of transactional ids this
// broker coordinates: state, producer id and epoch, timeout, the start
// time of the ongoing transaction (-1: none) and its partitions.
// TRANSACTIONAL_ID_NOT_FOUND for an id the coordinator does not know,
// NOT_COORDINATOR for one another broker coordinates, and
// COORDINATOR_NOT_AVAILABLE without a transaction coordinator.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/txncoord"
)

func init() { register(kmsg.DescribeTransactions, 0, 0, handleDescribeTransactions) }

func handleDescribeTransactions(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	if r.s.cfg.Txns == nil {
		for _, id := range req.TransactionalIDs {
			ts := kmsg.NewDescribeTransactionsResponseTransactionState()
			ts.TransactionalID, ts.ErrorCode = id, r.code(errTxnsNotRunning.Code)
			resp.TransactionStates = append(resp.TransactionStates, ts)
		}
		return resp, nil
	}
	for _, d := range r.s.cfg.Txns.Describe(req.TransactionalIDs) {
		resp.TransactionStates = append(resp.TransactionStates, r.describedTxn(d))
	}
	return resp, nil
}

// describedTxn lays out one transactional id's description.
func (r *request) describedTxn(d txncoord.Description) kmsg.DescribeTransactionsResponseTransactionState {
	ts := kmsg.NewDescribeTransactionsResponseTransactionState()
	ts.TransactionalID = d.TransactionalID
	if d.Err != nil {
		ts.ErrorCode = r.code(txnCode(d.Err, 0, 0))
		return ts
	}
	ts.State, ts.TimeoutMillis, ts.StartTimestamp = d.State.String(), d.TimeoutMs, d.StartTimeMs
	ts.ProducerID, ts.ProducerEpoch = d.ProducerID, d.ProducerEpoch
	for _, tp := range d.Partitions {
		i := slices.IndexFunc(ts.Topics, func(t kmsg.DescribeTransactionsResponseTransactionStateTopic) bool { return t.Topic == tp.Topic })
		if i < 0 {
			t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
			t.Topic = tp.Topic
			ts.Topics, i = append(ts.Topics, t), len(ts.Topics)
		}
		ts.Topics[i].Partitions = append(ts.Topics[i].Partitions, tp.Partition)
	}
	return ts
}
