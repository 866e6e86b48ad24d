package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"go.yaml.in/yaml/v3"
)

// Workload is one benchmark scenario, read from a YAML file in the spirit
// of the OpenMessaging Benchmark's workload files. Zero fields take the
// defaults named in their comments.
type Workload struct {
	Name        string `yaml:"name" json:"name"`               // default: the file's base name
	Description string `yaml:"description" json:"description"` // one line for the report

	Topics     int `yaml:"topics" json:"topics"`         // default 1
	Partitions int `yaml:"partitions" json:"partitions"` // per topic, default 1

	MessageSize int     `yaml:"message_size" json:"message_size"` // record value bytes, default 1024
	RandomShare float64 `yaml:"random_share" json:"random_share"` // share of random (incompressible) bytes in a value, 0..1; the rest is zeros
	Payload     string  `yaml:"payload" json:"payload"`           // binary (default) or json (one JSON object per record, for table topics)

	Producers    int           `yaml:"producers" json:"producers"`         // default 1
	Consumers    int           `yaml:"consumers" json:"consumers"`         // default 1; partitions are assigned to them directly, no group
	ProducerRate int           `yaml:"producer_rate" json:"producer_rate"` // records/s over all producers; 0 = as fast as acknowledged
	Duration     time.Duration `yaml:"duration" json:"duration_ns"`        // produce this long...
	Count        int64         `yaml:"count" json:"count"`                 // ...or this many records (the first reached ends the phase)
	Warmup       time.Duration `yaml:"warmup" json:"warmup_ns"`            // records sent before this are left out of latency and rate figures

	Acks        string        `yaml:"acks" json:"acks"`               // all (default), 1 or 0
	Linger      time.Duration `yaml:"linger" json:"linger_ns"`        // producer linger (linger.ms), default 0
	BatchSize   ByteSize      `yaml:"batch_size" json:"batch_size"`   // producer batch max bytes (batch.size), default 1 MiB
	Compression string        `yaml:"compression" json:"compression"` // none (default), gzip, snappy, lz4, zstd
	Partitioner string        `yaml:"partitioner" json:"partitioner"` // sticky (default), round-robin, random-key

	// BacklogBytes > 0 is the backlog mode: producers write this many
	// record bytes first with no consumer running, then the consumers
	// read them from the start (catch-up read) while nothing is produced.
	BacklogBytes ByteSize `yaml:"backlog_bytes" json:"backlog_bytes"`

	TopicConfig map[string]string `yaml:"topic_config" json:"topic_config,omitempty"`
	// OptionalTopicConfig names TopicConfig keys that a broker may not
	// know (sediment.table.enable on a broker without table topics): if
	// topic creation is refused, the topic is created without them and
	// the report says so.
	OptionalTopicConfig []string `yaml:"optional_topic_config" json:"optional_topic_config,omitempty"`

	// Transactions, when set, makes every producer transactional and
	// reads every partition with read_committed and with
	// read_uncommitted consumers (see TxnSpec).
	Transactions *TxnSpec `yaml:"transactions" json:"transactions,omitempty"`

	// BrokerFlags are `broker serve` flags every launched Sediment (one
	// broker or a cluster's) starts with, before those of the command
	// line: what the workload needs of the broker, such as a shorter
	// --upload-interval to compress an hour of uploads into minutes.
	BrokerFlags []string `yaml:"broker_flags" json:"broker_flags,omitempty"`
}

// ByteSize is a byte count written as 1048576, "1MiB" or "1 GB".
type ByteSize int64

// UnmarshalYAML reads a number or a humanized size.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	if err := b.parse(n.Value); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	return nil
}

func (b *ByteSize) parse(s string) error {
	v, err := humanize.ParseBytes(s)
	if err != nil {
		return fmt.Errorf("byte size %q: %w", s, err)
	}
	if v > 1<<50 {
		return fmt.Errorf("byte size %q: too large", s)
	}
	*b = ByteSize(v)
	return nil
}

// String formats b in binary units.
func (b ByteSize) String() string { return humanize.IBytes(uint64(b)) }

// LoadWorkload reads and validates a workload file. Unknown keys are an
// error, so that a typo never silently runs the default.
func LoadWorkload(path string) (*Workload, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: workload: %w", err)
	}
	w, err := ParseWorkload(raw)
	if err != nil {
		return nil, fmt.Errorf("bench: workload %s: %w", path, err)
	}
	if w.Name == "" {
		w.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return w, nil
}

// ParseWorkload decodes and validates a workload from YAML.
func ParseWorkload(raw []byte) (*Workload, error) {
	w := &Workload{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	// An empty file decodes to the defaults and then fails validation for
	// having no end.
	if err := dec.Decode(w); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	w.fillDefaults()
	return w, w.Validate()
}

func (w *Workload) fillDefaults() {
	setDefault(&w.Topics, 1)
	setDefault(&w.Partitions, 1)
	setDefault(&w.MessageSize, 1024)
	setDefault(&w.Producers, 1)
	setDefault(&w.Consumers, 1)
	setDefault(&w.BatchSize, 1<<20)
	setDefault(&w.Payload, "binary")
	setDefault(&w.Acks, "all")
	setDefault(&w.Compression, "none")
	setDefault(&w.Partitioner, "sticky")
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Validate rejects a workload that cannot run, naming the field.
func (w *Workload) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(w.Topics > 0 && w.Topics <= 10000, "topics: want 1..10000, got %d", w.Topics)
	check(w.Partitions > 0 && w.Partitions <= 100000, "partitions: want 1..100000, got %d", w.Partitions)
	check(w.MessageSize >= 16 && w.MessageSize <= 16<<20, "message_size: want 16 B..16 MiB, got %d", w.MessageSize)
	check(w.RandomShare >= 0 && w.RandomShare <= 1, "random_share: want 0..1, got %g", w.RandomShare)
	check(w.Payload == "binary" || w.Payload == "json", "payload: want binary or json, got %q", w.Payload)
	check(w.Payload != "json" || w.MessageSize >= 64, "message_size: a json payload needs at least 64 bytes, got %d", w.MessageSize)
	check(w.Producers > 0 && w.Producers <= 1000, "producers: want 1..1000, got %d", w.Producers)
	check(w.Consumers > 0 && w.Consumers <= 1000, "consumers: want 1..1000, got %d", w.Consumers)
	check(w.ProducerRate >= 0, "producer_rate: want >= 0 (0 = as fast as possible), got %d", w.ProducerRate)
	check(w.Duration >= 0 && w.Count >= 0 && w.BacklogBytes >= 0, "duration, count and backlog_bytes must not be negative")
	check(w.Duration > 0 || w.Count > 0 || w.BacklogBytes > 0, "give duration, count or backlog_bytes: a run needs an end")
	check(w.Warmup == 0 || (w.Warmup > 0 && w.Warmup < w.Duration), "warmup: want 0 <= warmup < duration, got %s with duration %s", w.Warmup, w.Duration)
	check(w.Acks == "all" || w.Acks == "1" || w.Acks == "0", "acks: want all, 1 or 0, got %q", w.Acks)
	check(w.Linger >= 0, "linger: must not be negative")
	check(w.BatchSize >= 1024 && w.BatchSize <= 64<<20, "batch_size: want 1 KiB..64 MiB, got %d", w.BatchSize)
	_, err := compressionCodec(w.Compression)
	check(err == nil, "compression: %v", err)
	check(validPartitioner(w.Partitioner), "partitioner: want sticky, round-robin or random-key, got %q", w.Partitioner)
	for _, f := range w.BrokerFlags {
		check(f != "", "broker_flags: an empty flag")
	}
	if len(w.BrokerFlags) > 0 {
		check(strings.HasPrefix(w.BrokerFlags[0], "-"), "broker_flags: want flags of broker serve, starting with one (--name), got %q", w.BrokerFlags[0])
	}
	if w.Transactions != nil {
		errs = append(errs, w.Transactions.validate(w)...)
	}
	for _, k := range w.OptionalTopicConfig {
		_, ok := w.TopicConfig[k]
		check(ok, "optional_topic_config: %q is not in topic_config", k)
	}
	return errors.Join(errs...)
}

func validPartitioner(p string) bool {
	return p == "sticky" || p == "round-robin" || p == "random-key"
}

// Overrides are the command-line values that replace a workload's own.
type Overrides struct {
	Duration     time.Duration // --duration
	Count        int64         // --count
	BacklogBytes ByteSize      // --backlog-bytes
	Partitions   int           // --partitions
	ProducerRate int           // --rate
}

// Apply returns a copy of w with the overrides set, validated. A duration
// or count override replaces both (the one given is the run's end).
func (o Overrides) Apply(w *Workload) (*Workload, error) {
	if o.Duration < 0 || o.Count < 0 || o.BacklogBytes < 0 || o.Partitions < 0 || o.ProducerRate < 0 {
		return nil, fmt.Errorf("bench: overrides must not be negative: %+v (duration, count, backlog, partitions, rate)", o)
	}
	c := *w
	if o.Duration > 0 || o.Count > 0 {
		c.Duration, c.Count = o.Duration, o.Count
		if c.Warmup >= c.Duration {
			c.Warmup = 0 // a warmup needs a longer duration to be part of
		}
	}
	if o.BacklogBytes > 0 {
		c.BacklogBytes = o.BacklogBytes
	}
	if o.Partitions > 0 {
		c.Partitions = o.Partitions
	}
	if o.ProducerRate > 0 {
		c.ProducerRate = o.ProducerRate
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("bench: workload %s with overrides: %w", c.Name, err)
	}
	return &c, nil
}
