package etcdkv

import (
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/metadata"
)

// write is one etcd write of a planned transaction: a put of key, or a
// delete of the keys in [key, end).
type write struct {
	put   bool
	key   string
	end   string // deletes only
	value []byte // puts only
	lease int64  // puts only; 0: none
}

// txnPlan is a KV transaction as etcd receives it: the compares and the
// writes, both as client ops and as the request whose size etcd limits.
type txnPlan struct {
	cmps []clientv3.Cmp
	ops  []clientv3.Op
	req  *pb.TxnRequest
}

// plan turns conds and ops into one etcd transaction under the prefix.
func (k *KV) plan(conds []metadata.Cond, ops []metadata.Op) txnPlan {
	p := txnPlan{req: &pb.TxnRequest{}}
	for _, c := range conds {
		key := k.prefix + c.Key
		// A missing key's ModRevision is 0, so Version 0 compares "absent".
		p.cmps = append(p.cmps, clientv3.Compare(clientv3.ModRevision(key), "=", c.Version))
		p.req.Compare = append(p.req.Compare, &pb.Compare{
			Key: []byte(key), Result: pb.Compare_EQUAL, Target: pb.Compare_MOD,
			TargetUnion: &pb.Compare_ModRevision{ModRevision: c.Version},
		})
	}
	for _, w := range k.disjoint(ops) {
		if w.put {
			var opts []clientv3.OpOption
			if w.lease != 0 {
				opts = append(opts, clientv3.WithLease(clientv3.LeaseID(w.lease)))
			}
			p.ops = append(p.ops, clientv3.OpPut(w.key, string(w.value), opts...))
			p.req.Success = append(p.req.Success, &pb.RequestOp{Request: &pb.RequestOp_RequestPut{
				RequestPut: &pb.PutRequest{Key: []byte(w.key), Value: w.value, Lease: w.lease}}})
			continue
		}
		p.ops = append(p.ops, clientv3.OpDelete(w.key, clientv3.WithRange(w.end)))
		p.req.Success = append(p.req.Success, &pb.RequestOp{Request: &pb.RequestOp_RequestDeleteRange{
			RequestDeleteRange: &pb.DeleteRangeRequest{Key: []byte(w.key), RangeEnd: []byte(w.end)}}})
	}
	return p
}

// disjoint folds ops, which KV applies in order, into writes with the same
// effect of which no two touch the same key: etcd refuses a transaction
// with two puts of one key or a put inside a deleted range ("duplicate key
// given in txn request"). A later write of a key wins: a put drops an
// earlier put of its key and cuts itself out of earlier deleted ranges; a
// delete drops the earlier puts it covers. Overlapping deletes are allowed.
func (k *KV) disjoint(ops []metadata.Op) []write {
	var out []write
	for _, op := range ops {
		key := k.prefix + op.Key
		switch {
		case op.DeletePrefix:
			out = dropPuts(out, key, metadata.PrefixEnd(key))
			out = append(out, write{key: key, end: metadata.PrefixEnd(key)})
		case op.Delete:
			out = dropPuts(out, key, key+"\x00")
			out = append(out, write{key: key, end: key + "\x00"})
		default:
			out = cutDeletes(dropPuts(out, key, key+"\x00"), key)
			out = append(out, write{put: true, key: key, value: op.Value, lease: op.Lease})
		}
	}
	return out
}

// dropPuts removes the puts of keys in [start, end).
func dropPuts(ws []write, start, end string) []write {
	kept := ws[:0]
	for _, w := range ws {
		if !w.put || w.key < start || w.key >= end {
			kept = append(kept, w)
		}
	}
	return kept
}

// cutDeletes splits every deleted range that holds key around it.
func cutDeletes(ws []write, key string) []write {
	var out []write
	for _, w := range ws {
		if w.put || key < w.key || key >= w.end {
			out = append(out, w)
			continue
		}
		if w.key < key {
			out = append(out, write{key: w.key, end: key})
		}
		if after := key + "\x00"; after < w.end {
			out = append(out, write{key: after, end: w.end})
		}
	}
	return out
}
