package main

import (
	"strings"
	"testing"
)

// TestSharedTableCatalog: a cluster broker converts table topics only on
// a catalog every broker shares: the embedded SQLite catalog (the default)
// leaves them waiting, an explicit one is refused naming --table-catalog,
// and a SQLite file is allowed only with --shared-local-store.
func TestSharedTableCatalog(t *testing.T) {
	cases := []struct {
		catalog     string
		sharedLocal bool
		shared      bool
		refused     bool
	}{
		{catalog: "", shared: false},
		{catalog: "sqlite", refused: true},
		{catalog: "sqlite", sharedLocal: true, refused: true},
		{catalog: "sqlite:///tmp/c.db", refused: true},
		{catalog: "sqlite:///tmp/c.db", sharedLocal: true, shared: true},
		{catalog: "postgres://u:p@127.0.0.1:5432/db", shared: true},
		{catalog: "rest+http://127.0.0.1:8181/v1", shared: true},
	}
	for _, tc := range cases {
		cfg := &serveConfig{TableCatalog: tc.catalog, SharedLocal: tc.sharedLocal}
		shared, err := sharedTableCatalog(cfg)
		if tc.refused {
			if err == nil || !strings.Contains(err.Error(), "--table-catalog") {
				t.Errorf("%q shared-local=%v: err %v, want a refusal naming --table-catalog", tc.catalog, tc.sharedLocal, err)
			}
			continue
		}
		if err != nil || shared != tc.shared {
			t.Errorf("%q shared-local=%v: shared=%v err=%v, want shared=%v", tc.catalog, tc.sharedLocal, shared, err, tc.shared)
		}
	}
}
