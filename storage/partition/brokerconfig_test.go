package partition

import (
	"context"
	"maps"
	"testing"

	"github.com/sediment-io/sediment/config"
	"github.com/sediment-io/sediment/metadata"
)

// heldBrokerStore is the metadata store with its broker-config write held
// until the test lets it go.
type heldBrokerStore struct {
	*metadata.Store
	entered, release chan struct{}
}

func (s heldBrokerStore) SetBrokerConfig(ctx context.Context, cfg map[string]string, version int64) error {
	s.entered <- struct{}{}
	<-s.release
	return s.Store.SetBrokerConfig(ctx, cfg, version)
}

// TestBrokerConfigWriteDoesNotBlockTopics changes a broker default while
// its metadata write hangs: topic lookups and topic creation go on (they
// used to wait on Log.mu, held across the write), and once the write lands
// every topic resolves its configs against the new default.
func TestBrokerConfigWriteDoesNotBlockTopics(t *testing.T) {
	ctx := context.Background()
	e := newLogEnv(t, nil)
	kv, err := metadata.OpenBolt(e.dir + "/meta.db")
	if err != nil {
		t.Fatal(err)
	}
	e.meta = metadata.NewStore(kv)
	held := heldBrokerStore{Store: e.meta, entered: make(chan struct{}), release: make(chan struct{})}
	dyn, err := config.NewDynamic(ctx, held, metadata.IsConflict)
	if err != nil {
		t.Fatal(err)
	}
	e.opts.BrokerConfig = dyn
	l := e.open()
	if _, err := l.CreateTopic(ctx, "before", 1, map[string]string{"retention.bytes": "10"}, false); err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() {
		done <- dyn.Set(ctx, func(cur map[string]string) (map[string]string, error) {
			cur = maps.Clone(cur)
			if cur == nil {
				cur = map[string]string{}
			}
			cur["log.retention.ms"] = "5000"
			return cur, nil
		}, false)
	}()
	<-held.entered // the write is in flight
	if _, ok := l.Topic("before"); !ok {
		t.Fatal("topic lookup failed during a broker config write")
	}
	if _, err := l.CreateTopic(ctx, "during", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	close(held.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"before", "during"} {
		tp, _ := l.Topic(name)
		if got := tp.cfg.Load().retentionMs; got != 5000 {
			t.Errorf("topic %s: retention.ms %d after the broker default changed, want 5000", name, got)
		}
	}
	if tp, _ := l.Topic("before"); tp.cfg.Load().retentionBytes != 10 {
		t.Errorf("the topic's own retention.bytes was lost: %d", tp.cfg.Load().retentionBytes)
	}
}
