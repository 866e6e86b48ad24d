package etcdkv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// probeTimeout bounds one attempt to reach the cluster at Open.
const probeTimeout = 2 * time.Second

// Open connects to the cluster and waits until it answers a linearizable
// read, which needs a quorum. While it cannot, it logs why and retries,
// until ctx ends: an etcd that comes up after the broker is no error.
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (*KV, error) {
	tlsCfg, err := cfg.tls()
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: cfg.Endpoints, DialTimeout: probeTimeout, TLS: tlsCfg,
		Username: cfg.Username, Password: cfg.Password,
		Logger: zap.NewNop(), // the client's retries are noise; Open and the callers say what failed
	})
	if err != nil {
		return nil, fmt.Errorf("etcdkv: client for %v: %w", cfg.Endpoints, err)
	}
	kv := &KV{cli: cli, prefix: cfg.Prefix, limits: cfg.Limits}
	if kv.limits == (Limits{}) {
		kv.limits = DefaultLimits
	}
	if err := kv.waitReachable(ctx, cfg.Endpoints, logger); err != nil {
		cli.Close()
		return nil, err
	}
	return kv, nil
}

func (k *KV) waitReachable(ctx context.Context, endpoints []string, logger *slog.Logger) error {
	backoff := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		_, err := k.cli.Get(pctx, k.prefix, clientv3.WithCountOnly())
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("etcdkv: etcd at %v unreachable: %w", endpoints, errors.Join(context.Cause(ctx), err))
		}
		logger.Warn("metadata: etcd unreachable, retrying", "endpoints", endpoints, "attempt", attempt,
			"retry_in", backoff, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (c Config) tls() (*tls.Config, error) {
	if c.CACert == "" && c.Cert == "" && c.Key == "" {
		return nil, nil
	}
	info := transport.TLSInfo{TrustedCAFile: c.CACert, CertFile: c.Cert, KeyFile: c.Key}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcdkv: TLS: %w", err)
	}
	return cfg, nil
}
