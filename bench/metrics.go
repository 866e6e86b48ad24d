package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Snapshot is a broker's counters at one moment, read from its Prometheus
// /metrics (Sediment's names; a broker without them reads as zeros).
type Snapshot struct {
	At         time.Time
	CPUSeconds float64 // process_cpu_seconds_total
	RSSBytes   float64 // process_resident_memory_bytes
	PeakRSS    float64 // VmHWM of the launched process, when known
	// ProcOnly is true when the figures come from /proc alone (a broker
	// without a Prometheus endpoint): only CPUSeconds and PeakRSS are set.
	ProcOnly    bool
	Fsyncs      float64 // sediment_wal_fsyncs_total
	Puts        float64 // sediment_objectstore_requests_total{op="put"}
	Gets        float64 // sediment_objectstore_requests_total{op=~"get.*"}
	ObjBytesOut float64 // sediment_objectstore_bytes_total{direction="out"}
	ObjBytesIn  float64 // sediment_objectstore_bytes_total{direction="in"}
	// UploadPending is sediment_upload_pending_bytes: appended bytes not
	// yet in an object. A round waits for it to reach zero so that its
	// PUT count covers every byte it produced.
	UploadPending float64
	Table         map[string]float64 // every sediment_table_* sample, by name{labels}
	FetchReads    map[string]float64 // sediment_fetch_reads_total by source (where fetches were served from)
	// MetaTxns is sediment_metadata_requests_total{op="txn"}: the
	// broker's metadata transactions (etcd round trips that write), and
	// MetaRequests the same over every op. HasMeta is false when the
	// broker does not export the family.
	MetaTxns, MetaRequests float64
	HasMeta                bool
	Appended               float64 // sediment_log_appended_bytes_total: bytes produced to this broker
	Objects                float64 // sediment_upload_seconds_count: data objects PUT and committed
	// Cluster is set by a cluster target: each broker's snapshot and
	// etcd's, of which the fields above are the sum over the brokers.
	Cluster *ClusterSnapshot
}

// scraper reads a Prometheus endpoint (and /proc for a local pid).
type scraper struct {
	url    string
	pid    int
	client *http.Client
}

func newScraper(url string, pid int) *scraper {
	return &scraper{url: url, pid: pid, client: &http.Client{Timeout: 10 * time.Second}}
}

func (s *scraper) scrape(ctx context.Context) (Snapshot, bool, error) {
	if s == nil || s.url == "" {
		return Snapshot{}, false, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("bench: metrics: %w", err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("bench: metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Snapshot{}, false, fmt.Errorf("bench: metrics %s: %s", s.url, resp.Status)
	}
	snap, err := parseMetrics(resp.Body)
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("bench: metrics %s: %w", s.url, err)
	}
	if s.pid > 0 {
		snap.PeakRSS = peakRSS(s.pid)
	}
	return snap, true, nil
}

// parseMetrics reads the Prometheus text format into a Snapshot.
func parseMetrics(r io.Reader) (Snapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Snapshot{}, err
	}
	snap := Snapshot{At: time.Now(), Table: map[string]float64{}, FetchReads: map[string]float64{}}
	snap.CPUSeconds = sum(fams["process_cpu_seconds_total"], nil)
	snap.RSSBytes = sum(fams["process_resident_memory_bytes"], nil)
	snap.Fsyncs = sum(fams["sediment_wal_fsyncs_total"], nil)
	snap.UploadPending = sum(fams["sediment_upload_pending_bytes"], nil)
	snap.Appended = sum(fams["sediment_log_appended_bytes_total"], nil)
	snap.Objects = observations(fams["sediment_upload_seconds"])
	meta, hasMeta := fams["sediment_metadata_requests_total"]
	snap.HasMeta = hasMeta
	snap.MetaRequests = sum(meta, nil)
	snap.MetaTxns = sum(meta, func(l map[string]string) bool { return l["op"] == "txn" })
	req := fams["sediment_objectstore_requests_total"]
	snap.Puts = sum(req, func(l map[string]string) bool { return l["op"] == "put" })
	snap.Gets = sum(req, func(l map[string]string) bool { return strings.HasPrefix(l["op"], "get") })
	objBytes := fams["sediment_objectstore_bytes_total"]
	snap.ObjBytesOut = sum(objBytes, func(l map[string]string) bool { return l["direction"] == "out" })
	snap.ObjBytesIn = sum(objBytes, func(l map[string]string) bool { return l["direction"] == "in" })
	for _, m := range fams["sediment_fetch_reads_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "source" {
				snap.FetchReads[l.GetValue()] += value(m)
			}
		}
	}
	for name, f := range fams {
		if strings.HasPrefix(name, "sediment_table_") {
			for _, m := range f.GetMetric() {
				snap.Table[name+labelString(m)] = value(m)
			}
		}
	}
	return snap, nil
}

// sum adds the samples of a counter or gauge family whose labels match.
func sum(f *dto.MetricFamily, match func(map[string]string) bool) float64 {
	var total float64
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if match == nil || match(labels) {
			total += value(m)
		}
	}
	return total
}

// observations is a histogram family's count of observations.
func observations(f *dto.MetricFamily) float64 {
	var n float64
	for _, m := range f.GetMetric() {
		n += float64(m.GetHistogram().GetSampleCount())
	}
	return n
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

func labelString(m *dto.Metric) string {
	if len(m.GetLabel()) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// peakRSS reads a process's high-water resident set (VmHWM) in bytes, or 0.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	return 0
}

// userHZ is the unit of /proc/PID/stat's CPU times: USER_HZ, 100 on every
// Linux the bench runs on (procfs assumes the same).
const userHZ = 100

// processCPUSeconds reads a process's user and system CPU time from
// /proc/PID/stat, the figure process_cpu_seconds_total reports for a
// broker that has a metrics endpoint.
func processCPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("bench: cpu time: %w", err)
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime (fields 14 and 15) from a
// /proc/PID/stat line; the command name in parentheses may hold spaces, so
// the fields are counted from its closing parenthesis.
func parseStatCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	f := strings.Fields(stat[i+1:])
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("bench: cpu time: short /proc stat line %q", stat)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bench: cpu time: bad /proc stat line %q", stat)
	}
	return (utime + stime) / userHZ, nil
}
