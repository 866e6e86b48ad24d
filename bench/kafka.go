package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sediment-io/sediment/interop/jvm"
)

// KafkaLaunch is how `--launch kafka` starts the reference Apache Kafka
// broker: interop/jvm's single-node KRaft broker, in its default
// configuration unless Props say otherwise.
type KafkaLaunch struct {
	// Props are extra server.properties (--kafka-prop KEY=VALUE), e.g.
	// log.flush.interval.messages=1 to fsync every write as Sediment does.
	Props map[string]string
	// Parent is the directory the broker's temp dir (its config, logs and
	// data) is made in: the run's out dir. Empty: the system temp dir.
	Parent string
	// Warmup is how long the workload runs, unmeasured, before the first
	// round (--kafka-warmup, default 20s): the JVM's JIT warm-up.
	Warmup time.Duration
	// LogPath is where the broker's output is kept when it stops; empty:
	// it is removed with the rest.
	LogPath string
}

// ParseKafkaProp reads one --kafka-prop KEY=VALUE into props.
func ParseKafkaProp(props map[string]string, kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if k = strings.TrimSpace(k); !ok || k == "" {
		return fmt.Errorf("bench: --kafka-prop %q: want KEY=VALUE (a server.properties line)", kv)
	}
	props[k] = strings.TrimSpace(v)
	return nil
}

// kafkaTarget is a reference Apache Kafka broker run by the JVM. It has no
// Prometheus endpoint (its metrics are JMX), so its CPU and peak RSS are
// read from /proc and the object-store and fsync figures stay empty.
type kafkaTarget struct {
	k       *jvm.Kafka
	dir     string
	logPath string
}

func launchKafka(ctx context.Context, l KafkaLaunch) (Target, error) {
	cp, err := jvm.Classpath()
	if err != nil {
		return nil, fmt.Errorf("bench: launch kafka: %w", err)
	}
	if l.Parent != "" {
		if err := os.MkdirAll(l.Parent, 0o755); err != nil {
			return nil, fmt.Errorf("bench: launch kafka: %w", err)
		}
	}
	dir, err := os.MkdirTemp(l.Parent, "kafka-")
	if err != nil {
		return nil, fmt.Errorf("bench: launch kafka: %w", err)
	}
	// A loaded machine can take minutes to start a JVM broker; the bench
	// would rather wait than fail.
	k, err := jvm.StartKafka(ctx, cp, jvm.KafkaOptions{Dir: dir, Props: l.Props, StartTimeout: 5 * time.Minute})
	if err != nil {
		t := &kafkaTarget{dir: dir, logPath: l.LogPath}
		t.keepLog()
		os.RemoveAll(dir)
		if l.LogPath != "" {
			return nil, fmt.Errorf("bench: launch kafka (its output is kept in %s): %w", l.LogPath, err)
		}
		return nil, fmt.Errorf("bench: launch kafka: %w", err)
	}
	return &kafkaTarget{k: k, dir: dir, logPath: l.LogPath}, nil
}

func (t *kafkaTarget) Name() string      { return "kafka" }
func (t *kafkaTarget) Bootstrap() string { return t.k.Addr }

// Scrape reads the JVM's CPU time and peak RSS from /proc.
func (t *kafkaTarget) Scrape(context.Context) (Snapshot, bool, error) {
	pid := t.k.PID()
	cpu, err := processCPUSeconds(pid)
	if err != nil {
		return Snapshot{}, false, err
	}
	return Snapshot{At: time.Now(), CPUSeconds: cpu, PeakRSS: peakRSS(pid), ProcOnly: true}, true, nil
}

// Close stops the broker, keeps its output at LogPath and removes its
// directory (data included).
func (t *kafkaTarget) Close() error {
	err := t.k.Close()
	t.keepLog()
	if rmErr := os.RemoveAll(t.dir); rmErr != nil {
		err = errors.Join(err, fmt.Errorf("bench: remove %s: %w", filepath.Base(t.dir), rmErr))
	}
	return err
}

// keepLog moves the broker's output out of the directory about to be
// removed.
func (t *kafkaTarget) keepLog() {
	if t.logPath != "" {
		os.Rename(filepath.Join(t.dir, "kafka.log"), t.logPath)
	}
}
