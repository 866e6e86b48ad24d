package mem

import (
	"context"
	"time"
)

// before counts one call of op and applies the injected faults in the order
// a real call meets them: a hang, then latency, then an outage or a failure.
func (f *faults) before(ctx context.Context, op Op) error {
	f.calls[op].Add(1)
	f.calls[OpAny].Add(1)
	if err := f.waitHang(ctx, op); err != nil {
		return err
	}
	if err := f.sleep(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return f.takeFailure(op)
}

// waitHang blocks while op is hung, until ctx ends or the hang is lifted.
func (f *faults) waitHang(ctx context.Context, op Op) error {
	f.mu.Lock()
	hung, release := f.hang[op] || f.hang[OpAny], f.unhang
	f.mu.Unlock()
	if !hung {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-release:
		return nil
	}
}

// sleep waits out the injected latency, or until ctx ends.
func (f *faults) sleep(ctx context.Context) error {
	f.mu.Lock()
	d := f.latency
	f.mu.Unlock()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// takeFailure returns ErrDown during an outage, else consumes one pending
// FailNext for op (or OpAny) and returns its error.
func (f *faults) takeFailure(op Op) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return ErrDown
	}
	for _, o := range [...]Op{op, OpAny} {
		if fl := &f.fail[o]; fl.left > 0 {
			fl.left--
			return fl.err
		}
	}
	return nil
}
