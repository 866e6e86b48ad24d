package protocol

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/groupcoord"
	"golang.org/x/sync/semaphore"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/txncoord"
)

// Config configures a Server.
type Config struct {
	NodeID int32
	// AdvertiseHost and AdvertisePort are given to clients in Metadata.
	AdvertiseHost string
	AdvertisePort int32
	ClusterID     string
	// MaxRequestBytes bounds one request frame (default 100 MiB); a larger
	// one closes its connection, as Kafka does (socket.request.max.bytes).
	MaxRequestBytes int32
	// MaxInflightBytes bounds the request bytes the server holds at once,
	// from reading a frame until its answer is written, over all
	// connections (default 32 MiB; Kafka's queued.max.request.bytes). A
	// connection whose next frame does not fit waits before reading it, so
	// producers are held back by TCP instead of filling the broker's
	// memory while the disk or the object store is the bottleneck. A
	// frame larger than the whole budget takes all of it; frames of up to
	// 64 KiB (everything but bulk produce) never wait.
	MaxInflightBytes int64
	// IdleTimeout closes connections idle this long (default 10 minutes,
	// Kafka's connections.max.idle.ms).
	IdleTimeout time.Duration
	Logger      *slog.Logger
	// Registry receives the protocol metrics (nil: not registered).
	Registry prometheus.Registerer
	// Groups coordinates consumer groups; the Server owns it from then on
	// and closes it in Close. Nil: group APIs answer
	// COORDINATOR_NOT_AVAILABLE.
	Groups *groupcoord.Coordinator
	// Txns coordinates transactions (FindCoordinator key type 1,
	// InitProducerId with a transactional id, AddPartitionsToTxn,
	// AddOffsetsToTxn, EndTxn, DescribeTransactions, ListTransactions).
	// The caller owns it: the Server never closes it. Nil: those APIs
	// answer COORDINATOR_NOT_AVAILABLE, and a transactional produce
	// cannot be verified (see TxnVerify).
	Txns *txncoord.Coordinator
	// TxnVerify checks, before a partition accepts a transactional batch
	// of a producer that has no open transaction there, that the
	// partition is in the producer's ongoing transaction (KIP-890 part 1):
	// nil when it is, else a kerr error (see CONTRACT.md). In a cluster it
	// asks the transactional id's coordinator, which may be another
	// broker. Nil: Txns.Verify, the local coordinator.
	TxnVerify func(ctx context.Context, txnID string, pid int64, epoch int16, tp txncoord.TopicPartition) error
	// ProducerIDs allocates the ids InitProducerId hands out. Nil:
	// InitProducerId answers COORDINATOR_NOT_AVAILABLE.
	ProducerIDs interface {
		Next(ctx context.Context) (int64, error)
	}
	// Cluster, when set, says which brokers are alive, which one is the
	// controller and which one owns each partition and coordinator. Nil:
	// this broker is the whole cluster.
	Cluster ClusterView
	// TableStatus, when set, returns a table topic's read-only status
	// entries (name, value) that DescribeConfigs appends to its configs;
	// names are the config names asked for (nil: all), which it may read
	// as a hint, the answer being filtered by them anyway.
	TableStatus func(topic string, names []string) [][2]string
}

// Server serves the Kafka protocol on a listener.
type Server struct {
	cfg  Config
	log  *partition.Log
	meta *metadata.Store
	m    *metrics
	lg   *slog.Logger

	groups *groupcoord.Coordinator // nil when it could not be opened

	inflight *semaphore.Weighted // request bytes held, see Config.MaxInflightBytes

	ctx    context.Context // canceled by Close
	cancel context.CancelFunc

	mu     sync.Mutex // guards lns and conns
	lns    []net.Listener
	conns  map[*conn]struct{}
	connWG sync.WaitGroup
}

// NewServer returns a server answering from log and meta.
func NewServer(cfg Config, log *partition.Log, meta *metadata.Store) *Server {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = 100 << 20
	}
	if cfg.MaxInflightBytes <= 0 {
		cfg.MaxInflightBytes = 32 << 20
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 10 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg: cfg, log: log, meta: meta, lg: cfg.Logger,
		m:   newMetrics(cfg.Registry),
		ctx: ctx, cancel: cancel,
		conns:    map[*conn]struct{}{},
		inflight: semaphore.NewWeighted(cfg.MaxInflightBytes),
	}
	s.groups = cfg.Groups
	return s
}

// release gives back budget a request held.
func (s *Server) release(held int64) {
	if held > 0 {
		s.inflight.Release(held)
		s.m.inflightBytes.Sub(float64(held))
	}
}

// Serve accepts connections on ln until Close. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		return ln.Close()
	}
	s.lns = append(s.lns, ln)
	s.mu.Unlock()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			// Out of file descriptors and the like: back off, keep serving.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.lg.Warn("accept failed", "err", err, "retry_in", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		s.startConn(nc)
	}
}

func (s *Server) startConn(nc net.Conn) {
	c := newConn(s, nc)
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.connWG.Add(1)
	s.mu.Unlock()
	s.m.connections.Inc()
	go func() {
		defer s.connWG.Done()
		defer s.m.connections.Dec()
		c.serve()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
}

// Close stops accepting, closes every connection and waits for their
// goroutines to finish.
func (s *Server) Close() error {
	s.mu.Lock()
	s.cancel()
	var err error
	for _, ln := range s.lns {
		if cerr := ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = fmt.Errorf("protocol: close listener: %w", cerr)
		}
	}
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.connWG.Wait()
	if s.groups != nil {
		if cerr := s.groups.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("protocol: close group coordinator: %w", cerr)
		}
	}
	return err
}
