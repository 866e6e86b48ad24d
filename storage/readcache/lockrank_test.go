//go:build lockrank

package readcache

import (
	"strings"
	"testing"
)

// TestLockRankCatchesInversion: the read cache's mutexes are ranked.
// Taking the block cache's lock while holding the stream table's, the
// inverse of blockCache.evictLocked's order, panics and names both locks.
func TestLockRankCatchesInversion(t *testing.T) {
	var b blockCache
	var s streamTable
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "readcache.blockCache.mu") || !strings.Contains(msg, "readcache.streamTable.mu") {
			t.Fatalf("taking the block cache lock under the stream table's gave %q, want a panic naming both", msg)
		}
	}()
	b.mu.Lock()
	b.mu.Unlock()
}
