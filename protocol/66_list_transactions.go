package protocol

// ListTransactions v0–v1 (KIP-664): the transactional ids this broker
// coordinates (an admin client asks every broker), filtered by state (a
// state name Kafka does not know is returned in UnknownStateFilters and
// matches nothing), by producer id, and from v1 by duration: only
// transactions running longer than DurationFilterMillis (-1: any). Dead
// ids are never listed. COORDINATOR_NOT_AVAILABLE without a transaction
// coordinator. v2 (a transactional id pattern, KIP-1152) is not served.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/txncoord"
)

func init() { register(kmsg.ListTransactions, 0, 1, handleListTransactions) }

func handleListTransactions(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.ListTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	if r.s.cfg.Txns == nil {
		resp.ErrorCode = r.code(errTxnsNotRunning.Code)
		return resp, nil
	}
	f := txncoord.ListFilter{ProducerIDs: req.ProducerIDFilters, MinDurationMs: -1}
	if req.Version >= 1 {
		f.MinDurationMs = req.DurationFilterMillis
	}
	for _, name := range req.StateFilters {
		s, ok := txncoord.ParseState(name)
		if !ok {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, name)
			continue
		}
		f.States = append(f.States, s)
	}
	if len(req.StateFilters) > 0 && len(f.States) == 0 {
		return resp, nil // only unknown states: nothing matches
	}
	for _, l := range r.s.cfg.Txns.List(f) {
		if l.State == txncoord.Dead {
			continue
		}
		ts := kmsg.NewListTransactionsResponseTransactionState()
		ts.TransactionalID, ts.ProducerID, ts.TransactionState = l.TransactionalID, l.ProducerID, l.State.String()
		resp.TransactionStates = append(resp.TransactionStates, ts)
	}
	return resp, nil
}
