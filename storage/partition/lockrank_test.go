//go:build lockrank

package partition

import (
	"strings"
	"testing"
)

// TestLockRankCatchesInversion: the package's real mutexes are ranked.
// Taking the append gate while holding a partition's lock, the inverse of
// Append's order, panics and names both locks.
func TestLockRankCatchesInversion(t *testing.T) {
	var l Log
	var p Partition
	p.mu.Lock()
	defer p.mu.Unlock()
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "partition.Log.appendGate") || !strings.Contains(msg, "partition.Partition.mu") {
			t.Fatalf("taking the append gate under a partition lock gave %q, want a panic naming both", msg)
		}
	}()
	l.appendGate.RLock()
	l.appendGate.RUnlock()
}
