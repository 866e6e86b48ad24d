package metadata

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// The transaction coordinator's keys (values JSON):
//
//	txncoord/owner                          the one-node transaction coordinator's fence (node id,
//	                                        claim time); its writes are conditional on its version
//	txncoord/epochs/<shard %03d>            int32: the shard's coordinator epoch, raised by every
//	                                        acquisition of the shard
//	txns/<shard %03d>/<txn-id, path-escaped>   TxnRecord
//
// A transactional id's shard is GroupShard(id), and in a cluster its writes
// carry the same fence (own/shards/<shard>) as the shard's groups.
const (
	txnOwnerKey       = "txncoord/owner"
	txnEpochPrefix    = "txncoord/epochs/"
	txnShardKeyPrefix = "txns/"
)

// TxnRecord is a transactional id's durable state: Kafka's
// TransactionMetadata as the transaction log stores it, with the previous
// producer id and epoch that a KIP-360 retry of InitProducerId is matched
// against.
type TxnRecord struct {
	ProducerID    int64 `json:"producer_id"`
	ProducerEpoch int16 `json:"producer_epoch"`
	// LastProducerID and LastProducerEpoch are the ones before the last
	// transition (-1: none).
	LastProducerID    int64  `json:"last_producer_id"`
	LastProducerEpoch int16  `json:"last_producer_epoch"`
	TimeoutMs         int32  `json:"timeout_ms"`
	State             string `json:"state"` // Kafka's state name: "Ongoing", "PrepareCommit", ...
	// Partitions and Groups are the open transaction's (kept through
	// Prepare*, cleared by Complete*).
	Partitions []TxnPartition `json:"partitions,omitempty"`
	Groups     []string       `json:"groups,omitempty"`
	StartMs    int64          `json:"start_ms"` // the transaction's first AddPartitions/AddOffsets; -1: none yet
	UpdateMs   int64          `json:"update_ms"`
}

// TxnPartition is one partition of a transaction.
type TxnPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// StoredTxn is a transactional id's record as loaded, with its KV version.
type StoredTxn struct {
	ID      string
	Record  TxnRecord
	Version int64
}

func txnShardPrefix(shard int32) string { return txnShardKeyPrefix + shardSegment(shard) + "/" }

func txnKey(id string) string { return txnShardPrefix(GroupShard(id)) + escapeGroup(id) }

func txnEpochKey(shard int32) string { return txnEpochPrefix + shardSegment(shard) }

// parseTxnKey returns the transactional id of txns/<shard>/<id>.
func parseTxnKey(key string) (string, error) {
	parts := strings.Split(key, "/")
	if len(parts) != 3 || parts[0] != "txns" {
		return "", fmt.Errorf("metadata: malformed transaction key %q", key)
	}
	id, err := url.PathUnescape(parts[2])
	if err != nil {
		return "", fmt.Errorf("metadata: transaction key %q: %w", key, err)
	}
	return id, nil
}

// ClaimTxns makes the caller the one-node owner of every transactional id
// and returns the fence its writes must present. A coordinator that claims
// after it fences the earlier one out.
func (s *Store) ClaimTxns(ctx context.Context, nodeID int32) (Cond, error) {
	owner := map[string]int64{"node_id": int64(nodeID), "claimed_ms": time.Now().UnixMilli()}
	for range maxCASRetries {
		it, _, err := s.kv.Get(ctx, txnOwnerKey)
		if err != nil {
			return Cond{}, fmt.Errorf("metadata: claim transactions: %w", err)
		}
		rev, err := s.kv.Txn(ctx, []Cond{{Key: txnOwnerKey, Version: it.Version}}, []Op{putJSON(txnOwnerKey, owner)})
		if err == nil {
			return Cond{Key: txnOwnerKey, Version: rev}, nil
		}
		if !IsConflict(err) {
			return Cond{}, fmt.Errorf("metadata: claim transactions: %w", err)
		}
	}
	return Cond{}, fmt.Errorf("metadata: claim transactions: %w", ErrTooManyRetries)
}

// RaiseTxnCoordinatorEpochs adds one to the coordinator epoch of each of
// shards (absent: 0, so the first acquisition gives 1), in one
// transaction conditional on fence, and returns the new epochs in the
// order of shards. A conflict on fence is ErrConflict; one on an epoch key
// (a concurrent raise, which only a second owner could make) is retried.
func (s *Store) RaiseTxnCoordinatorEpochs(ctx context.Context, fence Cond, shards []int32) ([]int32, error) {
	for range maxCASRetries {
		conds := []Cond{fence}
		ops := make([]Op, 0, len(shards))
		epochs := make([]int32, len(shards))
		for i, sh := range shards {
			if sh < 0 || sh >= GroupShards {
				return nil, fmt.Errorf("metadata: transaction shard %d outside [0, %d)", sh, GroupShards)
			}
			var e int32
			v, _, err := s.getJSON(ctx, txnEpochKey(sh), &e)
			if err != nil {
				return nil, fmt.Errorf("metadata: read coordinator epoch of shard %d: %w", sh, err)
			}
			epochs[i] = e + 1
			conds = append(conds, Cond{Key: txnEpochKey(sh), Version: v})
			ops = append(ops, putJSON(txnEpochKey(sh), epochs[i]))
		}
		_, err := s.kv.Txn(ctx, conds, ops)
		if err == nil {
			return epochs, nil
		}
		if !IsConflict(err) {
			return nil, fmt.Errorf("metadata: raise coordinator epochs: %w", err)
		}
		if ok, ferr := s.fenceHolds(ctx, fence); ferr != nil || !ok {
			return nil, fmt.Errorf("metadata: raise coordinator epochs: fence %s lost: %w", fence.Key, err)
		}
	}
	return nil, fmt.Errorf("metadata: raise coordinator epochs: %w", ErrTooManyRetries)
}

// LoadTxns returns every stored transactional id of every shard.
func (s *Store) LoadTxns(ctx context.Context) ([]StoredTxn, error) {
	return s.loadTxnsUnder(ctx, txnShardKeyPrefix)
}

// LoadShardTxns returns the stored transactional ids of one shard (one
// range read), sorted by escaped id.
func (s *Store) LoadShardTxns(ctx context.Context, shard int32) ([]StoredTxn, error) {
	if shard < 0 || shard >= GroupShards {
		return nil, fmt.Errorf("metadata: transaction shard %d outside [0, %d)", shard, GroupShards)
	}
	return s.loadTxnsUnder(ctx, txnShardPrefix(shard))
}

func (s *Store) loadTxnsUnder(ctx context.Context, prefix string) ([]StoredTxn, error) {
	items, err := s.kv.Range(ctx, prefix, PrefixEnd(prefix), 0, false)
	if err != nil {
		return nil, fmt.Errorf("metadata: load transactions under %s: %w", prefix, err)
	}
	out := make([]StoredTxn, 0, len(items))
	for _, it := range items {
		id, err := parseTxnKey(it.Key)
		if err != nil {
			return nil, err
		}
		st := StoredTxn{ID: id, Version: it.Version}
		if err := jsonDecode(it, &st.Record); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// WriteTxn stores rec (nil: deletes the record) as transactional id's
// record if fence holds and the record is still at version (0: absent),
// and returns its new version (0 after a delete). A failed condition is
// ErrConflict; TxnFenceHolds tells a lost fence from a lost version. A
// write of unknown outcome is settled by reading the record back: the
// bytes written found there mean it applied.
func (s *Store) WriteTxn(ctx context.Context, fence Cond, id string, version int64, rec *TxnRecord) (int64, error) {
	key := txnKey(id)
	op := Delete(key)
	if rec != nil {
		op = putJSON(key, rec)
	}
	rev, err := s.kv.Txn(ctx, []Cond{fence, {Key: key, Version: version}}, []Op{op})
	if err == nil {
		if rec == nil {
			return 0, nil
		}
		return rev, nil
	}
	if IsUncertain(err) {
		if v, ok := s.settleTxnWrite(ctx, key, version, op); ok {
			return v, nil
		}
	}
	return 0, fmt.Errorf("metadata: write transaction %q: %w", id, err)
}

// settleTxnWrite reads back a record whose write's outcome is unknown: ok
// when the write applied, with the record's version then.
func (s *Store) settleTxnWrite(ctx context.Context, key string, version int64, op Op) (int64, bool) {
	it, found, err := s.kv.Get(ctx, key)
	if err != nil {
		return 0, false
	}
	if op.Delete {
		return 0, !found && version != 0
	}
	if found && it.Version != version && bytes.Equal(it.Value, op.Value) {
		return it.Version, true
	}
	return 0, false
}

// TxnFenceHolds reports whether fence's key is still at its version.
func (s *Store) TxnFenceHolds(ctx context.Context, fence Cond) (bool, error) {
	return s.fenceHolds(ctx, fence)
}
