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
// shards (the first acquisition gives 0, Kafka's first epoch), in one
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
			// The first acquisition is epoch 0, as Kafka's first leader of a
			// __transaction_state partition is; every later one is higher.
			if v != 0 {
				epochs[i] = e + 1
			}
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

// TxnWrite is one record change of WriteTxns: Record stored as ID's
// record (nil: the record deleted) if it is still at Version (0: absent).
type TxnWrite struct {
	ID      string
	Version int64
	Record  *TxnRecord
}

// WriteTxn is WriteTxns of one change; it returns the record's new
// version (0 after a delete).
func (s *Store) WriteTxn(ctx context.Context, fence Cond, id string, version int64, rec *TxnRecord) (int64, error) {
	v, err := s.WriteTxns(ctx, []Cond{fence}, []TxnWrite{{ID: id, Version: version, Record: rec}})
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// WriteTxns applies writes (at most one per id) in one transaction if
// every fence holds (the shards' own keys, or the one-node claim) and
// every record is still at its Version, and returns each record's new
// version (0 after a delete). A failed condition is ErrConflict, and
// nothing is written; TxnFenceHolds tells a lost fence from a lost
// version. A transaction of unknown outcome is settled by reading the
// records back: the bytes written found in every one mean it applied.
func (s *Store) WriteTxns(ctx context.Context, fences []Cond, writes []TxnWrite) ([]int64, error) {
	conds := append([]Cond(nil), fences...)
	ops := make([]Op, len(writes))
	for i, w := range writes {
		key := txnKey(w.ID)
		conds = append(conds, Cond{Key: key, Version: w.Version})
		ops[i] = Delete(key)
		if w.Record != nil {
			ops[i] = putJSON(key, w.Record)
		}
	}
	rev, err := s.kv.Txn(ctx, conds, ops)
	if err != nil && IsUncertain(err) {
		rev, err = s.settleTxnWrites(ctx, writes, ops, err)
	}
	if err != nil {
		return nil, fmt.Errorf("metadata: write %d transaction records: %w", len(writes), err)
	}
	out := make([]int64, len(writes))
	for i, w := range writes {
		if w.Record != nil {
			out[i] = rev
		}
	}
	return out, nil
}

// settleTxnWrites reads back the records of a transaction whose outcome
// is unknown: it returns the revision it wrote when it applied, else err.
func (s *Store) settleTxnWrites(ctx context.Context, writes []TxnWrite, ops []Op, err error) (int64, error) {
	var rev int64
	for i, w := range writes {
		it, found, gerr := s.kv.Get(ctx, ops[i].Key)
		if gerr != nil {
			return 0, err
		}
		switch {
		case ops[i].Delete && !found && w.Version != 0:
		case !ops[i].Delete && found && it.Version != w.Version && bytes.Equal(it.Value, ops[i].Value):
			rev = it.Version
		default:
			return 0, err
		}
	}
	if rev == 0 {
		// Only deletes: their revision is not needed.
		rev = 1
	}
	return rev, nil
}

// ReadTxn returns one transactional id's stored record; ok is false when
// it has none.
func (s *Store) ReadTxn(ctx context.Context, id string) (StoredTxn, bool, error) {
	st := StoredTxn{ID: id}
	v, ok, err := s.getJSON(ctx, txnKey(id), &st.Record)
	if err != nil {
		return StoredTxn{}, false, fmt.Errorf("metadata: read transaction %q: %w", id, err)
	}
	st.Version = v
	return st, ok, nil
}

// TxnFenceHolds reports whether fence's key is still at its version.
func (s *Store) TxnFenceHolds(ctx context.Context, fence Cond) (bool, error) {
	return s.fenceHolds(ctx, fence)
}
