package bench

import (
	"math"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds from 1 µs to one hour with three
// significant digits: a catch-up read's end-to-end latency can be minutes.
const (
	minLatencyMicros = 1
	maxLatencyMicros = int64(time.Hour / time.Microsecond)
	latencyDigits    = 3
)

// latencyRecorder is an HdrHistogram safe for concurrent use (produce
// promises of one client may run on several goroutines).
type latencyRecorder struct {
	mu sync.Mutex // guards h
	h  *hdrhistogram.Histogram
}

func newLatencyRecorder() *latencyRecorder {
	return &latencyRecorder{h: newHistogram()}
}

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(minLatencyMicros, maxLatencyMicros, latencyDigits)
}

// record adds one latency, clamped into the histogram's range.
func (r *latencyRecorder) record(d time.Duration) {
	us := min(max(d.Microseconds(), minLatencyMicros), maxLatencyMicros)
	r.mu.Lock()
	r.h.RecordValue(us)
	r.mu.Unlock()
}

// mergeInto adds the recorded values to dst.
func (r *latencyRecorder) mergeInto(dst *hdrhistogram.Histogram) {
	r.mu.Lock()
	dst.Merge(r.h)
	r.mu.Unlock()
}

// Latency is a latency distribution's summary, in milliseconds.
type Latency struct {
	Count  int64   `json:"count"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p99_9_ms"`
	MaxMs  float64 `json:"max_ms"`
	// Curve is the percentile curve for plots: latency at percentiles
	// 0, 90, 99, 99.9, ... in fine steps up to 99.999.
	Curve []CurvePoint `json:"curve,omitempty"`
}

// CurvePoint is one point of a percentile curve.
type CurvePoint struct {
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"ms"`
}

// summarize reads the figures of h.
func summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	l := Latency{
		Count:  h.TotalCount(),
		MeanMs: h.Mean() / 1000,
		P50Ms:  ms(h.ValueAtQuantile(50)),
		P90Ms:  ms(h.ValueAtQuantile(90)),
		P99Ms:  ms(h.ValueAtQuantile(99)),
		P999Ms: ms(h.ValueAtQuantile(99.9)),
		MaxMs:  ms(h.Max()),
	}
	// Nines from 0 to 5 in steps of 0.1: percentile 100*(1-10^-x).
	for x := 0.0; x <= 5.0001; x += 0.1 {
		p := 100 * (1 - math.Pow(10, -x))
		l.Curve = append(l.Curve, CurvePoint{Percentile: p, Ms: ms(h.ValueAtQuantile(p))})
	}
	return l
}
