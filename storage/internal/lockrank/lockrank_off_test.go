//go:build !lockrank

package lockrank

import (
	"sync"
	"testing"
	"unsafe"
)

// TestUntaggedIsPlainSync: without the tag a ranked mutex is the sync
// mutex it wraps, byte for byte, and locking it allocates nothing.
func TestUntaggedIsPlainSync(t *testing.T) {
	if unsafe.Sizeof(Mutex[test1]{}) != unsafe.Sizeof(sync.Mutex{}) ||
		unsafe.Sizeof(RWMutex[test1]{}) != unsafe.Sizeof(sync.RWMutex{}) {
		t.Fatal("a ranked mutex is larger than its sync mutex")
	}
	var m Mutex[test1]
	if n := testing.AllocsPerRun(100, func() { m.Lock(); m.Unlock() }); n != 0 {
		t.Fatalf("Lock and Unlock allocate %v times", n)
	}
}
