package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	icebergcatalog "github.com/apache/iceberg-go/catalog"

	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/storeurl"
	"github.com/sediment-io/sediment/storage/partition"
	"github.com/sediment-io/sediment/storage/record"
	"github.com/sediment-io/sediment/table"
	"github.com/sediment-io/sediment/table/catalog"
)

// stack is the part of a broker the converter needs, in-process: the
// metadata store, the object store, the partition log, the embedded
// catalog and the converter. Records are appended straight to the log, so
// what is measured is the converter, not the Kafka protocol.
type stack struct {
	dir   string
	meta  *metadata.Store
	store objectstore.Store
	log   *partition.Log
	cat   icebergcatalog.Catalog
	conv  *table.Converter
}

func newStack(ctx context.Context, storeURL string) (*stack, error) {
	dir, err := os.MkdirTemp("", "tablebench-")
	if err != nil {
		return nil, err
	}
	s := &stack{dir: dir}
	if storeURL == "" {
		storeURL = "file://" + filepath.Join(dir, "objects")
	}
	kv, err := metadata.OpenBolt(filepath.Join(dir, "meta.db"))
	if err != nil {
		return nil, err
	}
	s.meta = metadata.NewStore(kv)
	if s.store, err = storeurl.Open(ctx, storeURL, storeurl.Options{}); err != nil {
		return nil, fmt.Errorf("object store: %w", err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	s.log, err = partition.Open(ctx, partition.Options{Meta: s.meta, Store: s.store, WALDir: filepath.Join(dir, "wal"),
		Logger: quiet, Metrics: partition.NewMetrics(nil)})
	if err != nil {
		return nil, err
	}
	if s.cat, err = catalog.Open(ctx, "", catalog.Options{DataDir: dir, ObjectStoreURL: storeURL}); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	s.conv = table.Start(table.Options{Log: s.log, Catalog: s.cat, Logger: quiet, PollInterval: 50 * time.Millisecond})
	return s, nil
}

func (s *stack) close() {
	if s.conv != nil {
		s.conv.Close()
	}
	if c, ok := s.cat.(icebergcatalog.Closer); ok {
		c.Close()
	}
	if s.log != nil {
		s.log.Close()
	}
	if s.store != nil {
		s.store.Close()
	}
	if s.meta != nil {
		s.meta.Close()
	}
	os.RemoveAll(s.dir)
}

// recordValue returns a JSON object of about size bytes: nested object, list,
// RFC 3339 string, and padding.
func recordValue(i, size int) []byte {
	head := fmt.Sprintf(`{"id":%d,"user":"user-%d","at":"2026-11-29T21:00:00Z","tags":["a","b","c"],"geo":{"lat":%d.5,"lon":-%d.25},"ok":%t,"pad":"`,
		i, i%1000, i%90, i%180, i%2 == 0)
	pad := max(size-len(head)-2, 0)
	return []byte(head + strings.Repeat("x", pad) + `"}`)
}

// appendRecords appends n records of size bytes to topic's partitions
// round-robin, batchSize per batch, and waits until they are durable.
func (s *stack) appendRecords(ctx context.Context, t *partition.Topic, from, n, size, batchSize int) error {
	parts := t.Partitions()
	for i := 0; i < n; i += batchSize {
		recs := make([]record.Record, 0, batchSize)
		now := time.Now().UnixMilli()
		for j := i; j < min(i+batchSize, n); j++ {
			recs = append(recs, record.Record{Timestamp: now, Value: recordValue(from+j, size)})
		}
		res, err := s.log.Append(ctx, parts[(i/batchSize)%len(parts)], record.EncodeBatch(recs))
		if err != nil {
			return err
		}
		if err := s.log.Wait(ctx, res); err != nil {
			return err
		}
	}
	return nil
}

// waitConverted waits until the table's committed offsets reach want.
func (s *stack) waitConverted(ctx context.Context, topic string, want int64, poll time.Duration) error {
	for ctx.Err() == nil {
		if st, ok := s.conv.Status(topic); ok && st.State == "error" {
			return fmt.Errorf("table %s: %s", topic, st.Error)
		}
		if s.progress(topic) >= want {
			return nil
		}
		time.Sleep(poll)
	}
	return ctx.Err()
}

// progress sums the table's committed offsets as its catalog says.
func (s *stack) progress(topic string) int64 {
	st, ok := s.conv.Status(topic)
	if !ok {
		return 0
	}
	return st.Committed
}
