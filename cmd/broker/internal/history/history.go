package history

import (
	"fmt"
	"sync"
	"time"
)

// Partition names one partition of one topic.
type Partition struct {
	Topic     string
	Partition int32
}

func (p Partition) String() string { return fmt.Sprintf("%s/%d", p.Topic, p.Partition) }

// Produce is one produce attempt of one value. Start is taken before the
// client was handed the record and End when its outcome arrived, so the
// real produce lies inside [Start, End].
type Produce struct {
	Partition  Partition // where the acknowledgement placed it (any value when Err is set)
	Value      string    // unique over the history
	Start, End time.Time
	Offset     int64 // the acknowledged offset; meaningless when Err is set
	Err        error // nil: acknowledged
}

// Acked reports whether the broker acknowledged the value.
func (p Produce) Acked() bool { return p.Err == nil }

// Read is one record a consumer received.
type Read struct {
	Partition Partition
	Offset    int64
	Value     string
}

// Entry is one record of a partition's final log.
type Entry struct {
	Offset int64
	Value  string
}

// OwnerChange is one change of a partition's owner key: at Revision, Node
// put it with Epoch, or (Released) it was deleted, by a release or by the
// expiry of the owner's lease.
type OwnerChange struct {
	Revision  int64
	Partition Partition
	Node      int32
	Epoch     int32
	Released  bool
}

// Sample is who owned which partition, as one observer saw it at one etcd
// revision.
type Sample struct {
	Revision int64
	Owners   map[Partition]int32
	Source   string // who observed it, for messages
}

// Commit is one index entry a broker committed: offsets [BaseOffset,
// EndOffset) of a partition, at Revision.
type Commit struct {
	Revision   int64
	Partition  Partition
	Node       int32
	BaseOffset int64
	EndOffset  int64
}

// History collects a test's records; its methods may be called from any
// goroutine.
type History struct {
	mu       sync.Mutex // guards everything below
	produces []Produce
	reads    []Read
	changes  []OwnerChange
	samples  []Sample
	commits  []Commit
}

// New returns an empty history.
func New() *History { return &History{} }

// AddProduce records a finished produce attempt.
func (h *History) AddProduce(p Produce) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.produces = append(h.produces, p)
}

// AddRead records a record a consumer received.
func (h *History) AddRead(r Read) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reads = append(h.reads, r)
}

// AddOwnerChange records a change of an owner key.
func (h *History) AddOwnerChange(c OwnerChange) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.changes = append(h.changes, c)
}

// AddSample records an ownership sample.
func (h *History) AddSample(s Sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples = append(h.samples, s)
}

// AddCommit records an index commit.
func (h *History) AddCommit(c Commit) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.commits = append(h.commits, c)
}

// Produces returns the produce attempts recorded so far.
func (h *History) Produces() []Produce {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Produce(nil), h.produces...)
}

// Acked returns how many produce attempts were acknowledged so far.
func (h *History) Acked() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, p := range h.produces {
		if p.Acked() {
			n++
		}
	}
	return n
}

// Commits returns the index commits recorded so far.
func (h *History) Commits() []Commit {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Commit(nil), h.commits...)
}

// OwnerChanges returns the owner-key changes recorded so far.
func (h *History) OwnerChanges() []OwnerChange {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]OwnerChange(nil), h.changes...)
}
