package catalog_test

import (
	"context"
	"testing"

	icebergcatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/sediment-io/sediment/table/catalog"
	"github.com/sediment-io/sediment/table/catalog/resttest"
)

// BenchmarkAppendCommit measures one small append (one Parquet file, a new
// manifest, manifest list and metadata file, and the catalog's swap) per
// iteration, on the local warehouse, through each catalog that runs
// without outside servers. The PostgreSQL catalog's figure is in the
// interop-tagged BenchmarkInteropPostgresAppendCommit.
func BenchmarkAppendCommit(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		benchAppendCommit(b, "", catalog.Options{DataDir: b.TempDir()})
	})
	b.Run("rest", func(b *testing.B) {
		benchAppendCommit(b, "rest+"+resttest.Start(b, "cat", "").URL, catalog.Options{DataDir: b.TempDir()})
	})
}

func benchAppendCommit(b *testing.B, rawURL string, opts catalog.Options) {
	ctx := context.Background()
	cat, err := catalog.Open(ctx, rawURL, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer cat.(icebergcatalog.Closer).Close()
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sediment", "bench"}, events)
	if err != nil {
		b.Fatal(err)
	}
	data := rows(b, []int64{1, 2, 3}, []string{"a", "b", "c"})
	defer data.Release()
	b.ResetTimer()
	for b.Loop() {
		txn := tbl.NewTransaction()
		if err := txn.AppendTable(ctx, data, 1024, nil); err != nil {
			b.Fatal(err)
		}
		if tbl, err = txn.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
