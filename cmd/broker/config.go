package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sediment-io/sediment/metadata/etcdkv"
	"github.com/sediment-io/sediment/storage/objectstore/storeurl"
	"github.com/sediment-io/sediment/storage/partition"
)

// serveConfig is every option of `broker serve`. Each is a flag, an
// environment variable SEDIMENT_<FLAG> (upper case, dashes as underscores)
// and a line `flag = value` in the --config file; a flag beats the
// environment, which beats the file.
type serveConfig struct {
	Listen          string        // --listen: Kafka listener (default 127.0.0.1:9092)
	Advertise       string        // --advertise: address given to clients (default: --listen)
	DataDir         string        // --data-dir: WAL, metadata and local bucket (default ./data)
	ObjectStore     string        // --object-store: file://DIR (default DATA/objects)
	Metadata        string        // --metadata: bbolt (default, DATA/meta.db) or etcd://HOST:PORT[,HOST:PORT]/PREFIX
	etcd            etcdkv.Config // --metadata parsed, when it is an etcd URL
	NodeID          int           // --node-id (default 0)
	Rack            string        // --rack: this broker's rack (zone), for rack-aware clients
	SessionTimeout  time.Duration // --session-timeout: the etcd session lease of a cluster broker (default 10s)
	EtcdCompaction  time.Duration // --etcd-compaction-interval: how much MVCC history etcd keeps (default 5m)
	SharedLocal     bool          // --shared-local-store: a file:// bucket that every broker of the cluster shares (one machine)
	HTTPListen      string        // --http-listen: /metrics, /healthz, /readyz (default 127.0.0.1:9644)
	Durability      string        // --durability: wal or object (default wal with bbolt, object with etcd)
	UploadInterval  time.Duration // --upload-interval (default 250ms)
	UploadBytes     int64         // --upload-bytes (default 8 MiB)
	UploadConc      int           // --upload-concurrency: object PUTs in flight; commits stay in order (default 4)
	Timeouts        timeouts      // --flush-timeout, --block-load-timeout, --stream-stall-timeout, --stream-idle-timeout
	MaxRequestBytes int64         // --max-request-bytes (default 100 MiB; Kafka's socket.request.max.bytes)
	MaxInflight     int64         // --max-inflight-request-bytes (default 32 MiB; Kafka's queued.max.request.bytes)
	TailCacheBytes  int64         // --tail-cache-bytes: recent batches in memory (default 64 MiB)
	BlockCacheBytes int64         // --block-cache-bytes: object blocks in memory (default 64 MiB)
	WALSegmentBytes int64         // --wal-segment-bytes (default 64 MiB)
	MemoryLimit     int64         // --memory-limit: Go soft memory limit; 0 = caches + 96 MiB, -1 = none
	WALMaxBytes     int64         // --wal-max-bytes: WAL backlog before produce is refused (default 1 GiB)
	WALRepair       bool          // --wal-repair: start on a WAL corrupt in the middle by dropping what follows (default false)
	CompactTarget   int64         // --compact-target-bytes: compacted object size (default 64 MiB)
	CompactRate     int64         // --compaction-bytes-per-sec: average rate compaction writes at (default 8 MiB/s)
	IndexFoldKeys   int           // --index-fold-keys: a partition's unfolded index entries before a fold into a manifest (default 64)
	MaintainEvery   time.Duration // --maintain-interval: retention/compaction/GC cadence (default 30s)
	GCGrace         time.Duration // --object-gc-grace: unreferenced objects stay readable this long (default 1m)
	OrphanGrace     time.Duration // --orphan-grace: age before an uncommitted object is deleted (default 1h)
	TableCatalog    string        // --table-catalog: Iceberg catalog of table topics (default "": embedded SQLite, DATA/iceberg/catalog.db)
	TableOrphans    time.Duration // --table-orphan-grace: age before an uncommitted Parquet file is deleted (default 1h)
	FailedExitDelay time.Duration // --storage-failed-exit-delay: refuse writes this long before exiting (default 5s)
	LogLevel        string        // --log-level: debug, info, warn, error (default info)
	LogFormat       string        // --log-format: text or json (default text)
	ConfigFile      string        // --config FILE
}

func (c *serveConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:9092", "Kafka listener address")
	fs.StringVar(&c.Advertise, "advertise", "", "address given to clients in Metadata (default: --listen)")
	fs.StringVar(&c.DataDir, "data-dir", "./data", "directory for the WAL (DATA/wal), metadata (DATA/meta.db) and the local bucket (DATA/objects)")
	fs.StringVar(&c.ObjectStore, "object-store", "", "object store URL: file://DIR (default file://DATA/objects), s3://BUCKET/PREFIX?endpoint=http://HOST:9000&region=us-east-1&path_style=true (S3 or compatible) or minio://HOST:9000/BUCKET/PREFIX?secure=false; credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN or AWS_PROFILE, region from region= or AWS_REGION")
	fs.StringVar(&c.Metadata, "metadata", "bbolt", "metadata backend: bbolt (DATA/meta.db) or etcd://HOST:PORT[,HOST:PORT]/PREFIX[?cacert=FILE&cert=FILE&key=FILE] (every key under PREFIX; TLS from the files; etcd auth from ETCD_USERNAME/ETCD_PASSWORD)")
	fs.IntVar(&c.NodeID, "node-id", 0, "this broker's node id (unique in a cluster)")
	fs.StringVar(&c.Rack, "rack", "", "this broker's rack or zone, given to clients in Metadata (broker.rack)")
	fs.DurationVar(&c.SessionTimeout, "session-timeout", 10*time.Second, "with --metadata etcd: the lease of this broker's session; a broker silent this long loses its partitions to the others, and stops serving them itself a little before")
	fs.DurationVar(&c.EtcdCompaction, "etcd-compaction-interval", 5*time.Minute, "with --metadata etcd: compact etcd's history of revisions this often, keeping one interval of it (etcd keeps every revision otherwise)")
	fs.BoolVar(&c.SharedLocal, "shared-local-store", false, "with --metadata etcd and a file:// --object-store: every broker of the cluster runs on this machine and uses this same folder (tests, demos)")
	fs.StringVar(&c.HTTPListen, "http-listen", "127.0.0.1:9644", "HTTP address for /metrics, /healthz and /readyz (empty: off)")
	fs.StringVar(&c.Durability, "durability", "", "when produce is acknowledged: wal (after the WAL fsync; the default with bbolt) or object (after the object PUT and metadata commit; the default with etcd, where wal is replication factor 1)")
	fs.DurationVar(&c.UploadInterval, "upload-interval", 250*time.Millisecond, "cut an object at least this often")
	fs.Int64Var(&c.UploadBytes, "upload-bytes", 8<<20, "cut an object once this many bytes wait")
	fs.IntVar(&c.UploadConc, "upload-concurrency", 4, "objects PUT at once (1..64); their commits still apply in upload order")
	c.Timeouts.flags(fs)
	fs.Int64Var(&c.MaxRequestBytes, "max-request-bytes", 100<<20, "largest request frame accepted (socket.request.max.bytes)")
	fs.Int64Var(&c.MaxInflight, "max-inflight-request-bytes", 32<<20, "request bytes held at once over all connections, from reading to answering; more waits unread (queued.max.request.bytes)")
	fs.Int64Var(&c.TailCacheBytes, "tail-cache-bytes", 64<<20, "memory for recent batches")
	fs.Int64Var(&c.BlockCacheBytes, "block-cache-bytes", 64<<20, "memory for cached object-store blocks; readers of compacted segments stream through up to 9/8 as much again, which the cache uses while they do not")
	fs.Int64Var(&c.WALSegmentBytes, "wal-segment-bytes", 64<<20, "WAL segment size")
	fs.Int64Var(&c.WALMaxBytes, "wal-max-bytes", 1<<30, "WAL bytes waiting for upload before produce gets a retriable error (back-pressure)")
	fs.BoolVar(&c.WALRepair, "wal-repair", false, "start even if the WAL is corrupt before its last intact flush, by dropping everything from the damage on; the files, offsets, partitions and offset ranges dropped are logged (acknowledged records are lost: for an operator who chose that)")
	fs.Int64Var(&c.CompactTarget, "compact-target-bytes", 64<<20, "size of the per-partition objects compaction writes")
	fs.Int64Var(&c.CompactRate, "compaction-bytes-per-sec", partition.DefaultCompactBytesPerSec, "average bytes per second compaction writes, shared fairly by the partitions (one object may overshoot a pass; the next pass pays it back)")
	fs.IntVar(&c.IndexFoldKeys, "index-fold-keys", partition.DefaultIndexFoldKeys, "index entries of uploads a partition keeps in metadata before its maintenance folds the oldest run of them into a manifest object in the bucket (bounds the index keys per partition, etcd's above all)")
	fs.DurationVar(&c.MaintainEvery, "maintain-interval", 30*time.Second, "how often retention, compaction and object garbage collection run")
	fs.DurationVar(&c.GCGrace, "object-gc-grace", time.Minute, "how long an object no segment references stays readable before deletion")
	fs.DurationVar(&c.OrphanGrace, "orphan-grace", time.Hour, "age after which an object metadata never committed is deleted")
	fs.StringVar(&c.TableCatalog, "table-catalog", "", `Iceberg catalog of table topics (sediment.table.enable=true): "" or sqlite (embedded, DATA/iceberg/catalog.db), sqlite:///PATH.db, postgres://USER:PASSWORD@HOST:PORT/DB or rest+http(s)://HOST:PORT/PREFIX?warehouse=W&credential=ID:SECRET; the tables live in the object store under tables/`)
	fs.DurationVar(&c.TableOrphans, "table-orphan-grace", time.Hour, "age after which a table's Parquet file that no snapshot references (a commit that never landed) is deleted when its converter starts")
	fs.DurationVar(&c.FailedExitDelay, "storage-failed-exit-delay", 5*time.Second, "after a WAL write or fsync, or a metadata commit, failed: how long the broker keeps its listeners, refusing produce (KAFKA_STORAGE_ERROR) with /readyz 503 and sediment_storage_failed 1, before it exits non-zero for its supervisor to restart it")
	fs.Int64Var(&c.MemoryLimit, "memory-limit", 0, "soft memory limit for the Go runtime in bytes (GOMEMLIMIT); 0: the two caches plus 96 MiB; -1: none")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.ConfigFile, "config", "", "optional file of `flag = value` lines")
}

// parseServe fills a config from args, the environment and the config file.
func parseServe(args []string, env func(string) string) (*serveConfig, error) {
	c := &serveConfig{}
	fs := flag.NewFlagSet("broker serve", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	c.flags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := applyEnv(fs, set, env); err != nil {
		return nil, err
	}
	if c.ConfigFile != "" {
		if err := applyFile(fs, set, c.ConfigFile); err != nil {
			return nil, err
		}
	}
	return c, c.validate()
}

// applyEnv sets every flag not given on the command line from SEDIMENT_<FLAG>.
func applyEnv(fs *flag.FlagSet, set map[string]bool, env func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := "SEDIMENT_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := env(name); v != "" && !set[f.Name] && err == nil {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("environment %s=%q: %v", name, v, serr)
			}
			set[f.Name] = true
		}
	})
	return err
}

// applyFile sets flags not given otherwise from `name = value` lines.
func applyFile(fs *flag.FlagSet, set map[string]bool, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, value, ok := strings.Cut(text, "=")
		name, value = strings.TrimSpace(name), strings.Trim(strings.TrimSpace(value), `"`)
		if !ok || fs.Lookup(name) == nil || name == "config" {
			return fmt.Errorf("--config %s:%d: want `flag = value` with a known flag, got %q", path, line, text)
		}
		if set[name] {
			continue
		}
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("--config %s:%d: --%s: %v", path, line, name, err)
		}
	}
	return sc.Err()
}

// validate rejects nonsense with a message that names the flag, and fills
// the defaults that depend on other flags.
func (c *serveConfig) validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	_, _, err := net.SplitHostPort(c.Listen)
	check(err == nil, "--listen %q: want HOST:PORT", c.Listen)
	if c.Advertise == "" {
		c.Advertise = c.Listen
	}
	_, port, err := net.SplitHostPort(c.Advertise)
	_, perr := strconv.Atoi(port)
	check(err == nil && perr == nil, "--advertise %q: want HOST:PORT", c.Advertise)
	check(c.DataDir != "", "--data-dir must not be empty")
	check(c.NodeID >= 0 && c.NodeID <= 1<<31-1, "--node-id %d: want 0..2147483647", c.NodeID)
	if c.Durability == "" {
		c.Durability = "wal"
		if c.Metadata != "bbolt" {
			c.Durability = "object"
		}
	}
	check(c.Durability == "wal" || c.Durability == "object", "--durability %q: want wal or object", c.Durability)
	check(c.EtcdCompaction >= time.Second, "--etcd-compaction-interval %s: want at least 1s", c.EtcdCompaction)
	check(c.SessionTimeout >= time.Second && c.SessionTimeout <= 5*time.Minute, "--session-timeout %s: want 1s..5m", c.SessionTimeout)
	check(c.UploadInterval >= time.Millisecond && c.UploadInterval <= time.Hour, "--upload-interval %s: want 1ms..1h", c.UploadInterval)
	check(c.UploadBytes >= 1<<10 && c.UploadBytes <= 1<<30, "--upload-bytes %d: want 1 KiB..1 GiB", c.UploadBytes)
	check(c.UploadConc >= 1 && c.UploadConc <= 64, "--upload-concurrency %d: want 1..64", c.UploadConc)
	errs = append(errs, c.Timeouts.validate()...)
	check(c.MaxRequestBytes >= 1<<10 && c.MaxRequestBytes <= 1<<31-1, "--max-request-bytes %d: want 1 KiB..2 GiB", c.MaxRequestBytes)
	check(c.MaxInflight >= 1<<20, "--max-inflight-request-bytes %d: want at least 1 MiB", c.MaxInflight)
	check(c.TailCacheBytes >= 1<<20, "--tail-cache-bytes %d: want at least 1 MiB", c.TailCacheBytes)
	check(c.BlockCacheBytes >= 1<<20, "--block-cache-bytes %d: want at least 1 MiB", c.BlockCacheBytes)
	check(c.WALSegmentBytes >= 1<<20 && c.WALSegmentBytes <= 1<<32, "--wal-segment-bytes %d: want 1 MiB..4 GiB", c.WALSegmentBytes)
	check(c.WALMaxBytes >= 1<<20, "--wal-max-bytes %d: want at least 1 MiB", c.WALMaxBytes)
	check(c.CompactTarget >= 1<<20 && c.CompactTarget <= 1<<30, "--compact-target-bytes %d: want 1 MiB..1 GiB", c.CompactTarget)
	check(c.CompactRate >= 1<<10 && c.CompactRate <= 1<<40, "--compaction-bytes-per-sec %d: want 1 KiB..1 TiB", c.CompactRate)
	check(c.IndexFoldKeys >= 8 && c.IndexFoldKeys <= 1<<20, "--index-fold-keys %d: want 8..1048576", c.IndexFoldKeys)
	check(c.MaintainEvery >= 10*time.Millisecond, "--maintain-interval %s: want at least 10ms", c.MaintainEvery)
	check(c.GCGrace > 0, "--object-gc-grace %s: must be positive", c.GCGrace)
	check(c.OrphanGrace >= time.Minute, "--orphan-grace %s: want at least 1m (uploads in flight must never look orphaned)", c.OrphanGrace)
	check(c.TableOrphans > 0, "--table-orphan-grace %s: must be positive", c.TableOrphans)
	check(c.FailedExitDelay >= 0 && c.FailedExitDelay <= 10*time.Minute, "--storage-failed-exit-delay %s: want 0..10m", c.FailedExitDelay)
	check(c.MemoryLimit >= -1, "--memory-limit %d: want -1 (none), 0 (automatic) or a byte count", c.MemoryLimit)
	if c.Metadata != "bbolt" {
		var err error
		if c.etcd, err = etcdkv.ParseURL(c.Metadata); err != nil {
			errs = append(errs, fmt.Errorf("--metadata: want bbolt or an etcd URL: %w", err))
		}
	}
	if c.ObjectStore == "" {
		c.ObjectStore = "file://" + filepath.Join(c.DataDir, "objects")
	}
	if err := storeurl.Validate(c.ObjectStore); err != nil {
		errs = append(errs, fmt.Errorf("--object-store %v", err))
	}
	check(c.Metadata == "bbolt" || c.SharedLocal || !strings.HasPrefix(c.ObjectStore, "file://"),
		"--object-store %s with --metadata etcd: a cluster's brokers must share one bucket, and a local folder is not shared between machines; use s3:// or minio:// (or --shared-local-store when every broker runs on this machine)", c.ObjectStore)
	_, lerr := parseLevel(c.LogLevel)
	check(lerr == nil, "--log-level %q: want debug, info, warn or error", c.LogLevel)
	check(c.LogFormat == "text" || c.LogFormat == "json", "--log-format %q: want text or json", c.LogFormat)
	return errors.Join(errs...)
}

// timeouts are the storage path's deadlines, each a flag.
type timeouts struct {
	Flush       time.Duration // --flush-timeout: the final upload on shutdown (default 30s)
	BlockLoad   time.Duration // --block-load-timeout: one block GET of the read cache (default 30s)
	StreamStall time.Duration // --stream-stall-timeout: a compacted-segment stream sending nothing (default 30s)
	StreamIdle  time.Duration // --stream-idle-timeout: an unused stream stays open (default 30s)
}

func (t *timeouts) flags(fs *flag.FlagSet) {
	fs.DurationVar(&t.Flush, "flush-timeout", 30*time.Second, "how long shutdown waits for the final upload of what is pending")
	fs.DurationVar(&t.BlockLoad, "block-load-timeout", 30*time.Second, "deadline of one block GET of the object read cache (the store retries within it)")
	fs.DurationVar(&t.StreamStall, "stream-stall-timeout", 30*time.Second, "abandon a stream of a compacted segment whose store sent nothing for this long (reads fall back to the block cache)")
	fs.DurationVar(&t.StreamIdle, "stream-idle-timeout", 30*time.Second, "close a stream of a compacted segment no reader used for this long")
}

// validate names each flag whose value is out of range.
func (t *timeouts) validate() []error {
	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--flush-timeout", t.Flush}, {"--block-load-timeout", t.BlockLoad},
		{"--stream-stall-timeout", t.StreamStall}, {"--stream-idle-timeout", t.StreamIdle}} {
		if d.v < 100*time.Millisecond || d.v > time.Hour {
			errs = append(errs, fmt.Errorf("%s %s: want 100ms..1h", d.name, d.v))
		}
	}
	return errs
}
