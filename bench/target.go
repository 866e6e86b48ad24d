package bench

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TargetSpec says which broker a run measures and how to reach or start it.
type TargetSpec struct {
	// Kind is "bootstrap" (a running broker at Addr), "sediment" (launched
	// as a subprocess), "cluster" (an etcd and several Sediment brokers,
	// launched as subprocesses), "kafka" (the reference Apache Kafka broker, launched
	// in a JVM) or "kfake" (franz-go's in-memory cluster, in-process).
	Kind string
	// Addr is the bootstrap address of a running broker (Kind bootstrap).
	Addr string
	// MetricsURL, optional, is a running broker's Prometheus endpoint
	// (http://HOST:PORT/metrics), scraped like a launched Sediment's.
	MetricsURL string
	// Sediment is how to launch the broker (Kind sediment).
	Sediment SedimentLaunch
	// Kafka is how to launch Apache Kafka (Kind kafka).
	Kafka KafkaLaunch
	// Cluster is how to launch an etcd and several brokers (Kind cluster).
	Cluster ClusterLaunch
}

// ParseTargetSpec reads one --vs element: "sediment", "cluster",
// "cluster:N", "kafka", "kfake" or a HOST:PORT of a running broker. A
// kafka spec starts in Kafka's default configuration; its Kafka field
// takes extra properties. A cluster spec runs sed on every broker: N of
// them, or --cluster-brokers (0 here until set).
func ParseTargetSpec(s string, sed SedimentLaunch) (TargetSpec, error) {
	switch s = strings.TrimSpace(s); s {
	case "sediment":
		return TargetSpec{Kind: "sediment", Sediment: sed}, nil
	case "cluster":
		return TargetSpec{Kind: "cluster", Cluster: ClusterLaunch{Sediment: sed}}, nil
	case "kafka":
		return TargetSpec{Kind: "kafka"}, nil
	case "kfake":
		return TargetSpec{Kind: "kfake"}, nil
	}
	if n, ok := strings.CutPrefix(s, "cluster:"); ok {
		brokers, err := strconv.Atoi(n)
		if err != nil || brokers < 1 || brokers > maxClusterBrokers {
			return TargetSpec{}, fmt.Errorf("bench: target %q: want cluster:N with N brokers, 1..%d", s, maxClusterBrokers)
		}
		return TargetSpec{Kind: "cluster", Cluster: ClusterLaunch{Brokers: brokers, Sediment: sed}}, nil
	}
	if _, _, err := net.SplitHostPort(s); err != nil {
		return TargetSpec{}, fmt.Errorf("bench: target %q: want sediment, cluster, cluster:N, kafka, kfake or HOST:PORT of a running broker", s)
	}
	return TargetSpec{Kind: "bootstrap", Addr: s}, nil
}

// Label is the target's name in reports: a cluster's names its brokers.
func (s TargetSpec) Label() string {
	switch s.Kind {
	case "bootstrap":
		return s.Addr
	case "cluster":
		if s.Cluster.Brokers > 0 {
			return fmt.Sprintf("cluster:%d", s.Cluster.Brokers)
		}
	}
	return s.Kind
}

// Target is a broker under measurement.
type Target interface {
	// Name labels the target in reports.
	Name() string
	// Bootstrap is the Kafka address clients connect to.
	Bootstrap() string
	// Scrape reads the broker's counters; ok is false when the target
	// has no metrics endpoint.
	Scrape(ctx context.Context) (snap Snapshot, ok bool, err error)
	// Close stops a launched broker (and removes its data); it leaves a
	// running one alone.
	Close() error
}

// Launch starts (or connects to) the target spec describes.
func Launch(ctx context.Context, spec TargetSpec) (Target, error) {
	switch spec.Kind {
	case "bootstrap":
		if spec.Addr == "" {
			return nil, fmt.Errorf("bench: bootstrap target without an address")
		}
		return &runningBroker{addr: spec.Addr, metrics: newScraper(spec.MetricsURL, 0)}, nil
	case "kfake":
		return launchKfake()
	case "sediment":
		return launchSediment(ctx, spec.Sediment)
	case "kafka":
		return launchKafka(ctx, spec.Kafka)
	case "cluster":
		return launchCluster(ctx, spec.Cluster)
	}
	return nil, fmt.Errorf("bench: unknown target kind %q (want bootstrap, sediment, cluster, kafka or kfake)", spec.Kind)
}

// runningBroker is a broker someone else started.
type runningBroker struct {
	addr    string
	metrics *scraper
}

func (b *runningBroker) Name() string      { return b.addr }
func (b *runningBroker) Bootstrap() string { return b.addr }
func (b *runningBroker) Close() error      { return nil }
func (b *runningBroker) Scrape(ctx context.Context) (Snapshot, bool, error) {
	return b.metrics.scrape(ctx)
}

// kfakeTarget is franz-go's in-memory cluster: no durability and no disk,
// the baseline of what the client and the machine do without a broker's
// storage.
type kfakeTarget struct{ c *kfake.Cluster }

func launchKfake() (Target, error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		return nil, fmt.Errorf("bench: start kfake: %w", err)
	}
	return &kfakeTarget{c: c}, nil
}

func (k *kfakeTarget) Name() string      { return "kfake" }
func (k *kfakeTarget) Bootstrap() string { return k.c.ListenAddrs()[0] }
func (k *kfakeTarget) Close() error      { k.c.Close(); return nil }
func (k *kfakeTarget) Scrape(context.Context) (Snapshot, bool, error) {
	return Snapshot{}, false, nil
}
