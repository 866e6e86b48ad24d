package admin

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnStates are the states of a transactional id, spelled as Kafka's
// DescribeTransactions and ListTransactions spell them.
var txnStates = []string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "PrepareEpochFence", "Dead"}

func init() {
	register("transactions", &commandSpec{
		name:     "transactions list",
		synopsis: "transactions list [--state S ...] [--producer-id N ...] [--min-duration D] [--output table|json|csv]",
		about: `Lists the transactional ids of the cluster (ListTransactions to every
broker), sorted by id, with their coordinator, producer id and state.
--state (repeatable, any case) keeps the ids in one of the states given:
` + strings.Join(txnStates, ", ") + `. --producer-id (repeatable) keeps the ids
of those producers. --min-duration keeps the transactions open for at least
D (a Go duration: 90s, 15m): what kafka-transactions find-hanging looks for.`,
		examples: "  broker transactions list\n  broker transactions list --state Ongoing --min-duration 15m --output json",
		read:     true,
		setup:    setupTransactionsList,
	})
	register("transactions", &commandSpec{
		name:     "transactions describe",
		synopsis: "transactions describe ID... [--output table|json|csv]",
		about: `Describes transactional ids (DescribeTransactions to each id's
coordinator): coordinator, producer id and epoch, state, timeout, when the
current transaction started, how long it has been open (open transactions
only) and its partitions. The ids are operands, or --transactional-id
(repeatable).`,
		examples: "  broker transactions describe payments-etl-0\n  broker transactions describe payments-etl-0 payments-etl-1 --output json",
		read:     true,
		operands: "ID...",
		setup:    setupTransactionsDescribe,
	})
	register("transactions", &commandSpec{
		name:     "transactions abort",
		synopsis: "transactions abort --topic T --partition P (--start-offset O | --producer-id N --producer-epoch E --coordinator-epoch C)",
		about: `Aborts a hanging transaction in one partition (KIP-664): writes an abort
marker for the producer with WriteTxnMarkers to the partition's leader, so
that the partition's last stable offset moves on. Give the offset the
transaction started at (--start-offset, as "producers describe" or
"transactions list --min-duration" find it): the producer, its epoch and
coordinator epoch are then read with DescribeProducers. Or give the
producer id, epoch and coordinator epoch yourself. Abort only a transaction
whose coordinator no longer completes it: a transaction aborted in some of
its partitions but committed in others is no longer atomic.`,
		examples: "  broker transactions abort --topic orders --partition 0 --start-offset 1742\n" +
			"  broker transactions abort --topic orders --partition 0 --producer-id 4001 --producer-epoch 3 --coordinator-epoch 2",
		setup: setupTransactionsAbort,
	})
}

func setupTransactionsList(fs *flagSet) action {
	var states, pids stringList
	fs.Var(&states, "state", "keep only ids in `STATE` (repeatable)")
	fs.Var(&pids, "producer-id", "keep only ids of producer `ID` (repeatable)")
	minDuration := fs.Duration("min-duration", 0, "keep only transactions open for at least `DURATION`")
	return func(inv *invocation) error {
		filter, err := canonicalTxnStates(states)
		if err != nil {
			return err
		}
		producers, err := parseProducerIDs(pids)
		if err != nil {
			return err
		}
		if *minDuration < 0 {
			return usagef("--min-duration %s: must not be negative", *minDuration)
		}
		listed, err := inv.listTransactions(filter, producers, *minDuration)
		if err != nil {
			return err
		}
		rows := &tabular{columns: []string{"transactional_id", "coordinator", "producer_id", "state"}}
		type txnJSON struct {
			TransactionalID string `json:"transactional_id"`
			Coordinator     int32  `json:"coordinator"`
			ProducerID      int64  `json:"producer_id"`
			State           string `json:"state"`
		}
		list := []txnJSON{}
		for _, l := range listed {
			rows.add(l.TxnID, itoa(l.Coordinator), itoa(l.ProducerID), l.State)
			list = append(list, txnJSON{l.TxnID, l.Coordinator, l.ProducerID, l.State})
		}
		return inv.emit(view{rows: rows, json: list})
	}
}

// canonicalTxnStates checks --state values and spells them as Kafka does.
func canonicalTxnStates(states []string) ([]string, error) {
	var out []string
	for _, s := range states {
		i := indexFold(txnStates, s)
		if i < 0 {
			return nil, usagef("--state %q: want one of %s", s, strings.Join(txnStates, ", "))
		}
		out = append(out, txnStates[i])
	}
	return out, nil
}

func parseProducerIDs(values []string) ([]int64, error) {
	var out []int64
	for _, v := range values {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return nil, usagef("--producer-id %q: want a producer id (a number, 0 or more)", v)
		}
		out = append(out, n)
	}
	return out, nil
}

// listTransactions sends ListTransactions to every broker and merges the
// answers, sorted by id. The filters are applied here too: a broker
// before ListTransactions v1 (KIP-994) gets no duration filter, and one
// may ignore the others; the duration is then checked with
// DescribeTransactions.
func (inv *invocation) listTransactions(states []string, producers []int64, minDuration time.Duration) ([]kadm.ListedTransaction, error) {
	if _, err := inv.admin(); err != nil {
		return nil, err
	}
	req := kmsg.NewPtrListTransactionsRequest()
	req.StateFilters, req.ProducerIDFilters = states, producers
	if minDuration > 0 {
		req.DurationFilterMillis = minDuration.Milliseconds()
	}
	listed := map[string]kadm.ListedTransaction{}
	var failed []string
	for _, shard := range inv.cl.RequestSharded(inv.ctx, req) {
		if shard.Err != nil {
			failed = append(failed, fmt.Sprintf("broker %d: %v", shard.Meta.NodeID, shard.Err))
			continue
		}
		resp := shard.Resp.(*kmsg.ListTransactionsResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			failed = append(failed, fmt.Sprintf("broker %d: %v", shard.Meta.NodeID, err))
			continue
		}
		for _, s := range resp.TransactionStates {
			listed[s.TransactionalID] = kadm.ListedTransaction{Coordinator: shard.Meta.NodeID, TxnID: s.TransactionalID, ProducerID: s.ProducerID, State: s.TransactionState}
		}
	}
	if len(failed) > 0 {
		return nil, inv.failed("list transactions", joinFailures("brokers", failed))
	}
	for id, l := range listed {
		if len(states) > 0 && indexFold(states, l.State) < 0 || len(producers) > 0 && !containsInt(producers, l.ProducerID) {
			delete(listed, id)
		}
	}
	if minDuration > 0 && len(listed) > 0 {
		if err := inv.keepOpenFor(listed, minDuration); err != nil {
			return nil, err
		}
	}
	out := make([]kadm.ListedTransaction, 0, len(listed))
	for _, id := range sortedKeys(listed) {
		out = append(out, listed[id])
	}
	return out, nil
}

// keepOpenFor drops from listed the ids whose transaction is not open or
// has been open for less than d.
func (inv *invocation) keepOpenFor(listed map[string]kadm.ListedTransaction, d time.Duration) error {
	described, err := inv.adm.DescribeTransactions(inv.ctx, sortedKeys(listed)...)
	if err != nil {
		return inv.failed("describe transactions", err)
	}
	now := time.Now().UnixMilli()
	for id := range listed {
		t, ok := described[id]
		if !ok || t.Err != nil || !openState(t.State) || t.StartTimestamp < 0 || now-t.StartTimestamp < d.Milliseconds() {
			delete(listed, id)
		}
	}
	return nil
}

// openState says whether a transaction in state has begun and not ended.
func openState(state string) bool {
	return state == "Ongoing" || state == "PrepareCommit" || state == "PrepareAbort" || state == "PrepareEpochFence"
}

func containsInt(list []int64, n int64) bool {
	for _, v := range list {
		if v == n {
			return true
		}
	}
	return false
}

// describedTxn is one id of `transactions describe`.
type describedTxn struct {
	TransactionalID string            `json:"transactional_id"`
	Coordinator     int32             `json:"coordinator"`
	ProducerID      int64             `json:"producer_id"`
	ProducerEpoch   int16             `json:"producer_epoch"`
	State           string            `json:"state"`
	TimeoutMs       int32             `json:"timeout_ms"`
	StartTimeMs     *int64            `json:"start_time_ms"`
	DurationMs      *int64            `json:"duration_ms"`
	Partitions      []topicPartitions `json:"partitions"`
}

func setupTransactionsDescribe(fs *flagSet) action {
	var ids stringList
	fs.Var(&ids, "transactional-id", "transactional `ID` to describe (repeatable; or give ids as operands)")
	return func(inv *invocation) error {
		all := append(append([]string(nil), ids...), fs.operands...)
		if len(all) == 0 {
			return usagef("a transactional id is required (operands, or --transactional-id)")
		}
		adm, err := inv.admin()
		if err != nil {
			return err
		}
		described, err := adm.DescribeTransactions(inv.ctx, all...)
		if err != nil {
			return inv.failed("describe transactions", err)
		}
		now := time.Now().UnixMilli()
		rows := &tabular{columns: []string{"transactional_id", "coordinator", "producer_id", "producer_epoch", "state", "timeout_ms", "start_time_ms", "duration_ms", "partitions"}}
		list := []describedTxn{}
		var failed []string
		for _, id := range dedupe(all) {
			t, ok := described[id]
			switch {
			case !ok:
				failed = append(failed, fmt.Sprintf("transactional id %s: no answer from its coordinator", id))
				continue
			case errors.Is(t.Err, kerr.TransactionalIDNotFound):
				failed = append(failed, fmt.Sprintf("transactional id %s: no such transactional id", id))
				continue
			case t.Err != nil:
				failed = append(failed, fmt.Sprintf("transactional id %s: %v", id, t.Err))
				continue
			}
			d := describedTxn{TransactionalID: id, Coordinator: t.Coordinator, ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch,
				State: t.State, TimeoutMs: t.TimeoutMillis, Partitions: assignment(t.Topics)}
			if t.StartTimestamp >= 0 {
				start := t.StartTimestamp
				d.StartTimeMs = &start
				if openState(t.State) {
					open := max(now-start, 0)
					d.DurationMs = &open
				}
			}
			parts := make([]string, 0, len(d.Partitions))
			for _, a := range d.Partitions {
				parts = append(parts, a.Topic+":"+int32List(a.Partitions))
			}
			rows.add(id, itoa(d.Coordinator), itoa(d.ProducerID), itoa(d.ProducerEpoch), d.State, itoa(d.TimeoutMs),
				optInt(d.StartTimeMs), optInt(d.DurationMs), strings.Join(parts, " "))
			list = append(list, d)
		}
		if len(list) > 0 || len(failed) == 0 {
			if err := inv.emit(view{rows: rows, json: list}); err != nil {
				return err
			}
		}
		return joinFailures("transactional ids", failed)
	}
}

// dedupe returns ids in their first order, each once.
func dedupe(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// abortTarget is the transaction `transactions abort` ends.
type abortTarget struct {
	topic            string
	partition        int32
	producerID       int64
	producerEpoch    int16
	coordinatorEpoch int32
}

func setupTransactionsAbort(fs *flagSet) action {
	topic := fs.String("topic", "", "`TOPIC` of the partition")
	partition := fs.Int("partition", -1, "`PARTITION` number")
	startOffset := fs.Int64("start-offset", -1, "`OFFSET` the hanging transaction started at (finds its producer)")
	pid := fs.Int64("producer-id", -1, "producer `ID` of the transaction")
	epoch := fs.Int("producer-epoch", -1, "producer `EPOCH` of the transaction")
	coordEpoch := fs.Int("coordinator-epoch", -1, "coordinator `EPOCH` of the transaction's last marker or produce")
	return func(inv *invocation) error {
		if *topic == "" {
			return usagef("--topic is required")
		}
		if *partition < 0 || *partition > 1<<31-1 {
			return usagef("--partition is required (a partition number)")
		}
		byOffset := fs.isSet("start-offset")
		byProducer := fs.isSet("producer-id") || fs.isSet("producer-epoch") || fs.isSet("coordinator-epoch")
		switch {
		case byOffset && byProducer:
			return usagef("--start-offset excludes --producer-id, --producer-epoch and --coordinator-epoch")
		case byOffset && *startOffset < 0:
			return usagef("--start-offset %d: must not be negative", *startOffset)
		case !byOffset && !byProducer:
			return usagef("give --start-offset, or --producer-id, --producer-epoch and --coordinator-epoch")
		case byProducer && (*pid < 0 || *epoch < 0 || *epoch > 1<<15-1 || *coordEpoch < 0 || *coordEpoch > 1<<31-1):
			return usagef("--producer-id, --producer-epoch and --coordinator-epoch are all required (numbers, 0 or more)")
		}
		target := abortTarget{topic: *topic, partition: int32(*partition), producerID: *pid, producerEpoch: int16(*epoch), coordinatorEpoch: int32(*coordEpoch)}
		if byOffset {
			found, err := inv.findTransaction(*topic, int32(*partition), *startOffset)
			if err != nil {
				return err
			}
			target = found
		}
		return inv.abort(target)
	}
}

// findTransaction finds with DescribeProducers the producer whose open
// transaction in topic/partition started at offset.
func (inv *invocation) findTransaction(topic string, partition int32, offset int64) (abortTarget, error) {
	p, err := inv.describeProducers(topic, partition)
	if err != nil {
		return abortTarget{}, err
	}
	for _, d := range p.ActiveProducers.Sorted() {
		if d.CurrentTxnStartOffset == offset {
			// Kafka's tool uses 0 when the partition knows no coordinator
			// epoch for the producer (-1).
			return abortTarget{topic: topic, partition: partition, producerID: d.ProducerID,
				producerEpoch: d.ProducerEpoch, coordinatorEpoch: max(d.CoordinatorEpoch, 0)}, nil
		}
	}
	return abortTarget{}, fmt.Errorf("%s/%d: no open transaction starts at offset %d (see broker producers describe --topic %s --partition %d)",
		topic, partition, offset, topic, partition)
}

// abort writes the abort marker of target and prints the result.
func (inv *invocation) abort(target abortTarget) error {
	adm, err := inv.admin()
	if err != nil {
		return err
	}
	set := kadm.TopicsSet{}
	set.Add(target.topic, target.partition)
	resps, err := adm.WriteTxnMarkers(inv.ctx, kadm.TxnMarkers{ProducerID: target.producerID, ProducerEpoch: target.producerEpoch,
		CoordinatorEpoch: target.coordinatorEpoch, Topics: set})
	if err != nil {
		return inv.failed("write the abort marker", err)
	}
	result := "no answer from the partition's leader"
	for _, r := range resps.SortedPartitions() {
		if r.Topic == target.topic && r.Partition == target.partition {
			result = "aborted"
			if r.Err != nil {
				result = r.Err.Error()
			}
		}
	}
	t := &tabular{columns: []string{"topic", "partition", "producer_id", "producer_epoch", "coordinator_epoch", "result"}}
	t.add(target.topic, itoa(target.partition), itoa(target.producerID), itoa(target.producerEpoch), itoa(target.coordinatorEpoch), result)
	if err := t.writeTable(inv.stdout); err != nil {
		return err
	}
	if result != "aborted" {
		return fmt.Errorf("abort %s/%d producer %d: %s", target.topic, target.partition, target.producerID, result)
	}
	return nil
}
