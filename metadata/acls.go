package metadata

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
)

// The ACLs' keys (values JSON):
//
//	acls/<resource type>/<pattern type>/<name segment>/<binding hash>   ACLRecord
//	acls-revision                                int64: a count of ACL writes; its version
//	                                             is the ACLs' revision
//
// The resource and pattern types are Kafka's codes in decimal. The name
// segment is the resource name path-escaped, cut to aclNameSegment bytes
// (a name may be 32 KiB; bbolt keys may not): it is there for a person
// listing keys, while the hash (SHA-256 of the record's JSON, 128 bits in
// hex) makes the key unique, so storing a binding twice is one key. Every
// ACL write is conditional on the revision key's version and bumps it, so
// ACL writers are serialized and a reader that sees the same revision
// before and after its range read saw one consistent set.
const (
	aclPrefix      = "acls/"
	aclRevisionKey = "acls-revision"
	aclNameSegment = 200
)

// ACLRecord is one stored ACL binding, Kafka's AccessControlEntryRecord
// without its id: codes as Kafka's wire protocol numbers them. The acl
// package gives it meaning; this one only stores it.
type ACLRecord struct {
	ResourceType int8   `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  int8   `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    int8   `json:"operation"`
	Permission   int8   `json:"permission"`
}

// ACLSnapshot is every stored ACL as of one revision (0: no ACL was ever
// written).
type ACLSnapshot struct {
	Revision int64
	ACLs     []ACLRecord
}

func aclKey(r ACLRecord) string {
	b, _ := json.Marshal(r) // a plain struct: cannot fail
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%s%d/%d/%s/%s", aclPrefix, r.ResourceType, r.PatternType,
		aclNameSeg(r.ResourceName), hex.EncodeToString(sum[:16]))
}

// aclNameSeg is the escaped name cut at aclNameSegment bytes, never inside
// an escape.
func aclNameSeg(name string) string {
	s := url.PathEscape(name)
	if len(s) <= aclNameSegment {
		return s
	}
	n := aclNameSegment
	for i := n - 2; i < n; i++ {
		if s[i] == '%' {
			n = i
			break
		}
	}
	return s[:n]
}

// ACLRevision returns the ACLs' revision (0: never written), one read, for
// a broker to tell whether its loaded ACLs are current.
func (s *Store) ACLRevision(ctx context.Context) (int64, error) {
	it, _, err := s.kv.Get(ctx, aclRevisionKey)
	if err != nil {
		return 0, fmt.Errorf("metadata: read ACL revision: %w", err)
	}
	return it.Version, nil
}

// LoadACLs returns every stored ACL, consistent as of the revision it
// returns.
func (s *Store) LoadACLs(ctx context.Context) (ACLSnapshot, error) {
	snap, _, err := s.loadACLs(ctx)
	return snap, err
}

// loadACLs is LoadACLs with the records' keys.
func (s *Store) loadACLs(ctx context.Context) (ACLSnapshot, []string, error) {
	for range maxCASRetries {
		before, err := s.ACLRevision(ctx)
		if err != nil {
			return ACLSnapshot{}, nil, err
		}
		items, err := s.kv.Range(ctx, aclPrefix, PrefixEnd(aclPrefix), 0, false)
		if err != nil {
			return ACLSnapshot{}, nil, fmt.Errorf("metadata: load ACLs: %w", err)
		}
		after, err := s.ACLRevision(ctx)
		if err != nil {
			return ACLSnapshot{}, nil, err
		}
		if before != after {
			continue // an ACL write landed between the reads
		}
		snap := ACLSnapshot{Revision: after, ACLs: make([]ACLRecord, 0, len(items))}
		keys := make([]string, 0, len(items))
		for _, it := range items {
			var r ACLRecord
			if err := jsonDecode(it, &r); err != nil {
				return ACLSnapshot{}, nil, err
			}
			snap.ACLs = append(snap.ACLs, r)
			keys = append(keys, it.Key)
		}
		return snap, keys, nil
	}
	return ACLSnapshot{}, nil, fmt.Errorf("metadata: load ACLs: %w", ErrTooManyRetries)
}

// CreateACLs stores recs, each once however often it appears or was
// stored before, and returns the ones it added. The writes go in as few
// transactions as the KV's limits allow, in order, each conditional on
// the revision; after an error, stored says how many of recs (a prefix)
// are durably stored and added lists the ones of them that are new.
func (s *Store) CreateACLs(ctx context.Context, recs []ACLRecord) (stored int, added []ACLRecord, err error) {
	for range maxCASRetries {
		snap, keys, err := s.loadACLs(ctx)
		if err != nil {
			return stored, added, err
		}
		have := make(map[string]bool, len(keys))
		for _, k := range keys {
			have[k] = true
		}
		var ops []Op
		var opRecs []int // ops[i] stores recs[opRecs[i]]
		for i, r := range recs[stored:] {
			k := aclKey(r)
			if have[k] {
				continue
			}
			have[k] = true
			ops = append(ops, putJSON(k, r))
			opRecs = append(opRecs, stored+i)
		}
		if len(ops) == 0 {
			return len(recs), added, nil
		}
		done, rev, err := s.writeACLChunks(ctx, snap.Revision, ops)
		for _, i := range opRecs[:done] {
			added = append(added, recs[i])
		}
		if done == len(ops) {
			return len(recs), added, nil
		}
		if done > 0 {
			stored = opRecs[done] // recs before the first unwritten one are stored
		}
		if !IsConflict(err) || rev < 0 {
			return stored, added, fmt.Errorf("metadata: create ACLs: %w", err)
		}
	}
	return stored, added, fmt.Errorf("metadata: create ACLs: %w", ErrTooManyRetries)
}

// DeleteACLs removes every stored ACL for which match is true and returns
// them, in transactions within the KV's limits, each conditional on the
// revision (a concurrent write makes it read again and go on). After an
// error, deleted holds those already removed.
func (s *Store) DeleteACLs(ctx context.Context, match func(ACLRecord) bool) (deleted []ACLRecord, err error) {
	for range maxCASRetries {
		snap, keys, err := s.loadACLs(ctx)
		if err != nil {
			return deleted, err
		}
		var ops []Op
		var gone []ACLRecord
		for i, r := range snap.ACLs {
			if match(r) {
				ops = append(ops, Delete(keys[i]))
				gone = append(gone, r)
			}
		}
		if len(ops) == 0 {
			return deleted, nil
		}
		done, rev, err := s.writeACLChunks(ctx, snap.Revision, ops)
		deleted = append(deleted, gone[:done]...)
		if done == len(ops) {
			return deleted, nil
		}
		if !IsConflict(err) || rev < 0 {
			return deleted, fmt.Errorf("metadata: delete ACLs: %w", err)
		}
	}
	return deleted, fmt.Errorf("metadata: delete ACLs: %w", ErrTooManyRetries)
}

// writeACLChunks applies ops in transactions that fit the KV's limits,
// the first conditional on revision and each next on the revision the one
// before wrote, every one bumping the revision key. It returns how many
// ops applied; a conflict (another ACL writer) stops it with ErrConflict.
// An uncertain outcome is returned with rev -1: the caller must not retry
// blindly.
func (s *Store) writeACLChunks(ctx context.Context, revision int64, ops []Op) (done int, rev int64, err error) {
	limits := kvLimits(s.kv)
	if limits.MaxOps > 0 {
		limits.MaxOps-- // room for the revision key's write
	}
	var count int64
	if _, _, err := s.getJSON(ctx, aclRevisionKey, &count); err != nil {
		return 0, 0, fmt.Errorf("read ACL revision: %w", err)
	}
	for _, chunk := range limits.chunks(ops) {
		count++
		txOps := append(chunk[:len(chunk):len(chunk)], putJSON(aclRevisionKey, count))
		rev, err = s.kv.Txn(ctx, []Cond{{Key: aclRevisionKey, Version: revision}}, txOps)
		if err != nil {
			if IsUncertain(err) {
				return done, -1, err
			}
			return done, 0, err
		}
		revision = rev
		done += len(chunk)
	}
	return done, revision, nil
}
