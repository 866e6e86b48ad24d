package protocol

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/txncoord"
)

// The transaction coordinator (txncoord), and the transactional calls of
// the group coordinator and the log, fail with franz-go kerr errors, which
// carry their Kafka code; any other error is an internal failure, which
// the APIs answer with a retriable code.

// txnCode maps a transaction coordinator error to the code an API answers:
// a kerr error's own code, COORDINATOR_NOT_AVAILABLE (retriable) for any
// other error. Before fencedSince, the version of the API that added
// PRODUCER_FENCED, a fenced producer is told INVALID_PRODUCER_EPOCH, which
// older clients handle the same way (as Kafka's KafkaApis does).
func txnCode(err error, version, fencedSince int16) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.CoordinatorNotAvailable.Code
	}
	if ke.Code == kerr.ProducerFenced.Code && version < fencedSince {
		return kerr.InvalidProducerEpoch.Code
	}
	return ke.Code
}

// logTxnFailure logs an internal (non-kerr) failure of a transactional call,
// which the client only sees as a retriable code.
func (r *request) logTxnFailure(what string, err error) {
	var ke *kerr.Error
	if err != nil && !errors.As(err, &ke) {
		r.s.lg.Warn("transaction coordinator call failed", "api", what, "remote", r.c.remote, "err", err)
	}
}

// txnCallCode makes one call of the transaction coordinator for a request
// about txnID and returns the code the API answers: INVALID_REQUEST for
// an empty transactional id, COORDINATOR_NOT_AVAILABLE on a server
// without a coordinator, else the call's error mapped by txnCode.
func (r *request) txnCallCode(api, txnID string, version, fencedSince int16, call func(*txncoord.Coordinator) error) int16 {
	switch {
	case txnID == "":
		return r.code(kerr.InvalidRequest.Code)
	case r.s.cfg.Txns == nil:
		return r.code(errTxnsNotRunning.Code)
	}
	err := call(r.s.cfg.Txns)
	r.logTxnFailure(api, err)
	return r.code(txnCode(err, version, fencedSince))
}

// errTxnsNotRunning is the whole-request failure of a transactional API on
// a server without a transaction coordinator.
var errTxnsNotRunning = kerr.CoordinatorNotAvailable

// txnVerifier returns how a partition leader or group coordinator asks a
// transactional id's coordinator whether a partition is in the ongoing
// transaction (Config.TxnVerify, else the local coordinator), nil when
// nothing can answer.
func (s *Server) txnVerifier() func(ctx context.Context, txnID string, pid int64, epoch int16, tp txncoord.TopicPartition) error {
	switch {
	case s.cfg.TxnVerify != nil:
		return s.cfg.TxnVerify
	case s.cfg.Txns != nil:
		return s.cfg.Txns.Verify
	}
	return nil
}
