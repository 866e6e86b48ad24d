package catalog_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/sediment-io/sediment/table/catalog"
)

// TestEmbeddedSQLiteConcurrentWriters: two catalogs open on the same
// embedded file (a broker and a tool beside it) commit at the same time
// without "database is locked" failures, and each sees the other's
// commits.
func TestEmbeddedSQLiteConcurrentWriters(t *testing.T) {
	opts := catalog.Options{DataDir: t.TempDir()}
	const writers, commits = 2, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*commits)
	for w := range writers {
		cat := openCatalog(t, "", opts)
		name := fmt.Sprintf("t%d", w)
		tbl, err := cat.CreateTable(context.Background(), table.Identifier{"sediment", name}, events)
		if err != nil {
			t.Fatal(err)
		}
		batches := make([]arrow.Table, commits)
		for i := range batches {
			batches[i] = rows(t, []int64{int64(i)}, []string{name})
			defer batches[i].Release()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, data := range batches {
				txn := tbl.NewTransaction()
				err := txn.AppendTable(context.Background(), data, 1024, nil)
				if err == nil {
					tbl, err = txn.Commit(context.Background())
				}
				if err != nil {
					errs <- fmt.Errorf("writer %d commit %d: %w", w, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	other := openCatalog(t, "", opts)
	for w := range writers {
		ids, _ := scanRows(t, other, fmt.Sprintf("t%d", w))
		if len(ids) != commits {
			t.Errorf("table t%d holds %d rows, want %d", w, len(ids), commits)
		}
	}
}
