package bench

import (
	"context"
	"fmt"
)

// warmUp runs the workload, live and unmeasured, for KafkaLaunch.Warmup on
// every launched Kafka before the first round: a fresh JVM spends its
// first tens of seconds interpreting and compiling Kafka's code, which a
// short round would measure instead of the broker. It returns a note for
// the report per target warmed up.
func warmUp(ctx context.Context, cfg Config, targets []Target) ([]string, error) {
	var notes []string
	for i, spec := range cfg.Targets {
		if spec.Kind != "kafka" || spec.Kafka.Warmup <= 0 {
			continue
		}
		w := *cfg.Workload
		w.Duration, w.Count, w.BacklogBytes, w.Warmup = spec.Kafka.Warmup, 0, 0, 0
		say(cfg.Progress, "warming up %s's JVM for %s (unmeasured)", spec.Label(), spec.Kafka.Warmup)
		r := &round{target: targets[i], w: &w, sample: cfg.SampleInterval, drain: cfg.DrainTimeout,
			progress: newProgress(nil), topics: topicNames(&w, "warmup", i, 0), label: "[warmup]"}
		rr, err := r.run(ctx)
		if err == nil {
			err = rr.err
		}
		if err != nil {
			return nil, fmt.Errorf("bench: %s warm-up: %w", spec.Label(), err)
		}
		notes = append(notes, fmt.Sprintf("%s ran the workload live for %s before its first round, unmeasured, to warm up its JVM (JIT); its peak RSS includes that warm-up",
			spec.Label(), spec.Kafka.Warmup))
	}
	return notes, nil
}
