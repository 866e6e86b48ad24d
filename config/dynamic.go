package config

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
)

// BrokerStore is where the dynamic broker configs are kept durably, with
// compare-and-swap on a version (metadata.Store implements it).
type BrokerStore interface {
	// BrokerConfig returns the configs and their version (0: never set).
	BrokerConfig(ctx context.Context) (map[string]string, int64, error)
	// SetBrokerConfig replaces the configs if they are still at version,
	// else returns an error that IsConflict reports.
	SetBrokerConfig(ctx context.Context, cfg map[string]string, version int64) error
}

// Edit returns the new set of configs given the current one (which it may
// modify), or an error naming the bad config.
type Edit func(map[string]string) (map[string]string, error)

// maxSetRetries bounds Set's compare-and-swap loop.
const maxSetRetries = 16

// Dynamic owns the broker's dynamic configs: the copy every reader sees and
// the writes that change it. Readers never wait: they load an immutable
// snapshot. Writers are serialized among themselves, and only they wait on
// the store's I/O.
type Dynamic struct {
	store      BrokerStore
	isConflict func(error) bool

	cur atomic.Pointer[snapshot]

	writeMu  sync.Mutex // serializes Set; guards onChange
	onChange []func(map[string]string)
}

type snapshot struct {
	cfg     map[string]string // never modified once published
	version int64
}

// NewDynamic loads the dynamic broker configs from store. isConflict tells
// a lost compare-and-swap from other errors.
func NewDynamic(ctx context.Context, store BrokerStore, isConflict func(error) bool) (*Dynamic, error) {
	d := &Dynamic{store: store, isConflict: isConflict}
	if err := d.reload(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Dynamic) reload(ctx context.Context) error {
	cfg, v, err := d.store.BrokerConfig(ctx)
	if err != nil {
		return fmt.Errorf("config: load broker configs: %w", err)
	}
	d.cur.Store(&snapshot{cfg: cfg, version: v})
	return nil
}

// Map returns a copy of the dynamic broker configs (only those set).
func (d *Dynamic) Map() map[string]string { return maps.Clone(d.cur.Load().cfg) }

// Values returns the effective broker configs.
func (d *Dynamic) Values() Values { return Broker(d.cur.Load().cfg) }

// OnChange registers f to be called with the new configs after every
// change this Dynamic makes. f runs on the writer's goroutine and must not
// call Set.
func (d *Dynamic) OnChange(f func(map[string]string)) {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	d.onChange = append(d.onChange, f)
}

// Set replaces the dynamic broker configs by what edit returns, after
// checking them against the registered definitions (and that no read-only
// config changes). With validateOnly it checks and changes nothing. A
// concurrent change elsewhere (another broker of a cluster) is picked up
// and edit is applied again on top of it.
func (d *Dynamic) Set(ctx context.Context, edit Edit, validateOnly bool) error {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	for range maxSetRetries {
		cur := d.cur.Load()
		next, err := edit(cloneOrEmpty(cur.cfg))
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		if err := checkBrokerEdit(cur.cfg, next); err != nil || validateOnly {
			return err
		}
		err = d.store.SetBrokerConfig(ctx, next, cur.version)
		if err == nil {
			// The store does not return the new version: read it back. If
			// that read fails, the unknown version (-1) makes the next Set
			// lose its compare-and-swap and reload first.
			d.cur.Store(&snapshot{cfg: next, version: -1})
			_ = d.reload(ctx)
			for _, f := range d.onChange {
				f(d.Map())
			}
			return nil
		}
		if !d.isConflict(err) {
			return fmt.Errorf("config: store broker configs: %w", err)
		}
		if err := d.reload(ctx); err != nil {
			return err
		}
	}
	return fmt.Errorf("config: set broker configs: %w", errTooManyChanges)
}

var errTooManyChanges = errors.New("too many concurrent changes")

func checkBrokerEdit(cur, next map[string]string) error {
	if err := ValidateBroker(next); err != nil {
		return err
	}
	for name, d := range brokerDefs {
		if d.ReadOnly && next[name] != cur[name] {
			return fmt.Errorf("%w: %s cannot be altered", ErrInvalid, name)
		}
	}
	return nil
}

// cloneOrEmpty copies m; an edit may always write to what it is given.
func cloneOrEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}
