package metadata

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The bbolt layout: bucket "kv" maps key -> [8-byte big-endian version][value];
// bucket "meta" holds the current revision under "rev".
var (
	boltKV   = []byte("kv")
	boltMeta = []byte("meta")
	boltRev  = []byte("rev")
)

// Bolt is the single-node KV backend on a bbolt file.
type Bolt struct {
	db      *bolt.DB
	failure *boltFailure
}

// OpenBolt opens (or creates) the bbolt file at path.
func OpenBolt(path string) (*Bolt, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("metadata: open bbolt %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(boltKV); err != nil {
			return err
		}
		_, err := tx.CreateBucketIfNotExists(boltMeta)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("metadata: init bbolt %s: %w", path, err)
	}
	return &Bolt{db: db, failure: newBoltFailure()}, nil
}

// Get implements KV.
func (b *Bolt) Get(_ context.Context, key string) (Item, bool, error) {
	var it Item
	var ok bool
	err := b.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(boltKV).Get([]byte(key))
		if v == nil {
			return nil
		}
		it, ok = decodeBoltItem([]byte(key), v), true
		return nil
	})
	if err != nil {
		return Item{}, false, fmt.Errorf("metadata: bbolt get %q: %w", key, err)
	}
	return it, ok, nil
}

// Range implements KV.
func (b *Bolt) Range(_ context.Context, start, end string, limit int, reverse bool) ([]Item, error) {
	var out []Item
	err := b.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(boltKV).Cursor()
		s, e := []byte(start), []byte(end)
		inRange := func(k []byte) bool {
			return k != nil && bytes.Compare(k, s) >= 0 && bytes.Compare(k, e) < 0
		}
		var k, v []byte
		if reverse {
			k, v = c.Seek(e)
			if k == nil || bytes.Compare(k, e) >= 0 {
				k, v = c.Prev()
			}
		} else {
			k, v = c.Seek(s)
		}
		for ; inRange(k); k, v = step(c, reverse) {
			out = append(out, decodeBoltItem(k, v))
			if limit > 0 && len(out) >= limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("metadata: bbolt range [%q,%q): %w", start, end, err)
	}
	return out, nil
}

func step(c *bolt.Cursor, reverse bool) ([]byte, []byte) {
	if reverse {
		return c.Prev()
	}
	return c.Next()
}

// Txn implements KV.
func (b *Bolt) Txn(_ context.Context, conds []Cond, ops []Op) (int64, error) {
	if err := b.Failure(); err != nil {
		return 0, err
	}
	if err := refuseLeases(ops); err != nil {
		return 0, err
	}
	var rev int64
	applied := false // the ops are in the transaction: an error now is the commit's
	err := b.db.Update(func(tx *bolt.Tx) error {
		kv := tx.Bucket(boltKV)
		for _, c := range conds {
			if boltVersion(kv.Get([]byte(c.Key))) != c.Version {
				return ErrConflict
			}
		}
		meta := tx.Bucket(boltMeta)
		rev = int64(boltVersion(meta.Get(boltRev))) + 1
		if err := meta.Put(boltRev, binary.BigEndian.AppendUint64(nil, uint64(rev))); err != nil {
			return err
		}
		for _, op := range ops {
			if err := applyBoltOp(kv, op, rev); err != nil {
				return err
			}
		}
		applied = true
		return nil
	})
	if err == ErrConflict {
		return 0, ErrConflict
	}
	if err != nil && applied {
		return 0, b.fail(err)
	}
	if err != nil {
		return 0, fmt.Errorf("metadata: bbolt txn: %w", err)
	}
	return rev, nil
}

// ErrNoLeases is returned by the bbolt backend for a write tied to a lease:
// leases, and with them cluster mode, need --metadata etcd.
var ErrNoLeases = errors.New("metadata: bbolt has no leases: cluster mode needs --metadata etcd://")

func refuseLeases(ops []Op) error {
	for _, op := range ops {
		if op.Lease != 0 {
			return fmt.Errorf("%w (write of %q on lease %x)", ErrNoLeases, op.Key, op.Lease)
		}
	}
	return nil
}

func applyBoltOp(kv *bolt.Bucket, op Op, rev int64) error {
	switch {
	case op.DeletePrefix:
		p := []byte(op.Key)
		c := kv.Cursor()
		for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Seek(p) {
			if err := kv.Delete(k); err != nil {
				return err
			}
		}
		return nil
	case op.Delete:
		return kv.Delete([]byte(op.Key))
	default:
		v := make([]byte, 8, 8+len(op.Value))
		binary.BigEndian.PutUint64(v, uint64(rev))
		return kv.Put([]byte(op.Key), append(v, op.Value...))
	}
}

// boltVersion reads the version prefix of a stored value; 0 when absent.
func boltVersion(v []byte) int64 {
	if len(v) < 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

func decodeBoltItem(k, v []byte) Item {
	return Item{
		Key:     string(k),
		Value:   append([]byte(nil), v[8:]...),
		Version: boltVersion(v),
	}
}

// Close implements KV.
func (b *Bolt) Close() error {
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("metadata: close bbolt: %w", err)
	}
	return nil
}
