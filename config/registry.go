package config

import (
	"fmt"
	"maps"
	"slices"
)

// The registered definitions by name. Written only by the Register
// functions, which run from package init, and read-only after that.
var (
	topicDefs  = map[string]Def{}
	brokerDefs = map[string]Def{}
)

// RegisterTopic adds topic config definitions. Each domain calls it from
// its package's init; a name registered twice panics.
func RegisterTopic(defs ...Def) { register(topicDefs, "topic", defs) }

// RegisterBroker adds broker config definitions, as RegisterTopic.
func RegisterBroker(defs ...Def) { register(brokerDefs, "broker", defs) }

func register(into map[string]Def, kind string, defs []Def) {
	for _, d := range defs {
		if _, dup := into[d.Name]; dup {
			panic(fmt.Sprintf("config: %s config %s registered twice", kind, d.Name))
		}
		if err := d.Validate(d.Default); err != nil && d.Default != "" {
			panic(fmt.Sprintf("config: %s config %s: its default fails its own rules: %v", kind, d.Name, err))
		}
		into[d.Name] = d
	}
}

// TopicDef returns the definition of a topic config.
func TopicDef(name string) (Def, bool) {
	d, ok := topicDefs[name]
	return d, ok
}

// BrokerDef returns the definition of a broker config.
func BrokerDef(name string) (Def, bool) {
	d, ok := brokerDefs[name]
	return d, ok
}

// TopicNames returns every registered topic config name, sorted.
func TopicNames() []string { return slices.Sorted(maps.Keys(topicDefs)) }

// BrokerNames returns every registered broker config name, sorted.
func BrokerNames() []string { return slices.Sorted(maps.Keys(brokerDefs)) }

// ValidateTopic checks every name and value of a topic's configs; the
// error wraps ErrInvalid and names the first bad config.
func ValidateTopic(cfg map[string]string) error { return validate(topicDefs, cfg) }

// ValidateBroker checks dynamic broker configs as ValidateTopic.
func ValidateBroker(cfg map[string]string) error { return validate(brokerDefs, cfg) }

func validate(defs map[string]Def, cfg map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(cfg)) {
		d, ok := defs[name]
		if !ok {
			return fmt.Errorf("%w: unknown config %s", ErrInvalid, name)
		}
		if err := d.Validate(cfg[name]); err != nil {
			return err
		}
	}
	return nil
}

// ResolveTopic returns the effective value of a topic config: the topic's
// own setting, else the broker's dynamic default, else the built-in
// default (the broker config's, where there is one).
func ResolveTopic(d Def, own, broker map[string]string) (string, Source) {
	if v, ok := own[d.Name]; ok {
		return v, SourceTopic
	}
	if d.BrokerName == "" {
		return d.Default, SourceDefault
	}
	if v, ok := broker[d.BrokerName]; ok {
		return v, SourceDynamicBroker
	}
	if bd, ok := brokerDefs[d.BrokerName]; ok {
		return bd.Default, SourceDefault
	}
	return d.Default, SourceDefault
}

// ResolveBroker returns the effective value of a broker config.
func ResolveBroker(d Def, broker map[string]string) (string, Source) {
	if v, ok := broker[d.Name]; ok {
		return v, SourceDynamicBroker
	}
	return d.Default, SourceDefault
}
