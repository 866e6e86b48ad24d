package admin

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() {
	register("producers", &commandSpec{
		name:     "producers describe",
		synopsis: "producers describe --topic T [--partition P ...] [--output table|json|csv]",
		about: `Describes the producers a partition's leader keeps state for
(DescribeProducers): producer id and epoch, the coordinator epoch of its last
transaction marker or transactional produce, its last sequence and
timestamp, and the offset its open transaction started at ("-" when none is
open). A transaction that stays open long is a hanging one: "transactions
abort --start-offset" ends it. Without --partition every partition of the
topic is described.`,
		examples: "  broker producers describe --topic orders --partition 0\n  broker producers describe --topic orders --output json",
		read:     true,
		setup:    setupProducersDescribe,
	})
}

// describedProducer is one producer of one partition.
type describedProducer struct {
	Topic                 string `json:"topic"`
	Partition             int32  `json:"partition"`
	ProducerID            int64  `json:"producer_id"`
	ProducerEpoch         int16  `json:"producer_epoch"`
	CoordinatorEpoch      int32  `json:"coordinator_epoch"`
	LastSequence          int32  `json:"last_sequence"`
	LastTimestamp         int64  `json:"last_timestamp"`
	CurrentTxnStartOffset *int64 `json:"current_txn_start_offset"`
}

func setupProducersDescribe(fs *flagSet) action {
	topic := fs.String("topic", "", "`TOPIC` whose partitions to describe")
	var parts stringList
	fs.Var(&parts, "partition", "`PARTITION` to describe (repeatable; default: every partition)")
	return func(inv *invocation) error {
		if *topic == "" {
			return usagef("--topic is required")
		}
		value := *topic
		if len(parts) > 0 {
			value += ":" + parts.String()
		}
		scope, err := parseScope([]string{value})
		if err != nil {
			return usagef("--partition %q: want partition numbers", parts.String())
		}
		set, err := inv.resolve(scope)
		if err != nil {
			return err
		}
		adm, err := inv.admin()
		if err != nil {
			return err
		}
		described, err := adm.DescribeProducers(inv.ctx, set)
		if err != nil {
			return inv.failed("describe producers", err)
		}
		rows := &tabular{columns: []string{"topic", "partition", "producer_id", "producer_epoch", "coordinator_epoch", "last_sequence", "last_timestamp", "current_txn_start_offset"}}
		list := []describedProducer{}
		var failed []string
		for _, tp := range sortedPartitions(set) {
			p, ok := described[tp.topic].Partitions[tp.partition]
			switch {
			case !ok:
				failed = append(failed, fmt.Sprintf("%s/%d: no answer from the partition's leader", tp.topic, tp.partition))
				continue
			case p.Err != nil:
				failed = append(failed, fmt.Sprintf("%s/%d: %v", tp.topic, tp.partition, withMessage(p.Err, p.ErrMessage)))
				continue
			}
			for _, d := range p.ActiveProducers.Sorted() {
				dp := describedProducer{Topic: d.Topic, Partition: d.Partition, ProducerID: d.ProducerID, ProducerEpoch: d.ProducerEpoch,
					CoordinatorEpoch: d.CoordinatorEpoch, LastSequence: d.LastSequence, LastTimestamp: d.LastTimestamp}
				if d.CurrentTxnStartOffset >= 0 {
					start := d.CurrentTxnStartOffset
					dp.CurrentTxnStartOffset = &start
				}
				rows.add(dp.Topic, itoa(dp.Partition), itoa(dp.ProducerID), itoa(dp.ProducerEpoch), itoa(dp.CoordinatorEpoch),
					itoa(dp.LastSequence), itoa(dp.LastTimestamp), optInt(dp.CurrentTxnStartOffset))
				list = append(list, dp)
			}
		}
		if len(list) > 0 || len(failed) == 0 {
			if err := inv.emit(view{rows: rows, json: list}); err != nil {
				return err
			}
		}
		return joinFailures("partitions", failed)
	}
}

// describeProducers describes the producers of one partition, failing
// with the partition's error.
func (inv *invocation) describeProducers(topic string, partition int32) (kadm.DescribedProducersPartition, error) {
	adm, err := inv.admin()
	if err != nil {
		return kadm.DescribedProducersPartition{}, err
	}
	set := kadm.TopicsSet{}
	set.Add(topic, partition)
	described, err := adm.DescribeProducers(inv.ctx, set)
	if err != nil {
		return kadm.DescribedProducersPartition{}, inv.failed("describe producers", err)
	}
	p, ok := described[topic].Partitions[partition]
	switch {
	case !ok:
		return p, fmt.Errorf("%s/%d: no answer from the partition's leader", topic, partition)
	case errors.Is(p.Err, kerr.UnknownTopicOrPartition):
		return p, fmt.Errorf("%s/%d: no such partition", topic, partition)
	case p.Err != nil:
		return p, fmt.Errorf("%s/%d: %w", topic, partition, withMessage(p.Err, p.ErrMessage))
	}
	return p, nil
}
