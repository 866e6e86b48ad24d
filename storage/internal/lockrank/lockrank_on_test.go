//go:build lockrank

package lockrank

import "testing"

// TestSameRank: taking a second lock of the rank held (two partitions'
// locks at once) is an inversion too.
func TestSameRank(t *testing.T) {
	var a, b Mutex[test1]
	a.Lock()
	defer a.Unlock()
	defer func() {
		if recover() == nil {
			t.Fatal("taking two locks of one rank did not panic")
		}
	}()
	b.Lock()
}
