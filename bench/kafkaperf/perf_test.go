package main

import (
	"strings"
	"testing"
)

// TestKafkaPerfParse reads the closing lines Kafka 4.4's
// ProducerPerformance and ConsumerPerformance print.
func TestKafkaPerfParse(t *testing.T) {
	prod := "250000 records sent, 50000.0 records/sec (48.83 MB/sec), 100.0 ms avg latency, 900.0 ms max latency.\n" +
		"500000 records sent, 6592.1 records/sec (6.44 MB/sec), 3973.50 ms avg latency, 6243.00 ms max latency, 3842 ms 50th, 5900 ms 95th, 6066 ms 99th, 6176 ms 99.9th.\n"
	p, err := parseProducer(prod)
	if err != nil || p.Records != 500000 || p.RecordsPerSec != 6592.1 || p.MiBPerSec != 6.44 || p.P50Ms != 3842 ||
		p.P99Ms != 6066 || p.P999Ms != 6176 || p.MaxMs != 6243 {
		t.Errorf("producer: %+v %v", p, err)
	}
	if _, err := parseProducer("nothing useful\n"); err == nil {
		t.Error("a producer output without a summary parsed")
	}
	cons := "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n" +
		"2026-12-02 00:19:01:123, 2026-12-02 00:19:20:456, 488.2812, 25.0000, 500000, 25613.0, 7000, 12000, 39.2900, 40233.0\n"
	c, err := parseConsumer(cons)
	if err != nil || c.Records != 500000 || c.RecordsPerSec != 25613 || c.MiBPerSec != 25 || c.RebalanceMs != 7000 || c.FetchMiBPerS != 39.29 {
		t.Errorf("consumer: %+v %v", c, err)
	}
	if _, err := parseConsumer(strings.SplitN(cons, "\n", 2)[0]); err == nil {
		t.Error("a header alone parsed")
	}
}
