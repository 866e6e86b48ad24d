package table

import (
	"strconv"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// Config is a table topic's effective sediment.table.* configuration.
type Config struct {
	Enable         bool
	Format         string // json | raw
	Schema         string // Iceberg schema JSON; "" infers and evolves
	PartitionBy    string
	CommitInterval time.Duration
	CommitBytes    int64
	Errors         string // dlq | skip | stop
}

// ConfigOf resolves a topic's own configs against the defaults; the values
// were validated when they were set (metadata.TopicConfigDefs).
func ConfigOf(own map[string]string) Config {
	get := func(name string) string {
		v, _ := metadata.ResolveTopicConfig(metadata.TopicConfigDefs[name], own, nil)
		return v
	}
	num := func(name string) int64 {
		n, _ := strconv.ParseInt(get(name), 10, 64)
		return n
	}
	return Config{
		Enable:         get("sediment.table.enable") == "true",
		Format:         get("sediment.table.format"),
		Schema:         get("sediment.table.schema"),
		PartitionBy:    get("sediment.table.partition-by"),
		CommitInterval: time.Duration(num("sediment.table.commit.interval.ms")) * time.Millisecond,
		CommitBytes:    num("sediment.table.commit.bytes"),
		Errors:         get("sediment.table.errors"),
	}
}
