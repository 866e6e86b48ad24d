package admin

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

func init() {
	register("topics", &commandSpec{
		name:     "topics create",
		synopsis: "topics create --topic T [--topic T ...] [--partitions N] [--replication-factor R] [--config K=V ...] [--if-not-exists]",
		about:    "Creates topics. Without --partitions or --replication-factor the broker's defaults apply.",
		examples: "  broker topics create --topic orders --partitions 12\n  broker topics create --topic audit --config retention.ms=604800000 --config cleanup.policy=compact",
		setup:    setupTopicsCreate,
	})
	register("topics", &commandSpec{
		name:     "topics delete",
		synopsis: "topics delete --topic T [--topic T ...] [--if-exists]",
		about:    "Deletes topics and all their records.",
		examples: "  broker topics delete --topic orders\n  broker topics delete --topic tmp-1 --topic tmp-2 --if-exists",
		setup:    setupTopicsDelete,
	})
	register("topics", &commandSpec{
		name:     "topics alter-config",
		synopsis: "topics alter-config --topic T [--topic T ...] [--set K=V ...] [--delete K ...] [--partitions N]",
		about: `Changes topic configs incrementally: --set sets a config, --delete returns it
to its default; configs not named keep their values. --partitions raises the
partition count to N (partitions are never removed).`,
		examples: "  broker topics alter-config --topic orders --set retention.ms=86400000\n  broker topics alter-config --topic orders --delete retention.ms --partitions 24",
		setup:    setupTopicsAlter,
	})
}

func setupTopicsCreate(fs *flagSet) action {
	var topics, configs stringList
	fs.Var(&topics, "topic", "`TOPIC` to create (repeatable)")
	fs.Var(&configs, "config", "topic config `K=V` (repeatable)")
	partitions := fs.Int("partitions", -1, "partition count `N` (-1: the broker's num.partitions)")
	rf := fs.Int("replication-factor", -1, "replication factor `R` (-1: the broker's default.replication.factor)")
	ifNotExists := fs.Bool("if-not-exists", false, "succeed when a topic already exists")
	return func(inv *invocation) error {
		kv, err := checkCreate(topics, *partitions, *rf, configs)
		if err != nil {
			return err
		}
		adm, err := inv.admin()
		if err != nil {
			return err
		}
		resps, err := adm.CreateTopics(inv.ctx, int32(*partitions), int16(*rf), kv, topics...)
		if err != nil {
			return inv.failed("create topics", err)
		}
		var failed []string
		for _, r := range resps.Sorted() {
			switch {
			case r.Err == nil:
				fmt.Fprintf(inv.stdout, "Created topic %s (%d partitions, replication factor %d).\n", r.Topic, r.NumPartitions, r.ReplicationFactor)
			case *ifNotExists && errors.Is(r.Err, kerr.TopicAlreadyExists):
				fmt.Fprintf(inv.stdout, "Topic %s already exists.\n", r.Topic)
			default:
				failed = append(failed, fmt.Sprintf("topic %s: %v", r.Topic, withMessage(r.Err, r.ErrMessage)))
			}
		}
		return joinFailures("topics", failed)
	}
}

// checkCreate validates the flags of topics create and returns its configs.
func checkCreate(topics []string, partitions, rf int, configs []string) (map[string]*string, error) {
	switch {
	case len(topics) == 0:
		return nil, usagef("--topic is required")
	case partitions == 0 || partitions < -1 || partitions > 1<<20:
		return nil, usagef("--partitions %d: want 1..1048576, or -1 for the broker's default", partitions)
	case rf == 0 || rf < -1 || rf > 1<<15-1:
		return nil, usagef("--replication-factor %d: want 1..32767, or -1 for the broker's default", rf)
	}
	return parseConfigs("--config", configs)
}

func setupTopicsDelete(fs *flagSet) action {
	var topics stringList
	fs.Var(&topics, "topic", "`TOPIC` to delete (repeatable)")
	ifExists := fs.Bool("if-exists", false, "succeed when a topic does not exist")
	return func(inv *invocation) error {
		if len(topics) == 0 {
			return usagef("--topic is required")
		}
		adm, err := inv.admin()
		if err != nil {
			return err
		}
		resps, err := adm.DeleteTopics(inv.ctx, topics...)
		if err != nil {
			return inv.failed("delete topics", err)
		}
		var failed []string
		for _, r := range resps.Sorted() {
			switch {
			case r.Err == nil:
				fmt.Fprintf(inv.stdout, "Deleted topic %s.\n", r.Topic)
			case *ifExists && errors.Is(r.Err, kerr.UnknownTopicOrPartition):
				fmt.Fprintf(inv.stdout, "Topic %s does not exist.\n", r.Topic)
			default:
				failed = append(failed, fmt.Sprintf("topic %s: %v", r.Topic, withMessage(r.Err, r.ErrMessage)))
			}
		}
		return joinFailures("topics", failed)
	}
}

func setupTopicsAlter(fs *flagSet) action {
	var topics, sets, deletes stringList
	fs.Var(&topics, "topic", "`TOPIC` to change (repeatable)")
	fs.Var(&sets, "set", "set config `K=V` (repeatable)")
	fs.Var(&deletes, "delete", "return config `K` to its default (repeatable)")
	partitions := fs.Int("partitions", 0, "raise the partition count to `N`")
	return func(inv *invocation) error {
		if len(topics) == 0 {
			return usagef("--topic is required")
		}
		if len(sets) == 0 && len(deletes) == 0 && *partitions == 0 {
			return usagef("nothing to change: give --set, --delete or --partitions")
		}
		if *partitions < 0 || *partitions > 1<<20 {
			return usagef("--partitions %d: want 1..1048576", *partitions)
		}
		alters, err := configAlters(sets, deletes)
		if err != nil {
			return err
		}
		if err := inv.alterConfigs(topics, alters); err != nil {
			return err
		}
		if *partitions > 0 {
			return inv.raisePartitions(topics, *partitions)
		}
		return nil
	}
}

// configAlters turns --set and --delete into incremental alterations.
func configAlters(sets, deletes []string) ([]kadm.AlterConfig, error) {
	kv, err := parseConfigs("--set", sets)
	if err != nil {
		return nil, err
	}
	var alters []kadm.AlterConfig
	for _, k := range sortedKeys(kv) {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kv[k]})
	}
	for _, k := range deletes {
		if _, both := kv[k]; both {
			return nil, usagef("--set and --delete both name %s", k)
		}
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	return alters, nil
}

func (inv *invocation) alterConfigs(topics []string, alters []kadm.AlterConfig) error {
	if len(alters) == 0 {
		return nil
	}
	adm, err := inv.admin()
	if err != nil {
		return err
	}
	resps, err := adm.AlterTopicConfigs(inv.ctx, alters, topics...)
	if err != nil {
		return inv.failed("alter topic configs", err)
	}
	sort.Slice(resps, func(i, j int) bool { return resps[i].Name < resps[j].Name })
	var failed []string
	for _, r := range resps {
		if r.Err != nil {
			failed = append(failed, fmt.Sprintf("topic %s: %v", r.Name, withMessage(r.Err, r.ErrMessage)))
			continue
		}
		fmt.Fprintf(inv.stdout, "Altered configs of topic %s: %s.\n", r.Name, describeAlters(alters))
	}
	return joinFailures("topics", failed)
}

func (inv *invocation) raisePartitions(topics []string, n int) error {
	adm, err := inv.admin()
	if err != nil {
		return err
	}
	resps, err := adm.UpdatePartitions(inv.ctx, n, topics...)
	if err != nil {
		return inv.failed("create partitions", err)
	}
	var failed []string
	for _, r := range resps.Sorted() {
		if r.Err != nil {
			failed = append(failed, fmt.Sprintf("topic %s: %v", r.Topic, withMessage(r.Err, r.ErrMessage)))
			continue
		}
		fmt.Fprintf(inv.stdout, "Topic %s now has %d partitions.\n", r.Topic, n)
	}
	return joinFailures("topics", failed)
}

func describeAlters(alters []kadm.AlterConfig) string {
	parts := make([]string, len(alters))
	for i, a := range alters {
		if a.Op == kadm.DeleteConfig {
			parts[i] = "deleted " + a.Name
		} else {
			parts[i] = "set " + a.Name + "=" + *a.Value
		}
	}
	return strings.Join(parts, ", ")
}

// parseConfigs parses K=V pairs given to flag.
func parseConfigs(flag string, pairs []string) (map[string]*string, error) {
	kv := map[string]*string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			return nil, usagef("%s %q: want NAME=VALUE", flag, p)
		}
		if _, dup := kv[k]; dup {
			return nil, usagef("%s names %s twice", flag, k)
		}
		kv[k] = &v
	}
	return kv, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// withMessage adds the broker's error message to err when it says more.
func withMessage(err error, msg string) error {
	if msg == "" || strings.Contains(err.Error(), msg) {
		return err
	}
	return fmt.Errorf("%w (%s)", err, msg)
}

// joinFailures is nil without failures, else one error: the single
// failure, or how many of what failed and the list, one per line.
func joinFailures(what string, failed []string) error {
	switch len(failed) {
	case 0:
		return nil
	case 1:
		return errors.New(failed[0])
	}
	return fmt.Errorf("%d %s failed:\n  %s", len(failed), what, strings.Join(failed, "\n  "))
}

// joinErrors is joinFailures of errors.
func joinErrors(what string, errs []error) error {
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return joinFailures(what, msgs)
}
