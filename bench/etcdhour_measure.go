package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sediment-io/sediment/storage/record"
)

// EtcdHourPoint is etcd as a checkpoint found it.
type EtcdHourPoint struct {
	Round       int     `json:"round"`
	Hours       float64 `json:"hour_equivalents"`
	WallSeconds float64 `json:"wall_s"`
	LoadAvg     string  `json:"load_average"`
	Revision    int64   `json:"revision"`
	DBSize      int64   `json:"db_size_bytes"`
	DBInUse     int64   `json:"db_in_use_bytes"`
	// Keys counts the live keys by their first path segment (index,
	// objects, parts, producers, ...); producer deltas are counted apart
	// from the rest of the producer state.
	Keys      map[string]int64 `json:"live_keys_by_prefix"`
	KeysTotal int64            `json:"live_keys"`
	// Manifests is the index entries that are manifests of folded ones
	// (not counted, -1, in a variant whose fold cannot start in its rounds).
	Manifests     int64   `json:"manifest_entries"`
	Txns          float64 `json:"etcd_txns"`           // etcd_mvcc_txn_total since etcd started
	ReceivedBytes float64 `json:"etcd_received_bytes"` // etcd_network_client_grpc_received_bytes_total
	Compactions   int     `json:"etcd_compactions"`
	Maintenances  int     `json:"maintenance_passes"`
}

// compactEtcd is one pass of etcdkv.Maintain in rounds: compact etcd's
// history to the revision the previous pass saw, and note the current one.
func (v *variantRun) compactEtcd(ctx context.Context) error {
	cli := v.etcd.client
	st, err := cli.Status(ctx, v.etcd.endpoint)
	if err != nil {
		return fmt.Errorf("bench: etcd-hour: etcd status: %w", err)
	}
	if v.prevRev > 0 {
		if _, err := cli.Compact(ctx, v.prevRev); err != nil && !isCompacted(err) {
			return fmt.Errorf("bench: etcd-hour: compact etcd to %d: %w", v.prevRev, err)
		}
		v.compactions++
	}
	v.prevRev = st.Header.Revision
	return nil
}

// checkpoint measures etcd and records the point.
func (v *variantRun) checkpoint(ctx context.Context, round int) error {
	pt, err := v.measure(ctx, round)
	if err != nil {
		return err
	}
	v.record(func(r *EtcdHourVariant) { r.addPoint(pt) })
	v.progress("fold %d: round %d (%.3f h) in %s: etcd db %.1f MiB (in use %.1f), %d live keys (index %d, manifests %d), %.0f txns, load %s",
		v.foldKeys, pt.Round, pt.Hours, time.Duration(pt.WallSeconds*float64(time.Second)).Round(time.Second),
		float64(pt.DBSize)/(1<<20), float64(pt.DBInUse)/(1<<20), pt.KeysTotal, pt.Keys["index"], pt.Manifests, pt.Txns, pt.LoadAvg)
	return nil
}

func (v *variantRun) measure(ctx context.Context, round int) (EtcdHourPoint, error) {
	pt := EtcdHourPoint{Round: round, Hours: float64(round) / roundsPerHour, WallSeconds: time.Since(v.start).Seconds(),
		LoadAvg: loadAvg(), Compactions: v.compactions, Maintenances: v.maintained, Manifests: -1}
	st, err := v.etcd.client.Status(ctx, v.etcd.endpoint)
	if err != nil {
		return pt, fmt.Errorf("bench: etcd-hour: etcd status: %w", err)
	}
	pt.Revision, pt.DBSize, pt.DBInUse = st.Header.Revision, st.DbSize, st.DbSizeInUse
	m, err := scrapeEtcd(ctx, v.etcd.metricsURL())
	if err != nil {
		return pt, err
	}
	pt.Txns, pt.ReceivedBytes = m.Txns, m.ReceivedBytes
	if pt.Keys, err = countKeys(ctx, v.etcd.client, etcdHourPrefix+"/"); err != nil {
		return pt, err
	}
	for _, n := range pt.Keys {
		pt.KeysTotal += n
	}
	if v.foldKeys < round {
		if pt.Manifests, err = countManifests(ctx, v.etcd.client, etcdHourPrefix+"/"); err != nil {
			return pt, err
		}
	}
	return pt, nil
}

// finish takes the last checkpoint, then compacts and defragments etcd as
// an operator would and records what is left.
func (v *variantRun) finish(ctx context.Context, done int) error {
	if done == 0 {
		return nil
	}
	v.record(func(r *EtcdHourVariant) { r.Rounds = done })
	if err := v.checkpoint(ctx, done); err != nil {
		return err
	}
	c, err := v.etcd.compactDefrag(ctx, etcdHourPrefix+"/")
	if err != nil {
		return err
	}
	v.record(func(r *EtcdHourVariant) { r.End = c })
	v.progress("fold %d: after compaction and defragmentation: etcd db %.1f MiB (in use %.1f), %d keys",
		v.foldKeys, c.DBSizeAfter/(1<<20), c.DBInUseAfter/(1<<20), c.Keys)
	return nil
}

// keyClasses are the first path segments of the keys the log writes;
// countKeys counts each with one count-only range, since a paged range
// makes etcd count the rest of the range for every page.
var keyClasses = []string{"index/", "objects/", "parts/", "producers/", "topics/", "garbage/", "swept/",
	"epochs/", "lifecycle/", "pending-topics/", "deleted-topics/", "producerids"}

// countKeys counts the live keys under prefix by keyClasses (the rest as
// "other"), with the producer deltas apart from the rest of the producer
// state.
func countKeys(ctx context.Context, cli *clientv3.Client, prefix string) (map[string]int64, error) {
	out := map[string]int64{}
	count := func(p string) (int64, error) {
		resp, err := cli.Get(ctx, p, clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			return 0, fmt.Errorf("bench: etcd-hour: count keys under %s: %w", p, err)
		}
		return resp.Count, nil
	}
	total, err := count(prefix)
	if err != nil {
		return nil, err
	}
	for _, c := range keyClasses {
		n, err := count(prefix + c)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			out[strings.TrimSuffix(c, "/")] = n
		}
		total -= n
	}
	if total > 0 {
		out["other"] = total
	}
	deltas, err := scanKeys(ctx, cli, prefix+"producers/", func(key string, _ []byte) bool { return strings.Contains(key, "/delta/") })
	if err != nil {
		return nil, err
	}
	if deltas > 0 {
		out["producers"] -= deltas
		out["producers (deltas)"] = deltas
	}
	return out, nil
}

// countManifests counts the index entries under prefix that are manifests
// of folded entries.
func countManifests(ctx context.Context, cli *clientv3.Client, prefix string) (int64, error) {
	return scanKeys(ctx, cli, prefix+"index/", func(_ string, v []byte) bool { return bytes.Contains(v, []byte(`"manifest":true`)) })
}

// scanKeys counts the keys under prefix for which match holds, reading
// them (values included) in pages: for prefixes of bounded size only.
func scanKeys(ctx context.Context, cli *clientv3.Client, prefix string, match func(key string, value []byte) bool) (int64, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	from := prefix
	var n int64
	for range 1 << 20 { // pages of 5,000: up to 5 billion keys
		resp, err := cli.Get(ctx, from, clientv3.WithRange(end), clientv3.WithLimit(5000))
		if err != nil {
			return 0, fmt.Errorf("bench: etcd-hour: read keys under %s: %w", prefix, err)
		}
		for _, kv := range resp.Kvs {
			if match(string(kv.Key), kv.Value) {
				n++
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return n, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	return 0, fmt.Errorf("bench: etcd-hour: too many keys under %s", prefix)
}

// loadAvg is /proc/loadavg's 1, 5 and 15 minutes.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// Offsets in a v2 batch header of the producer fields (the layout is
// drawn in storage/record/batch.go).
const (
	batchCRCOff      = 17
	batchAttrOff     = 21
	batchPIDOff      = 43
	batchPEpochOff   = 51
	batchFirstSeqOff = 53
)

// producerBatch is a batch of one record, as an idempotent producer sends
// it: producer id pid at epoch 0, first sequence seq.
func producerBatch(pid int64, seq int32, ts int64, value []byte) []byte {
	b := record.EncodeBatch([]record.Record{{Timestamp: ts, Value: value}})
	binary.BigEndian.PutUint64(b[batchPIDOff:], uint64(pid))
	binary.BigEndian.PutUint16(b[batchPEpochOff:], 0)
	binary.BigEndian.PutUint32(b[batchFirstSeqOff:], uint32(seq))
	crc := crc32.Checksum(b[batchAttrOff:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(b[batchCRCOff:], crc)
	return b
}
