package txncoord

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestStateMachine walks one transactional id through Kafka's transitions
// and checks each answer's error code, on bbolt and on etcd.
func TestStateMachine(t *testing.T) { backends(t, stateMachine) }

func stateMachine(t *testing.T, e *env) {
	ctx := context.Background()
	c := e.open()
	const id = "tx"
	p := initID(t, c, id)
	if p.ProducerID != 1000 || p.ProducerEpoch != 0 {
		t.Fatalf("first init: %+v", p)
	}
	wrongPid := InitResult{ProducerID: p.ProducerID + 1, ProducerEpoch: p.ProducerEpoch}
	oldEpoch := InitResult{ProducerID: p.ProducerID, ProducerEpoch: p.ProducerEpoch - 1}
	steps := []struct {
		what string
		do   func() error
		want error
	}{
		{"commit with nothing open", func() error { return c.EndTxn(ctx, id, p.ProducerID, p.ProducerEpoch, true) }, kerr.InvalidTxnState},
		{"abort with nothing open", func() error { return c.EndTxn(ctx, id, p.ProducerID, p.ProducerEpoch, false) }, kerr.InvalidTxnState},
		{"add with a wrong producer id", func() error { return addParts(c, id, wrongPid, tp("t", 0)) }, kerr.InvalidProducerIDMapping},
		{"add with an old epoch", func() error { return addParts(c, id, oldEpoch, tp("t", 0)) }, kerr.ProducerFenced},
		{"add to an unknown id", func() error { return addParts(c, "nobody", p, tp("t", 0)) }, kerr.InvalidProducerIDMapping},
		{"add a partition that does not exist", func() error { return addParts(c, id, p, tp("t", 0), tp("t", 3)) }, kerr.UnknownTopicOrPartition},
		{"add partitions", func() error { return addParts(c, id, p, tp("t", 0), tp("u", 0)) }, nil},
		{"add them again", func() error { return addParts(c, id, p, tp("t", 0)) }, nil},
		{"add offsets", func() error { return c.AddOffsets(ctx, id, p.ProducerID, p.ProducerEpoch, "g") }, nil},
		{"verify a partition in the transaction", func() error { return c.Verify(ctx, id, p.ProducerID, p.ProducerEpoch, tp("u", 0)) }, nil},
		{"verify one not in it", func() error { return c.Verify(ctx, id, p.ProducerID, p.ProducerEpoch, tp("t", 1)) }, kerr.InvalidTxnState},
		{"verify with an old epoch", func() error { return c.Verify(ctx, id, p.ProducerID, oldEpoch.ProducerEpoch, tp("u", 0)) }, kerr.ProducerFenced},
		{"end with a wrong producer id", func() error { return c.EndTxn(ctx, id, wrongPid.ProducerID, p.ProducerEpoch, true) }, kerr.InvalidProducerIDMapping},
		{"end with an old epoch", func() error { return c.EndTxn(ctx, id, p.ProducerID, oldEpoch.ProducerEpoch, true) }, kerr.ProducerFenced},
		{"commit", func() error { return c.EndTxn(ctx, id, p.ProducerID, p.ProducerEpoch, true) }, nil},
	}
	for _, s := range steps {
		wantErr(t, s.what, s.do(), s.want)
	}
	waitState(t, c, id, CompleteCommit)
	m := e.markers.written()
	if len(m) != 1 || !m[0].Commit || m[0].ProducerID != p.ProducerID || m[0].ProducerEpoch != p.ProducerEpoch ||
		len(m[0].Partitions) != 2 || len(m[0].Groups) != 1 || m[0].Groups[0] != "g" || m[0].CoordinatorEpoch != 0 {
		t.Fatalf("markers: %+v", m)
	}
	wantErr(t, "commit again (a retry)", c.EndTxn(ctx, id, p.ProducerID, p.ProducerEpoch, true), nil)
	wantErr(t, "abort after commit", c.EndTxn(ctx, id, p.ProducerID, p.ProducerEpoch, false), kerr.InvalidTxnState)
	wantErr(t, "verify after commit", c.Verify(ctx, id, p.ProducerID, p.ProducerEpoch, tp("u", 0)), kerr.InvalidTxnState)
	if d := describe(c, id); d.Err != nil || len(d.Partitions) != 0 || d.StartTimeMs == -1 {
		t.Fatalf("describe after commit: %+v", d)
	}

	// The next transaction of the same session: aborted.
	wantErr(t, "add after commit", addParts(c, id, p, tp("t", 2)), nil)
	if d := describe(c, id); d.State != Ongoing || len(d.Partitions) != 1 || d.Partitions[0] != tp("t", 2) {
		t.Fatalf("describe of the second transaction: %+v", d)
	}
	wantErr(t, "abort", c.EndTxn(ctx, id, p.ProducerID, p.ProducerEpoch, false), nil)
	waitState(t, c, id, CompleteAbort)
	wantErr(t, "abort again", c.EndTxn(ctx, id, p.ProducerID, p.ProducerEpoch, false), nil)
	wantErr(t, "commit after abort", c.EndTxn(ctx, id, p.ProducerID, p.ProducerEpoch, true), kerr.InvalidTxnState)
	if m := e.markers.written(); len(m) != 2 || m[1].Commit || len(m[1].Partitions) != 1 || len(m[1].Groups) != 0 {
		t.Fatalf("markers: %+v", m)
	}

	// A new session bumps the epoch.
	p2 := initID(t, c, id)
	if p2.ProducerID != p.ProducerID || p2.ProducerEpoch != p.ProducerEpoch+1 {
		t.Fatalf("second init: %+v after %+v", p2, p)
	}
	wantErr(t, "add with the first session's epoch", addParts(c, id, p, tp("t", 0)), kerr.ProducerFenced)
}

// TestInitValidation: the timeout is within transaction.max.timeout.ms,
// and the id is not empty.
func TestInitValidation(t *testing.T) {
	e := newEnv(t)
	c := e.open()
	ctx := context.Background()
	for _, ms := range []int32{0, -1, 15*60*1000 + 1} {
		_, err := c.InitProducerID(ctx, InitRequest{TransactionalID: "tx", TimeoutMs: ms, ProducerID: -1, ProducerEpoch: -1})
		wantErr(t, "timeout", err, kerr.InvalidTransactionTimeout)
	}
	_, err := c.InitProducerID(ctx, InitRequest{TransactionalID: "", TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1})
	wantErr(t, "empty id", err, kerr.InvalidRequest)
	if d := describe(c, "tx"); d.Err == nil {
		t.Fatalf("a refused init stored the id: %+v", d)
	}
	wantErr(t, "describe unknown", describe(c, "tx").Err, kerr.TransactionalIDNotFound)
}

// TestAddPartitionsUnknownTopic: nothing is added when one partition does
// not exist; the others answer OPERATION_NOT_ATTEMPTED.
func TestAddPartitionsUnknownTopic(t *testing.T) {
	e := newEnv(t)
	c := e.open()
	p := initID(t, c, "tx")
	errs, err := c.AddPartitions(context.Background(), AddPartitionsRequest{TransactionalID: "tx", ProducerID: p.ProducerID,
		ProducerEpoch: p.ProducerEpoch, Partitions: []TopicPartition{tp("t", 0), tp("nope", 0)}})
	if err != nil || errs[tp("t", 0)] != kerr.OperationNotAttempted || errs[tp("nope", 0)] != kerr.UnknownTopicOrPartition {
		t.Fatalf("answer %v, %v", errs, err)
	}
	if d := describe(c, "tx"); d.State != Empty {
		t.Fatalf("state after a refused add: %v", d.State)
	}
}

// TestVerifyOnly: AddPartitions v4's VerifyOnly adds nothing and answers
// per partition.
func TestVerifyOnly(t *testing.T) {
	e := newEnv(t)
	c := e.open()
	p := initID(t, c, "tx")
	wantErr(t, "add", addParts(c, "tx", p, tp("t", 1)), nil)
	errs, err := c.AddPartitions(context.Background(), AddPartitionsRequest{TransactionalID: "tx", ProducerID: p.ProducerID,
		ProducerEpoch: p.ProducerEpoch, Partitions: []TopicPartition{tp("t", 1), tp("t", 2)}, VerifyOnly: true})
	if err != nil || errs[tp("t", 1)] != nil {
		t.Fatalf("verify: %v, %v", errs, err)
	}
	wantErr(t, "verify t/2", errs[tp("t", 2)], kerr.InvalidTxnState)
	if d := describe(c, "tx"); len(d.Partitions) != 1 {
		t.Fatalf("verify added: %+v", d)
	}
}
