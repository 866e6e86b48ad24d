package partition

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the storage layer's Prometheus collectors.
type Metrics struct {
	appendedBytes prometheus.Counter
	uploadedBytes prometheus.Counter
	uploadSeconds prometheus.Histogram
	fsyncSeconds  prometheus.Histogram
	objectOps     *prometheus.CounterVec // op, result
	fetchSource   *prometheus.CounterVec // source
	blockCache    *prometheus.CounterVec // hit, miss

	compactedSegments prometheus.Counter
	compactedBytes    prometheus.Counter
	retainedSegments  prometheus.Counter
	garbageDeleted    prometheus.Counter
	orphansDeleted    prometheus.Counter
	partitionResets   prometheus.Counter
	droppedBatches    prometheus.Counter
	indexFolds        prometheus.Counter
	indexFoldedKeys   prometheus.Counter
	manifestBytes     prometheus.Counter
}

// NewMetrics creates the collectors and registers them with reg (nil: not
// registered, for tests).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		appendedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_log_appended_bytes_total", Help: "Record batch bytes appended to partitions."}),
		uploadedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_upload_bytes_total", Help: "Bytes written to the object store in data objects."}),
		uploadSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sediment_upload_seconds", Help: "Time to PUT a data object and commit its index.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		fsyncSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "sediment_wal_fsync_seconds", Help: "WAL fsync latency.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		objectOps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sediment_object_requests_total", Help: "Object store requests by operation and result."},
			[]string{"op", "result"}),
		fetchSource: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sediment_fetch_reads_total", Help: "Partition reads by where the data came from."},
			[]string{"source"}),
		blockCache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sediment_block_cache_lookups_total", Help: "Object block cache lookups by result."},
			[]string{"result"}),
		compactedSegments: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_compaction_segments_total", Help: "Segments rewritten into compacted objects."}),
		compactedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_compaction_bytes_total", Help: "Bytes rewritten into compacted objects."}),
		retainedSegments: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_retention_deleted_segments_total", Help: "Segments removed by retention or DeleteRecords."}),
		garbageDeleted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_gc_deleted_objects_total", Help: "Unreferenced objects deleted after their grace period."}),
		orphansDeleted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_gc_deleted_orphans_total", Help: "Orphan objects (PUT landed, commit never did) deleted."}),
		partitionResets: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_upload_partition_resets_total",
			Help: "Partitions whose segment could not commit (offset gap), truncated to their committed log."}),
		droppedBatches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_partition_dropped_batches_total",
			Help: "Batches never acknowledged that a partition's lost ownership dropped (--durability object)."}),
		indexFolds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_index_folds_total", Help: "Runs of index entries folded into a manifest object."}),
		indexFoldedKeys: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_index_folded_keys_total", Help: "Index keys replaced by manifest entries."}),
		manifestBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sediment_index_manifest_bytes_total", Help: "Bytes of manifest objects written by index folds."}),
	}
	if reg != nil {
		reg.MustRegister(m.appendedBytes, m.uploadedBytes, m.uploadSeconds, m.fsyncSeconds,
			m.objectOps, m.fetchSource, m.blockCache, m.compactedSegments, m.compactedBytes,
			m.retainedSegments, m.garbageDeleted, m.orphansDeleted, m.partitionResets, m.droppedBatches,
			m.indexFolds, m.indexFoldedKeys, m.manifestBytes)
	}
	return m
}

// RegisterGauges registers gauges that read the log's live state.
func (l *Log) RegisterGauges(reg prometheus.Registerer) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sediment_wal_backlog_bytes",
			Help: "WAL bytes not yet released (not yet uploaded)."},
			func() float64 { return float64(l.wal.Stats().Backlog) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sediment_upload_pending_bytes",
			Help: "Appended bytes waiting for upload."},
			func() float64 { return float64(l.up.Pending()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sediment_tail_cache_bytes",
			Help: "Bytes of recent batches held in memory."},
			func() float64 { return float64(l.tail.Bytes()) }),
		txnCollector{l},
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sediment_wal_fsyncs_total",
			Help: "WAL fsyncs (each serves every append waiting at the time)."},
			func() float64 { return float64(l.wal.Stats().Syncs) }),
	)
}
