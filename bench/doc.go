// Package bench is Sediment's benchmark suite: OpenMessaging-style
// workloads (YAML files in bench/workloads) run by real franz-go producers
// and consumers against any Kafka-compatible broker, with reports a user
// can reproduce on their own machine against their own alternative.
//
// A run measures, against one target or two run alternately (--vs):
// throughput over time, produce-ack and end-to-end latency percentiles
// (HdrHistogram), and for a broker that serves Prometheus metrics (a
// launched Sediment) its CPU seconds per GB, peak RSS, fsyncs per second
// and object-store requests per GB, from which it estimates the monthly
// request cost on S3. Every run starts by measuring the machine's raw
// loopback TCP throughput, the ceiling the figures are set against.
//
// A launched cluster (--launch cluster) adds an etcd process and several
// brokers on it: each broker's etcd transactions per second and per GB,
// etcd's bytes received and database size, and, with --failover-after,
// the time from killing a partition owner to the first acknowledged
// produce on each of its partitions elsewhere.
//
// It writes DIR/results.json (every figure), DIR/summary.md and plots
// (SVG and PNG). The package drives brokers only as a client (or as a
// subprocess it launches, reading a launched cluster's etcd keys as
// documented in issue 18's key layout); it never imports the broker's
// packages.
package bench
