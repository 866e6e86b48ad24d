package protocol

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metrics are the protocol layer's Prometheus collectors.
type metrics struct {
	requests    *prometheus.CounterVec   // api
	errors      *prometheus.CounterVec   // api, error
	latency     *prometheus.HistogramVec // api
	rejected    *prometheus.CounterVec   // reason: requests closed without an answer
	bytesIn     prometheus.Counter
	bytesOut    prometheus.Counter
	connections prometheus.Gauge
	// inflightBytes is the request budget held (Config.MaxInflightBytes);
	// inflightWaits counts frames that waited for room in it.
	inflightBytes prometheus.Gauge
	inflightWaits prometheus.Counter
	// replicaRequests and replicaBytes count the fetches that read a
	// partition owned elsewhere from the committed log (KIP-392), and
	// their record bytes; preferredReplica the partitions the owner sent
	// to a broker in the client's rack.
	replicaRequests  prometheus.Counter
	replicaBytes     prometheus.Counter
	preferredReplica prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sediment_requests_total", Help: "Kafka requests answered, by API."}, []string{"api"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sediment_request_errors_total", Help: "Error codes placed in responses, by API and error."},
			[]string{"api", "error"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "sediment_request_seconds", Help: "Time from decoding a request to encoding its answer.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18)}, []string{"api"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sediment_requests_rejected_total", Help: "Requests that closed their connection, by reason."},
			[]string{"reason"}),
		bytesIn: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_network_received_bytes_total", Help: "Request bytes read."}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_network_sent_bytes_total", Help: "Response bytes written."}),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sediment_connections", Help: "Open client connections."}),
		inflightBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sediment_inflight_request_bytes", Help: "Request bytes read and not yet answered (bounded by --max-inflight-request-bytes)."}),
		inflightWaits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_inflight_request_waits_total", Help: "Requests whose reading waited for room under --max-inflight-request-bytes."}),
		replicaRequests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_fetch_replica_requests_total", Help: "Fetches that read a partition another broker owns from its committed log (KIP-392)."}),
		replicaBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_fetch_replica_bytes_total", Help: "Record bytes served from partitions another broker owns (KIP-392)."}),
		preferredReplica: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_fetch_preferred_replica_total", Help: "Partitions of fetches answered with a preferred read replica in the client's rack (KIP-392)."}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.errors, m.latency, m.rejected, m.bytesIn, m.bytesOut, m.connections,
			m.inflightBytes, m.inflightWaits, m.replicaRequests, m.replicaBytes, m.preferredReplica)
	}
	return m
}

// errCodeNames lists the error codes of errs by name, for logs.
func errCodeNames(errs map[int16]int) string {
	var names []string
	for code := range errs {
		names = append(names, errLabel(code))
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// errLabel names an error code.
func errLabel(code int16) string {
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return strconv.Itoa(int(code))
}

// observe records one answered request.
func (m *metrics) observe(r *request) {
	name := kmsg.NameForKey(r.key)
	m.requests.WithLabelValues(name).Inc()
	m.latency.WithLabelValues(name).Observe(time.Since(r.started).Seconds())
	for code, n := range r.errs {
		m.errors.WithLabelValues(name, errLabel(code)).Add(float64(n))
	}
}
