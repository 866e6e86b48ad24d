package metadata

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestInstrumentCountsResults(t *testing.T) {
	bolt, err := OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	kv := Instrument(bolt, reg)
	defer kv.Close()
	ctx := context.Background()
	if _, err := kv.Txn(ctx, []Cond{{Key: "k", Version: 0}}, []Op{Put("k", []byte("v"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Txn(ctx, []Cond{{Key: "k", Version: 0}}, []Op{Put("k", []byte("w"))}); !IsConflict(err) {
		t.Fatalf("second create: %v, want a conflict", err)
	}
	if _, _, err := kv.Get(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	m := kv.(*instrumented)
	for _, c := range []struct {
		op, result string
		want       float64
	}{{"txn", "ok", 1}, {"txn", "conflict", 1}, {"get", "ok", 1}} {
		var out dto.Metric
		m.reqs.WithLabelValues(c.op, c.result).Write(&out)
		if got := out.GetCounter().GetValue(); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.op, c.result, got, c.want)
		}
	}
}
