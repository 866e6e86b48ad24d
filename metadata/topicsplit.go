package metadata

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// A topic whose new partition states do not fit in one transaction (etcd:
// more than about 127 partitions at once) is created, or grown, in pieces
// that stay invisible until the last one:
//
//  1. a pending record, pending-topics/<topic-id-hex>, says which partition
//     states [From, To) are being written, and since when;
//  2. the states are written a chunk per transaction, each conditional on
//     the pending record and the topic record being unchanged;
//  3. one transaction writes the topic record (the commit point: the topic,
//     or its new partition count, becomes visible) and deletes the pending
//     record, under the same conditions.
//
// A create or grow that stops before 3 (a crash, an error) leaves the
// pending record and states no topic record counts. Abandoning it
// (abortPending) first rewrites the pending record, so that a writer still
// going fails its next step, then deletes the states and the record. The
// writer abandons its own at once when it fails; ReleasePendingTopics
// abandons those older than a grace period (a crashed writer's). A topic
// has at most one pending record, and a grow in one transaction requires
// that there is none, so the states an abandon deletes are never counted
// by the topic record.

// ErrTopicBusy is returned by UpdateTopic while another partition increase
// of the topic is under way, or an interrupted one is not cleaned up yet
// (the maintenance loop abandons it after its grace period).
var ErrTopicBusy = errors.New("metadata: a partition increase of the topic is under way or was interrupted")

// pendingTopic is the record of a create or grow written in pieces.
type pendingTopic struct {
	Name      string  `json:"name"`
	ID        TopicID `json:"id"`
	From      int32   `json:"from"`
	To        int32   `json:"to"`
	CreatedMs int64   `json:"created_ms"`
	// Token tells this writer's record from any other in a read-back.
	Token TopicID `json:"token"`
	// Aborting: the record was claimed for abandoning; its states are
	// being deleted.
	Aborting bool `json:"aborting,omitempty"`
}

func pendingTopicKey(id TopicID) string { return "pending-topics/" + id.String() }

// partStateOps writes the empty state of partitions [from, to).
func partStateOps(id TopicID, from, to int32) []Op {
	ops := make([]Op, 0, max(0, to-from))
	for p := from; p < to; p++ {
		ops = append(ops, putJSON(partKey(id, p), PartitionState{}))
	}
	return ops
}

// writeTopicSplit writes t's partitions [from, t.Partitions) and then t
// in pieces (steps 1 to 3 above), conditional on topicCond, and abandons
// what it wrote when it fails.
func (s *Store) writeTopicSplit(ctx context.Context, topicCond Cond, t Topic, from int32) error {
	rec := pendingTopic{Name: t.Name, ID: t.ID, From: from, To: t.Partitions,
		CreatedMs: time.Now().UnixMilli(), Token: NewTopicID()}
	pk := pendingTopicKey(t.ID)
	put := putJSON(pk, rec)
	v, err := s.kv.Txn(ctx, []Cond{topicCond, {Key: pk}}, []Op{put})
	if IsUncertain(err) {
		v, err = s.readBackPending(ctx, pk, put.Value, err)
	}
	if err != nil {
		return err
	}
	guard := []Cond{topicCond, {Key: pk, Version: v}}
	for _, chunk := range kvLimits(s.kv).chunks(partStateOps(t.ID, from, t.Partitions)) {
		if _, err = s.kv.Txn(ctx, guard, chunk); err != nil {
			break
		}
	}
	if err == nil {
		err = s.commitPendingTopic(ctx, guard, t)
	}
	if err != nil {
		// Safe whatever the failed step did: the abandon claims the
		// pending record at v, which a commit that applied deleted.
		if aerr := s.abortPending(ctx, rec, v); aerr != nil && !IsConflict(aerr) {
			err = errors.Join(err, fmt.Errorf("metadata: abandon pending topic %q (the maintenance loop retries): %w", t.Name, aerr))
		}
	}
	return err
}

// readBackPending settles a pending record's write of unknown outcome: it
// applied when the record holds this writer's value.
func (s *Store) readBackPending(ctx context.Context, pk string, value []byte, txnErr error) (int64, error) {
	it, ok, err := s.kv.Get(ctx, pk)
	if err != nil {
		return 0, errors.Join(txnErr, err)
	}
	if ok && bytes.Equal(it.Value, value) {
		return it.Version, nil
	}
	return 0, fmt.Errorf("metadata: pending record %s not written (read back): %v", pk, txnErr)
}

// commitPendingTopic is step 3. A result of unknown outcome is settled by
// reading back: the transaction deleted the pending record with the topic
// record's write.
func (s *Store) commitPendingTopic(ctx context.Context, guard []Cond, t Topic) error {
	pk := guard[1].Key
	_, err := s.kv.Txn(ctx, guard, []Op{putJSON(topicKey(t.Name), t), Delete(pk)})
	if !IsUncertain(err) {
		return err
	}
	it, ok, rerr := s.kv.Get(ctx, pk)
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	if ok && it.Version == guard[1].Version {
		return fmt.Errorf("metadata: topic %q not written (read back): %v", t.Name, err)
	}
	cur, ok, rerr := s.Topic(ctx, t.Name)
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	if ok && cur.ID == t.ID && cur.Partitions == t.Partitions {
		return nil
	}
	return fmt.Errorf("metadata: topic %q: its pending write was abandoned meanwhile: %w", t.Name, ErrConflict)
}

// abortPending abandons the pending record rec, read at version v: it
// claims it (ErrConflict when it is no longer at v: committed, or claimed
// by another), then deletes the partition states it names and itself.
func (s *Store) abortPending(ctx context.Context, rec pendingTopic, v int64) error {
	pk := pendingTopicKey(rec.ID)
	rec.Aborting = true
	v, err := s.kv.Txn(ctx, []Cond{{Key: pk, Version: v}}, []Op{putJSON(pk, rec)})
	if err != nil {
		return err
	}
	guard := []Cond{{Key: pk, Version: v}}
	dels := []Op{DeletePrefix(partPrefix(rec.ID))} // a create: no state of the id is live
	if rec.From > 0 {
		dels = make([]Op, 0, rec.To-rec.From)
		for p := rec.From; p < rec.To; p++ {
			dels = append(dels, Delete(partKey(rec.ID, p)))
		}
	}
	for _, chunk := range kvLimits(s.kv).chunks(dels) {
		if _, err := s.kv.Txn(ctx, guard, chunk); err != nil {
			return err
		}
	}
	_, err = s.kv.Txn(ctx, guard, []Op{Delete(pk)})
	return err
}

// pendingPage bounds the pending records one ReleasePendingTopics reads.
const pendingPage = 256

// ReleasePendingTopics abandons the creates and grows written in pieces
// that did not finish within grace (their writer crashed or gave up), and
// finishes abandons that were interrupted: their partition states and
// pending records are deleted. A writer still going after grace fails
// cleanly.
func (s *Store) ReleasePendingTopics(ctx context.Context, grace time.Duration) error {
	items, err := s.kv.Range(ctx, "pending-topics/", PrefixEnd("pending-topics/"), pendingPage, false)
	if err != nil {
		return fmt.Errorf("metadata: release pending topics: %w", err)
	}
	cutoff := time.Now().Add(-grace).UnixMilli()
	var errs []error
	for _, it := range items {
		var rec pendingTopic
		if err := jsonDecode(it, &rec); err != nil {
			errs = append(errs, err)
			continue
		}
		if !rec.Aborting && rec.CreatedMs > cutoff {
			continue
		}
		if err := s.abortPending(ctx, rec, it.Version); err != nil && !IsConflict(err) {
			errs = append(errs, fmt.Errorf("metadata: release pending topic %q: %w", rec.Name, err))
		}
	}
	return errors.Join(errs...)
}

// pendingConflict tells a lost compare-and-swap of a grow caused by a
// pending record (ErrTopicBusy) from one caused by the topic record.
func (s *Store) pendingConflict(ctx context.Context, id TopicID, err error) error {
	if _, ok, rerr := s.kv.Get(ctx, pendingTopicKey(id)); rerr == nil && ok {
		return ErrTopicBusy
	}
	return err
}
