package table

import (
	"time"

	"github.com/sediment-io/sediment/config"
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

// ConfigOf resolves a topic's own configs against the defaults (the
// sediment.table.* configs have no broker-level default).
func ConfigOf(own map[string]string) Config {
	v := config.Topic(own, nil)
	return Config{
		Enable:         v.Bool("sediment.table.enable"),
		Format:         v.String("sediment.table.format"),
		Schema:         v.String("sediment.table.schema"),
		PartitionBy:    v.String("sediment.table.partition-by"),
		CommitInterval: v.Millis("sediment.table.commit.interval.ms"),
		CommitBytes:    v.Int("sediment.table.commit.bytes"),
		Errors:         v.String("sediment.table.errors"),
	}
}
