package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// admin creates and deletes a round's topics with kadm, so it works on
// any Kafka-compatible broker.
type admin struct {
	cl  *kgo.Client
	adm *kadm.Client
}

func newAdmin(addr string) (*admin, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(addr)...))
	if err != nil {
		return nil, fmt.Errorf("bench: admin client: %w", err)
	}
	return &admin{cl: cl, adm: kadm.NewClient(cl)}, nil
}

func (a *admin) close() { a.cl.Close() }

// createTopics creates the topics with the workload's partitions and
// configs. When the broker refuses a config the workload marks optional,
// the topics are created without the optional configs and the note says
// which were dropped and why.
func (a *admin) createTopics(ctx context.Context, w *Workload, topics []string) (note string, err error) {
	err = a.create(ctx, w.Partitions, w.TopicConfig, topics)
	if err == nil || len(w.OptionalTopicConfig) == 0 {
		return "", err
	}
	required := map[string]string{}
	for k, v := range w.TopicConfig {
		if !slices.Contains(w.OptionalTopicConfig, k) {
			required[k] = v
		}
	}
	if err2 := a.create(ctx, w.Partitions, required, topics); err2 != nil {
		return "", fmt.Errorf("%w; and without %s: %w", err, strings.Join(w.OptionalTopicConfig, ", "), err2)
	}
	return fmt.Sprintf("the broker refused topic config %s (%v): topics created without it, so this run measures plain topics",
		strings.Join(w.OptionalTopicConfig, ", "), err), nil
}

func (a *admin) create(ctx context.Context, partitions int, configs map[string]string, topics []string) error {
	cfg := map[string]*string{}
	for k, v := range configs {
		cfg[k] = &v
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	resps, err := a.adm.CreateTopics(ctx, int32(partitions), 1, cfg, topics...)
	if err != nil {
		return fmt.Errorf("bench: create topics: %w", err)
	}
	var errs []error
	for _, r := range resps.Sorted() {
		if r.Err != nil {
			msg := r.Err.Error()
			if r.ErrMessage != "" {
				msg += ": " + r.ErrMessage
			}
			errs = append(errs, fmt.Errorf("bench: create topic %s: %s", r.Topic, msg))
		}
	}
	if len(errs) > 0 {
		// Topics that were created stay out of the way of a retry.
		a.deleteTopics(ctx, topics)
	}
	return errors.Join(errs...)
}

// deleteTopics removes a round's topics so that a long run (or an
// in-memory broker) does not keep every round's data.
func (a *admin) deleteTopics(ctx context.Context, topics []string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	resps, err := a.adm.DeleteTopics(ctx, topics...)
	if err != nil {
		return fmt.Errorf("bench: delete topics: %w", err)
	}
	return resps.Error()
}
