package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrInvalid marks an unknown config name or a value its Def rejects.
var ErrInvalid = errors.New("invalid config")

// Type is a config's value type as DescribeConfigs v3+ reports it.
type Type int8

// Config types, numbered as Kafka's DescribeConfigs ConfigType.
const (
	Boolean  Type = 1
	String   Type = 2
	Int      Type = 3
	Short    Type = 4
	Long     Type = 5
	Double   Type = 6
	List     Type = 7
	Password Type = 9
)

// Source says where an effective value came from, numbered as Kafka's
// DescribeConfigs ConfigSource.
type Source int8

// Config sources.
const (
	SourceTopic         Source = 1 // DYNAMIC_TOPIC_CONFIG
	SourceDynamicBroker Source = 3 // DYNAMIC_DEFAULT_BROKER_CONFIG
	SourceStaticBroker  Source = 4 // STATIC_BROKER_CONFIG: set at start-up
	SourceDefault       Source = 5 // DEFAULT_CONFIG
)

// Def describes one topic or broker config.
type Def struct {
	Name    string
	Type    Type
	Default string
	// BrokerName is, for a topic config, the broker config that supplies
	// its default (log.retention.ms for retention.ms).
	BrokerName string
	// Min bounds numeric values from below.
	Min int64
	// Enum lists the allowed values of a string or list config (nil: any).
	Enum []string
	// ReadOnly marks broker configs that cannot be altered at runtime.
	ReadOnly bool
	// Check, when set, validates what the type and Enum cannot (the syntax
	// of sediment.table.partition-by, ...).
	Check func(value string) error
	// Doc says what Sediment does with the value.
	Doc string
}

// Validate checks value against the definition. The error wraps ErrInvalid
// and names the config.
func (d Def) Validate(value string) error {
	if err := d.validate(value); err != nil {
		return fmt.Errorf("%w: config %s: %v", ErrInvalid, d.Name, err)
	}
	return nil
}

func (d Def) validate(value string) error {
	switch d.Type {
	case Boolean:
		if value != "true" && value != "false" {
			return fmt.Errorf("%q is not true or false", value)
		}
	case Int, Long, Short:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", value)
		}
		if n < d.Min {
			return fmt.Errorf("%d is below the minimum %d", n, d.Min)
		}
		if d.Type == Int && n > 1<<31-1 {
			return fmt.Errorf("%d does not fit in an int", n)
		}
		if d.Type == Short && n > 1<<15-1 {
			return fmt.Errorf("%d does not fit in a short", n)
		}
	case Double:
		if _, err := strconv.ParseFloat(value, 64); err != nil {
			return fmt.Errorf("%q is not a number", value)
		}
	}
	if d.Enum != nil {
		for _, v := range strings.Split(value, ",") {
			if !slices.Contains(d.Enum, strings.TrimSpace(v)) {
				return fmt.Errorf("%q is not one of %s", value, strings.Join(d.Enum, ", "))
			}
		}
	}
	if d.Check != nil {
		return d.Check(value)
	}
	return nil
}
