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

// probeTimeout bounds the first attempt to reach the cluster at Open;
// each retry doubles it up to maxProbeTimeout, so that an etcd that is only
// slow (a loaded machine, bcrypt on every authentication) is reached in the end.
const (
	probeTimeout    = 2 * time.Second
	maxProbeTimeout = 16 * time.Second
)

// Open connects to the cluster and waits until it answers a linearizable
// read, which needs a quorum. While it cannot, it logs why and retries,
// until ctx ends: an etcd that comes up after the broker is no error. A
// refusal (bad credentials, no permission) ends it at once.
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (*KV, error) {
	tlsCfg, err := cfg.tls()
	if err != nil {
		return nil, err
	}
	limits := cfg.Limits
	if limits == (Limits{}) {
		limits = DefaultLimits
	}
	backoff, probe := 250*time.Millisecond, probeTimeout
	for attempt := 1; ; attempt++ {
		kv, err := connect(ctx, cfg, tlsCfg, probe)
		if err == nil {
			kv.limits = limits
			return kv, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("etcdkv: etcd at %v unreachable: %w", cfg.Endpoints, errors.Join(context.Cause(ctx), err))
		}
		if refused(err) { // etcd answered no: waiting changes nothing
			return nil, fmt.Errorf("etcdkv: etcd at %v refused the broker: %w", cfg.Endpoints, err)
		}
		logger.Warn("metadata: etcd unreachable, retrying", "endpoints", cfg.Endpoints, "attempt", attempt,
			"retry_in", backoff, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
		probe = min(2*probe, maxProbeTimeout)
	}
}

// connect makes a client (which authenticates at once when it has
// credentials) and reads through it once.
func connect(ctx context.Context, cfg Config, tlsCfg *tls.Config, probe time.Duration) (*KV, error) {
	cctx, cancel := context.WithTimeout(ctx, probe)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: cfg.Endpoints, DialTimeout: probe, TLS: tlsCfg, // no Context: the client outlives Open's ctx
		Username: cfg.Username, Password: cfg.Password,
		Logger: zap.NewNop(), // the client's retries are noise; Open and the callers say what failed
	})
	if err != nil {
		return nil, err
	}
	if _, err := cli.Get(cctx, cfg.Prefix, clientv3.WithCountOnly()); err != nil {
		cli.Close()
		return nil, err
	}
	return &KV{cli: cli, prefix: cfg.Prefix}, nil
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
