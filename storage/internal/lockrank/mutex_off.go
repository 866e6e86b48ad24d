//go:build !lockrank

package lockrank

import "sync"

// Enabled reports whether lock ranks are checked (the lockrank build tag).
const Enabled = false

// Mutex is a sync.Mutex of lock class C.
type Mutex[C Class] struct{ sync.Mutex }

// RWMutex is a sync.RWMutex of lock class C.
type RWMutex[C Class] struct{ sync.RWMutex }
