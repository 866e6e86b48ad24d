package cluster

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// entry is one key of a view: its decoded value and revisions.
type entry struct {
	value     any
	modRev    int64
	createRev int64
	lease     int64
}

// view keeps every key under one prefix in memory: an initial Range, then
// a Watch from the revision after it. When the watch ends (compacted past
// its revision, cancelled, no leader) it ranges and watches again, so a
// view is never left behind for good; until then it answers from what it
// has.
type view struct {
	cli      *clientv3.Client
	base     string // the metadata prefix
	rel      string // the view's prefix, relative to base
	decode   func([]byte) (any, error)
	onChange func()
	logger   *slog.Logger

	mu    sync.RWMutex // guards items and rev
	items map[string]entry
	rev   int64 // the etcd revision items are at
	ready chan struct{}
	once  sync.Once
}

func newView(cli *clientv3.Client, base, rel string, decode func([]byte) (any, error), onChange func(), logger *slog.Logger) *view {
	return &view{cli: cli, base: base, rel: rel, decode: decode, onChange: onChange, logger: logger,
		items: map[string]entry{}, ready: make(chan struct{})}
}

// run keeps the view current until ctx ends.
func (v *view) run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		rev, err := v.load(ctx)
		if err != nil {
			v.logger.Debug("cluster: reading keys failed, retrying", "prefix", v.rel, "err", err)
			sleep(ctx, backoff)
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		v.watch(ctx, rev)
	}
}

func (v *view) load(ctx context.Context) (int64, error) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := v.cli.Get(rctx, v.base+v.rel, clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	items := make(map[string]entry, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if e, ok := v.entry(kv); ok {
			items[strings.TrimPrefix(string(kv.Key), v.base)] = e
		}
	}
	v.mu.Lock()
	v.items, v.rev = items, resp.Header.Revision
	v.mu.Unlock()
	v.once.Do(func() { close(v.ready) })
	v.onChange()
	return resp.Header.Revision, nil
}

func (v *view) watch(ctx context.Context, rev int64) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	for resp := range v.cli.Watch(wctx, v.base+v.rel, clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
		if err := resp.Err(); err != nil {
			v.logger.Debug("cluster: watch ended, reading again", "prefix", v.rel, "err", err)
			return
		}
		v.apply(resp)
		v.onChange()
	}
}

func (v *view) apply(resp clientv3.WatchResponse) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, ev := range resp.Events {
		key := strings.TrimPrefix(string(ev.Kv.Key), v.base)
		// A delete event's ModRevision is the deletion's. The header's
		// revision is not used: it may run ahead of events still to come.
		v.rev = max(v.rev, ev.Kv.ModRevision)
		if ev.Type == mvccpb.DELETE {
			delete(v.items, key)
			continue
		}
		if e, ok := v.entry(ev.Kv); ok {
			v.items[key] = e
		} else {
			delete(v.items, key)
		}
	}
}

func (v *view) entry(kv *mvccpb.KeyValue) (entry, bool) {
	val, err := v.decode(kv.Value)
	if err != nil {
		v.logger.Warn("cluster: undecodable value ignored", "key", string(kv.Key), "err", err)
		return entry{}, false
	}
	return entry{value: val, modRev: kv.ModRevision, createRev: kv.CreateRevision, lease: kv.Lease}, true
}

// get returns the entry of key (relative to the metadata prefix) and the
// revision the view is at.
func (v *view) get(key string) (entry, int64, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	e, ok := v.items[key]
	return e, v.rev, ok
}

// snapshot returns a copy of every entry.
func (v *view) snapshot() map[string]entry {
	v.mu.RLock()
	defer v.mu.RUnlock()
	out := make(map[string]entry, len(v.items))
	for k, e := range v.items {
		out[k] = e
	}
	return out
}

// each calls fn for every entry, under the view's read lock: fn must not
// call back into the view.
func (v *view) each(fn func(key string, e entry)) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	for k, e := range v.items {
		fn(k, e)
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
