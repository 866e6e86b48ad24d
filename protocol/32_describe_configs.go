package protocol

// DescribeConfigs v0–v4 for topics and the broker. Each config reports its
// effective value and source: set on the topic (DYNAMIC_TOPIC_CONFIG), a
// dynamic broker default (DYNAMIC_DEFAULT_BROKER_CONFIG) or the built-in
// default (DEFAULT_CONFIG); synonyms (v1+) list that chain in precedence
// order, and v3+ adds the type and documentation. The broker resource
// answers to "" and to this node's id. BROKER_LOGGER is not supported.

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/config"
)

func init() { register(kmsg.DescribeConfigs, 0, 4, handleDescribeConfigs) }

func handleDescribeConfigs(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range req.Resources {
		resp.Resources = append(resp.Resources, r.describeResource(req, rr))
	}
	return resp, nil
}

func (r *request) describeResource(req *kmsg.DescribeConfigsRequest, rr kmsg.DescribeConfigsRequestResource) kmsg.DescribeConfigsResponseResource {
	res := kmsg.NewDescribeConfigsResponseResource()
	res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
	var entries []configEntry
	switch rr.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		t, ok := r.s.log.Topic(rr.ResourceName)
		if !ok {
			res.ErrorCode = r.code(kerr.UnknownTopicOrPartition.Code)
			return res
		}
		entries = topicConfigEntries(t.Configs(), r.s.log.BrokerConfig().Map(), rr.ConfigNames)
		entries = append(entries, r.s.tableStatusEntries(rr.ResourceName, rr.ConfigNames)...)
	case kmsg.ConfigResourceTypeBroker:
		if err := r.s.checkBrokerResource(rr.ResourceName); err != nil {
			res.ErrorCode = r.code(kerr.InvalidRequest.Code)
			res.ErrorMessage = errorMessage(fmt.Errorf("broker %q is not this broker (node %d)", rr.ResourceName, r.s.cfg.NodeID))
			return res
		}
		entries = brokerConfigEntries(r.s.log.BrokerConfig().Map(), rr.ConfigNames, r.s.cfg.NodeID)
	default:
		res.ErrorCode = r.code(kerr.InvalidRequest.Code)
		res.ErrorMessage = errorMessage(fmt.Errorf("resource type %d is not supported", rr.ResourceType))
		return res
	}
	for _, e := range entries {
		res.Configs = append(res.Configs, describeEntry(req, e))
	}
	return res
}

// tableStatusEntries are a table topic's read-only
// sediment.table.status.* entries (lag, last commit, rows, files, DLQ
// count, state), reported as dynamic topic configs.
func (s *Server) tableStatusEntries(topic string, names []string) []configEntry {
	if s.cfg.TableStatus == nil {
		return nil
	}
	var out []configEntry
	for _, kv := range s.cfg.TableStatus(topic, names) {
		if names != nil && !slices.Contains(names, kv[0]) {
			continue
		}
		def := config.Def{Name: kv[0], Type: config.String, ReadOnly: true, Doc: "table topic status (read-only)"}
		out = append(out, configEntry{def: def, value: kv[1], source: config.SourceTopic})
	}
	return out
}

func describeEntry(req *kmsg.DescribeConfigsRequest, e configEntry) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	value := e.value
	c.Name, c.Value, c.ReadOnly = e.def.Name, &value, e.def.ReadOnly
	c.IsDefault = e.source == 5
	c.Source = kmsg.ConfigSource(e.source)
	c.ConfigType = kmsg.ConfigType(e.def.Type)
	if req.IncludeDocumentation {
		doc := e.def.Doc
		c.Documentation = &doc
	}
	if req.IncludeSynonyms {
		for _, s := range e.synonyms {
			syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			v := s.value
			syn.Name, syn.Value, syn.Source = s.name, &v, kmsg.ConfigSource(s.source)
			c.ConfigSynonyms = append(c.ConfigSynonyms, syn)
		}
	}
	return c
}
