package partition

import "context"

// Flush uploads and commits every batch appended so far, now rather than
// at the next upload interval, and returns once none is pending (bounded by
// FlushTimeout). It is for tools that count time in upload rounds rather
// than in wall time (bench's etcd-hour driver: an hour of uploads is 14,400
// rounds whatever the machine's speed); the broker relies on its interval.
func (l *Log) Flush(ctx context.Context) error {
	if l.closed.Load() {
		return ErrClosed
	}
	if err := l.checkFailed(); err != nil {
		return err
	}
	return l.up.flushAll(ctx)
}
