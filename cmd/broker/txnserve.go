package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/groupcoord"
	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/txncoord"
)

// txnCrashEnv names the crash tests' fault-injection seam: with
// SEDIMENT_TEST_TXN_CRASH=<phase> (one of txncoord's Hook phases, or
// "between-markers") the broker kills itself with SIGKILL when its
// transaction coordinator reaches that phase, leaving everything as a
// power loss would. With <phase>:<file> it does so only while file exists,
// so that a test arms it for one transaction of a running cluster.
// Test-only: production brokers never set it.
const txnCrashEnv = "SEDIMENT_TEST_TXN_CRASH"

// txnCrashHook returns the Hook for txncoord.Config and txnMarkers: nil
// unless SEDIMENT_TEST_TXN_CRASH names a phase.
func txnCrashHook(logger *slog.Logger) func(phase string) {
	want, armed, _ := strings.Cut(os.Getenv(txnCrashEnv), ":")
	if want == "" {
		return nil
	}
	return func(phase string) {
		if phase != want {
			return
		}
		if armed != "" {
			if _, err := os.Stat(armed); err != nil {
				return
			}
		}
		logger.Warn(txnCrashEnv+": killing the process in a transaction phase", "phase", phase)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		os.Exit(137) // as the kill would: never return into the phase
	}
}

// openTxns opens the transaction coordinator. One node (fence nil) owns
// every shard at once and completes the transactions a crash left in
// Prepare*; a cluster member owns the shards the cluster hands it, with
// the same fences as its group shards.
func (b *broker) openTxns(ctx context.Context, fence txncoord.Fencer, nodeID int32, pids *partition.ProducerIDs,
	logger *slog.Logger, reg prometheus.Registerer) error {
	hook := txnCrashHook(logger)
	b.markers = &txnMarkers{log: b.log, groups: b.groups, late: &b.late, cluster: b.etcd != nil, self: nodeID,
		peers: newTxnPeers(b.late.brokerAddrs, fmt.Sprintf("sediment-txn-%d", nodeID)), hook: hook, logger: logger}
	cfg := b.brokerCfg.Values()
	txns, err := txncoord.Open(ctx, txncoord.Config{
		Meta: b.meta, Fencer: fence, ProducerIDs: pids, Markers: b.markers,
		Topics: func(topic string) (int32, bool) {
			t, ok := b.log.Topic(topic)
			if !ok {
				return 0, false
			}
			return int32(len(t.Partitions())), true
		},
		MaxTimeout:          cfg.Millis("transaction.max.timeout.ms"),
		IDExpiration:        cfg.Millis("transactional.id.expiration.ms"),
		AbortSweepInterval:  cfg.Millis("transaction.abort.timed.out.transaction.cleanup.interval.ms"),
		ExpireSweepInterval: cfg.Millis("transaction.remove.expired.transaction.cleanup.interval.ms"),
		Hook:                hook, Logger: logger, Registry: reg,
	})
	if err != nil {
		b.markers.peers.close()
		return fmt.Errorf("transactions: %w", err)
	}
	b.txns = txns
	return nil
}

// closeTxns stops the transaction coordinator and its client of the other
// brokers. The group coordinator is still open: a completion in flight
// may still reach it. Closing twice is harmless (start-up failures close
// it, then the broker's close does): requests still in flight keep
// reaching the closed coordinator, which refuses them.
func (b *broker) closeTxns() error {
	if b.txns == nil {
		return nil
	}
	err := b.txns.Close()
	b.markers.peers.close()
	return err
}

// shardMux is the coordinator shards as the cluster drives them: one
// shard is both the consumer groups and the transactional ids that hash
// to it, owned and fenced together, so a transaction's coordinator is
// found, placed and moved exactly as a group's.
type shardMux struct {
	groups *groupcoord.Coordinator
	txns   *txncoord.Coordinator
}

// AcquireShard takes the groups first: a transaction the shard's
// transaction coordinator resumes may complete offsets of groups on it.
// An error leaves the cluster to drop both.
func (m shardMux) AcquireShard(ctx context.Context, shard int32) error {
	if err := m.groups.AcquireShard(ctx, shard); err != nil {
		return err
	}
	return m.txns.AcquireShard(ctx, shard)
}

// ReleaseShard hands over the transactions first, then the groups; both
// are released whatever the other answered.
func (m shardMux) ReleaseShard(ctx context.Context, shard int32) error {
	return errors.Join(m.txns.ReleaseShard(ctx, shard), m.groups.ReleaseShard(ctx, shard))
}

// DropShard stops serving the shard at once: its ownership is lost.
func (m shardMux) DropShard(shard int32) {
	m.txns.DropShard(shard)
	m.groups.DropShard(shard)
}
