package protocol

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/config"
	"github.com/sediment-io/sediment/storage/partition"
	// The table topics' configs (sediment.table.*) are registered by
	// package table.
	_ "github.com/sediment-io/sediment/table"
)

// configEntry is one described config, shared by DescribeConfigs and
// CreateTopics v5+.
type configEntry struct {
	def      config.Def
	value    string
	source   config.Source
	synonyms []configSynonym
}

type configSynonym struct {
	name, value string
	source      config.Source
}

// topicConfigEntries describes a topic's configs (all, or those named).
func topicConfigEntries(own, broker map[string]string, names []string) []configEntry {
	var out []configEntry
	for _, name := range config.TopicNames() {
		if names != nil && !slices.Contains(names, name) {
			continue
		}
		d, _ := config.TopicDef(name)
		e := configEntry{def: d}
		e.value, e.source = config.ResolveTopic(d, own, broker)
		if v, ok := own[name]; ok {
			e.synonyms = append(e.synonyms, configSynonym{name, v, config.SourceTopic})
		}
		if d.BrokerName == "" { // a topic-only config (sediment.table.*)
			e.synonyms = append(e.synonyms, configSynonym{name, d.Default, config.SourceDefault})
			out = append(out, e)
			continue
		}
		if v, ok := broker[d.BrokerName]; ok {
			e.synonyms = append(e.synonyms, configSynonym{d.BrokerName, v, config.SourceDynamicBroker})
		}
		bd, _ := config.BrokerDef(d.BrokerName)
		e.synonyms = append(e.synonyms, configSynonym{d.BrokerName, bd.Default, config.SourceDefault})
		out = append(out, e)
	}
	return out
}

// brokerConfigEntries describes the broker's configs (all, or those named).
func brokerConfigEntries(broker map[string]string, names []string, nodeID int32) []configEntry {
	var out []configEntry
	for _, name := range config.BrokerNames() {
		if names != nil && !slices.Contains(names, name) {
			continue
		}
		d, _ := config.BrokerDef(name)
		e := configEntry{def: d}
		e.value, e.source = config.ResolveBroker(d, broker)
		if v, ok := broker[name]; ok {
			e.synonyms = append(e.synonyms, configSynonym{name, v, config.SourceDynamicBroker})
		}
		e.synonyms = append(e.synonyms, configSynonym{name, d.Default, config.SourceDefault})
		out = append(out, e)
	}
	if names == nil || slices.Contains(names, "broker.id") {
		id := config.Def{Name: "broker.id", Type: config.Int, ReadOnly: true, Doc: "this broker's node id (--node-id)"}
		out = append(out, configEntry{def: id, value: strconv.Itoa(int(nodeID)), source: config.SourceStaticBroker})
	}
	return out
}

// checkBrokerResource accepts "" (cluster-wide default) or this node's id.
func (s *Server) checkBrokerResource(name string) error {
	if name == "" || name == strconv.Itoa(int(s.cfg.NodeID)) {
		return nil
	}
	return kerr.InvalidRequest // never a silent success for another broker
}

// alterResource applies edit to a topic's or the broker's configs and
// returns the Kafka error code and message.
func (r *request) alterResource(typ kmsg.ConfigResourceType, name string, edit partition.ConfigEdit, validateOnly bool) (int16, *string) {
	var err error
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		err = r.s.log.SetTopicConfigs(r.ctx(), name, edit, validateOnly)
	case kmsg.ConfigResourceTypeBroker:
		if err = r.s.checkBrokerResource(name); err == nil {
			err = r.s.log.BrokerConfig().Set(r.ctx(), config.Edit(edit), validateOnly)
		}
	default:
		err = fmt.Errorf("%w: resource type %d is not supported", kerr.InvalidRequest, typ)
	}
	if err != nil {
		return r.codeOf(err), errorMessage(err)
	}
	return 0, nil
}

// configDef returns the definition of a config of a resource type.
func configDef(typ kmsg.ConfigResourceType, name string) (config.Def, bool) {
	if typ == kmsg.ConfigResourceTypeTopic {
		return config.TopicDef(name)
	}
	return config.BrokerDef(name)
}

// applyIncremental applies one IncrementalAlterConfigs op to cfg.
func applyIncremental(cfg map[string]string, typ kmsg.ConfigResourceType, c kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	d, ok := configDef(typ, c.Name)
	if !ok {
		return fmt.Errorf("unknown config %s", c.Name)
	}
	value := ""
	if c.Value != nil {
		value = *c.Value
	}
	switch c.Op {
	case kmsg.IncrementalAlterConfigOpSet:
		cfg[c.Name] = value
	case kmsg.IncrementalAlterConfigOpDelete:
		delete(cfg, c.Name)
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		if d.Type != config.List {
			return fmt.Errorf("config %s is not a list: APPEND and SUBTRACT do not apply", c.Name)
		}
		cur, ok := cfg[c.Name]
		if !ok {
			cur = d.Default
		}
		cfg[c.Name] = editList(cur, value, c.Op == kmsg.IncrementalAlterConfigOpAppend)
	default:
		return fmt.Errorf("config %s: unknown operation %d", c.Name, c.Op)
	}
	return nil
}

func editList(cur, values string, add bool) string {
	items := splitList(cur)
	for _, v := range splitList(values) {
		i := slices.Index(items, v)
		switch {
		case add && i < 0:
			items = append(items, v)
		case !add && i >= 0:
			items = slices.Delete(items, i, i+1)
		}
	}
	return strings.Join(items, ",")
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
