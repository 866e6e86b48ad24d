// Package config holds the definitions of Kafka-style topic and broker
// configs (retention.ms, group.max.size, sediment.table.*, ...): their
// types, defaults, bounds and documentation, the rules that resolve an
// effective value (topic setting, else dynamic broker default, else
// built-in default), typed accessors over the result, and Dynamic, the one
// owner of the broker's dynamic configs.
//
// Each domain registers its own definitions from its package's init, the
// way protocol's API files register their API keys: storage/partition the
// log's, groupcoord the group coordinator's, table the table topics'. This
// package knows none of them by name and imports nothing of Sediment's; it
// never parses a domain's syntax (a Def's Check does that).
//
// Command-line flags are not configs in this sense: they are cmd/broker's.
package config
