package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sediment-io/sediment/storage/wal"
)

// testWALFS, when set, is the WAL's filesystem instead of the real one.
// Only the test binary sets it (failclosed_test.go, from an init function
// and only in a broker subprocess), to make fsyncs fail in a real broker
// process: no flag, variable or file can make the shipped binary use it.
var testWALFS wal.FS

// storageFailure returns why the broker's local storage failed for good (a
// WAL write or fsync, or a commit of the metadata file), or nil.
func (b *broker) storageFailure() error {
	if !b.opened.Load() { // the probes start before the storage opens
		return nil
	}
	if b.log != nil {
		if err := b.log.Failure(); err != nil {
			return err
		}
	}
	if b.bolt != nil {
		return b.bolt.Failure()
	}
	return nil
}

// failClosed is what the broker does once its storage failed. After a
// failed fsync the page cache's state is unknown (the PostgreSQL
// "fsyncgate" lesson), so it never retries: like etcd and pebble it stops
// taking writes, says why once, and exits non-zero, for a supervisor to
// restart it and WAL recovery to decide what survived. For delay first it
// keeps its listeners: produce gets KAFKA_STORAGE_ERROR, /readyz 503 with
// the reason, and /metrics sediment_storage_failed 1, so that probes and
// a scrape see why it goes away. The shutdown after it writes nothing: no
// final upload and no WAL write.
func (b *broker) failClosed(ctx context.Context, delay time.Duration) error {
	err := b.storageFailure()
	b.log.Fail(err) // when the metadata file failed: the log takes no more appends either
	b.logger.Error("storage failed: writes refused; exiting so that a restart recovers from the WAL",
		"err", err, "exit_in", delay)
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	b.close()
	return fmt.Errorf("storage failed: %w", err)
}

// withoutFailure drops the errors that only repeat the storage failure
// fail (nil: none), which failClosed has reported already.
func withoutFailure(errs []error, fail error) []error {
	if fail == nil {
		return errs
	}
	var kept []error
	for _, err := range errs {
		if !errors.Is(err, fail) {
			kept = append(kept, err)
		}
	}
	return kept
}

// registerStorageGauge exports sediment_storage_failed.
func (b *broker) registerStorageGauge(reg prometheus.Registerer) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sediment_storage_failed",
		Help: "1 once a WAL write or fsync, or a metadata commit, failed: the broker refuses writes and is about to exit."},
		func() float64 {
			if b.storageFailure() != nil {
				return 1
			}
			return 0
		}))
}
