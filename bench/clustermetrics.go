package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ClusterSnapshot is a cluster's counters at one moment: every broker's
// and etcd's.
type ClusterSnapshot struct {
	Brokers []BrokerSnapshot
	Etcd    EtcdSnapshot
}

// BrokerSnapshot is one broker of a cluster. A broker the bench killed
// (Killed) keeps the figures of its last scrape, just before the kill.
type BrokerSnapshot struct {
	Node   int
	Rack   string
	Killed bool
	Snapshot
}

// EtcdSnapshot is what etcd's own /metrics says.
type EtcdSnapshot struct {
	ReceivedBytes float64 // etcd_network_client_grpc_received_bytes_total
	SentBytes     float64 // etcd_network_client_grpc_sent_bytes_total
	DBSize        float64 // etcd_mvcc_db_total_size_in_bytes: the file
	DBInUse       float64 // etcd_mvcc_db_total_size_in_use_in_bytes: the part not free
	Txns          float64 // etcd_mvcc_txn_total
	Puts          float64 // etcd_mvcc_put_total
	Keys          float64 // etcd_debugging_mvcc_keys_total: live keys, every prefix
}

// total is the sum over the brokers, with the snapshot itself attached.
func (cs *ClusterSnapshot) total() Snapshot {
	t := Snapshot{At: time.Now(), Table: map[string]float64{}, FetchReads: map[string]float64{}, Cluster: cs}
	for _, b := range cs.Brokers {
		s := b.Snapshot
		t.CPUSeconds += s.CPUSeconds
		t.RSSBytes += s.RSSBytes
		t.PeakRSS += s.PeakRSS
		t.Fsyncs += s.Fsyncs
		t.Puts += s.Puts
		t.Gets += s.Gets
		t.ObjBytesOut += s.ObjBytesOut
		t.ObjBytesIn += s.ObjBytesIn
		if !b.Killed { // a dead broker's pending bytes never upload
			t.UploadPending += s.UploadPending
		}
		t.MetaTxns += s.MetaTxns
		t.MetaRequests += s.MetaRequests
		t.HasMeta = t.HasMeta || s.HasMeta
		t.Appended += s.Appended
		t.Objects += s.Objects
		for k, v := range s.Table {
			t.Table[k] += v
		}
		for k, v := range s.FetchReads {
			t.FetchReads[k] += v
		}
	}
	return t
}

// scrapeEtcd reads etcd's /metrics.
func scrapeEtcd(ctx context.Context, url string) (EtcdSnapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return EtcdSnapshot{}, fmt.Errorf("bench: etcd metrics: %w", err)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return EtcdSnapshot{}, fmt.Errorf("bench: etcd metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return EtcdSnapshot{}, fmt.Errorf("bench: etcd metrics %s: %s", url, resp.Status)
	}
	return parseEtcdMetrics(resp.Body)
}

// parseEtcdMetrics reads etcd's Prometheus text.
func parseEtcdMetrics(r io.Reader) (EtcdSnapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return EtcdSnapshot{}, fmt.Errorf("bench: etcd metrics: %w", err)
	}
	return EtcdSnapshot{
		ReceivedBytes: sum(fams["etcd_network_client_grpc_received_bytes_total"], nil),
		SentBytes:     sum(fams["etcd_network_client_grpc_sent_bytes_total"], nil),
		DBSize:        sum(fams["etcd_mvcc_db_total_size_in_bytes"], nil),
		DBInUse:       sum(fams["etcd_mvcc_db_total_size_in_use_in_bytes"], nil),
		Txns:          sum(fams["etcd_mvcc_txn_total"], nil),
		Puts:          sum(fams["etcd_mvcc_put_total"], nil),
		Keys:          sum(fams["etcd_debugging_mvcc_keys_total"], nil),
	}, nil
}
