package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ClusterLaunch is how `--launch cluster` starts a Sediment cluster: one
// etcd process (.bin/etcd or SEDIMENT_ETCD) and Brokers `broker serve`
// processes on it, all on loopback, each with its own data directory.
type ClusterLaunch struct {
	// Brokers is how many brokers run (--cluster-brokers, default 3).
	// Node i has rack r<i>, and clients bootstrap from all of them.
	Brokers int
	// Sediment is every broker's binary, flags and environment. Its
	// ObjectStore is required: the brokers share one bucket (--minio).
	Sediment SedimentLaunch
	// LogPrefix is where the processes' output goes: LogPrefix+"etcd.log"
	// and LogPrefix+"node-<i>.log"; empty: discarded.
	LogPrefix string
	// FailoverAfter > 0 kills the broker that owns the most partitions
	// this long into the first live round (--failover-after).
	FailoverAfter time.Duration
}

// maxClusterBrokers bounds a launched cluster: two cores run them all.
const maxClusterBrokers = 16

// etcdPrefix is the cluster's key prefix in its etcd.
const etcdPrefix = "bench"

// clusterTarget is an etcd and its brokers.
type clusterTarget struct {
	etcd          *etcdProcess
	brokers       []*clusterBroker
	failoverAfter time.Duration
	failoverTaken bool
}

// clusterBroker is one broker process of a cluster.
type clusterBroker struct {
	node int
	rack string
	t    *sedimentTarget
	mu   sync.Mutex // guards killed and last
	// killed is set once the bench has SIGKILLed the broker; last is its
	// final scrape, which stands for it from then on.
	killed bool
	last   Snapshot
}

func launchCluster(ctx context.Context, l ClusterLaunch) (Target, error) {
	if l.Brokers <= 0 {
		l.Brokers = 3
	}
	if l.Sediment.ObjectStore == "" {
		return nil, errors.New("bench: --launch cluster: the brokers need a bucket they share: give --minio (a MinIO started for the run) or --object-store s3://...")
	}
	e, err := startEtcd(ctx, logPath(l.LogPrefix, "etcd.log"))
	if err != nil {
		return nil, err
	}
	c := &clusterTarget{etcd: e, failoverAfter: l.FailoverAfter}
	if err := c.startBrokers(ctx, l); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.waitMembers(ctx, time.Minute); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func logPath(prefix, name string) string {
	if prefix == "" {
		return ""
	}
	return prefix + name
}

// startBrokers starts every broker at once (a cluster broker may wait for
// the others before it is ready) and waits until each answers /readyz.
func (c *clusterTarget) startBrokers(ctx context.Context, l ClusterLaunch) error {
	c.brokers = make([]*clusterBroker, l.Brokers)
	errs := make([]error, l.Brokers)
	var wg sync.WaitGroup
	for i := range l.Brokers {
		b := &clusterBroker{node: i, rack: "r" + strconv.Itoa(i)}
		c.brokers[i] = b
		sl := l.Sediment
		sl.LogPath = logPath(l.LogPrefix, fmt.Sprintf("node-%d.log", i))
		sl.Flags = append([]string{"--metadata", "etcd://" + c.etcd.endpoint + "/" + etcdPrefix,
			"--node-id", strconv.Itoa(i), "--rack", b.rack}, l.Sediment.Flags...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, err := launchSediment(ctx, sl)
			if err != nil {
				errs[i] = fmt.Errorf("bench: cluster node %d: %w", i, err)
				return
			}
			b.t = t.(*sedimentTarget)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitMembers waits until the brokers' Metadata lists every one of them:
// a round started before would put all its partitions on the first.
func (c *clusterTarget) waitMembers(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	seen := 0
	for time.Now().Before(deadline) {
		n, err := c.listedBrokers(ctx)
		if err == nil {
			if seen = n; seen == len(c.brokers) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: cluster: Metadata lists %d of the %d brokers after %s (does `broker serve --metadata etcd://...` run as a cluster member?); etcd holds %s",
		seen, len(c.brokers), within, c.registered(ctx))
}

// listedBrokers asks the cluster's Metadata how many brokers it lists, with
// a client of its own each time: a client keeps the brokers an earlier
// answer gave it, from before every broker had joined.
func (c *clusterTarget) listedBrokers(ctx context.Context) (int, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(c.Bootstrap())...))
	if err != nil {
		return 0, fmt.Errorf("bench: cluster: %w", err)
	}
	defer cl.Close()
	mctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := kadm.NewClient(cl).BrokerMetadata(mctx)
	return len(m.Brokers), err
}

// registered lists the brokers/ keys in etcd, for an error message.
func (c *clusterTarget) registered(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := c.etcd.client.Get(ctx, etcdPrefix+"/brokers/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return "(brokers/ unreadable: " + err.Error() + ")"
	}
	keys := []string{}
	for _, kv := range resp.Kvs {
		keys = append(keys, strings.TrimPrefix(string(kv.Key), etcdPrefix+"/"))
	}
	return fmt.Sprintf("%d brokers/ keys %v", len(keys), keys)
}

// seeds splits a Bootstrap address list.
func seeds(bootstrap string) []string { return strings.Split(bootstrap, ",") }

func (c *clusterTarget) Name() string { return "cluster" }

// Bootstrap lists the live brokers, comma-separated.
func (c *clusterTarget) Bootstrap() string {
	var addrs []string
	for _, b := range c.brokers {
		if b.t != nil && !b.isKilled() {
			addrs = append(addrs, b.t.addr)
		}
	}
	return strings.Join(addrs, ",")
}

// Scrape reads every broker and etcd. The sum over the brokers is the
// snapshot's own figures; Cluster keeps them apart. A broker the bench
// killed stands at its last scrape.
func (c *clusterTarget) Scrape(ctx context.Context) (Snapshot, bool, error) {
	cs := &ClusterSnapshot{}
	for _, b := range c.brokers {
		snap, err := b.scrape(ctx)
		if err != nil {
			return Snapshot{}, false, fmt.Errorf("bench: cluster node %d: %w", b.node, err)
		}
		cs.Brokers = append(cs.Brokers, BrokerSnapshot{Node: b.node, Rack: b.rack, Killed: b.isKilled(), Snapshot: snap})
	}
	var err error
	if cs.Etcd, err = scrapeEtcd(ctx, c.etcd.metricsURL()); err != nil {
		return Snapshot{}, false, err
	}
	return cs.total(), true, nil
}

func (b *clusterBroker) isKilled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.killed
}

func (b *clusterBroker) scrape(ctx context.Context) (Snapshot, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.killed {
		return b.last, nil
	}
	snap, _, err := b.t.Scrape(ctx)
	return snap, err
}

// kill scrapes the broker one last time and SIGKILLs it; justBefore runs
// between the two.
func (b *clusterBroker) kill(ctx context.Context, justBefore func()) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.killed {
		return nil
	}
	snap, _, err := b.t.Scrape(ctx)
	if err != nil {
		return fmt.Errorf("bench: cluster node %d: last scrape before the kill: %w", b.node, err)
	}
	justBefore()
	if err := b.t.cmd.Process.Kill(); err != nil {
		return fmt.Errorf("bench: cluster node %d: SIGKILL: %w", b.node, err)
	}
	<-b.t.exited
	b.killed, b.last = true, snap
	return nil
}

// Close stops the brokers, then etcd, and removes their data.
func (c *clusterTarget) Close() error {
	var errs []error
	for _, b := range c.brokers {
		if b != nil && b.t != nil {
			errs = append(errs, b.t.Close())
		}
	}
	if c.etcd != nil {
		errs = append(errs, c.etcd.stop())
	}
	return errors.Join(errs...)
}
