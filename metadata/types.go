package metadata

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
)

// Sentinel errors of the typed layer.
var (
	ErrTopicExists    = errors.New("metadata: topic already exists")
	ErrUnknownTopic   = errors.New("metadata: unknown topic")
	ErrOffsetGap      = errors.New("metadata: segment does not continue the partition's log")
	ErrTooManyRetries = errors.New("metadata: gave up after repeated conflicts")
)

// TopicID is a topic's 16-byte UUID (KIP-516).
type TopicID [16]byte

// NewTopicID returns a random version-4 UUID that is not the zero id.
func NewTopicID() TopicID {
	var id TopicID
	for id == (TopicID{}) {
		if _, err := rand.Read(id[:]); err != nil {
			panic(fmt.Sprintf("metadata: crypto/rand: %v", err))
		}
		id[6] = id[6]&0x0f | 0x40
		id[8] = id[8]&0x3f | 0x80
	}
	return id
}

// String is the lowercase hex form used in keys.
func (id TopicID) String() string { return hex.EncodeToString(id[:]) }

// MarshalText implements encoding.TextMarshaler.
func (id TopicID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (id *TopicID) UnmarshalText(b []byte) error {
	if hex.DecodedLen(len(b)) != len(id) {
		return fmt.Errorf("metadata: topic id %q: want 32 hex digits", b)
	}
	_, err := hex.Decode(id[:], b)
	return err
}

// Topic is a topic's durable description.
type Topic struct {
	Name       string            `json:"name"`
	ID         TopicID           `json:"id"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"` // only the configs set on the topic
	CreatedMs  int64             `json:"created_ms"`
	Version    int64             `json:"-"` // KV version this was read at
}

// ProducerBatch is one of the last batches a producer wrote to a partition,
// kept to answer retried duplicates with the original offset.
type ProducerBatch struct {
	FirstSeq   int32 `json:"first_seq"`
	LastSeq    int32 `json:"last_seq"`
	BaseOffset int64 `json:"base_offset"`
	LastOffset int64 `json:"last_offset"`
}

// ProducerState is one idempotent producer's state in one partition.
// LastTimeMs is when the broker last appended a batch of the producer, on
// the broker's clock: producer.id.expiration.ms counts from it.
//
// The transactional fields follow Kafka's ProducerStateEntry: CoordEpoch is
// the coordinator epoch of the producer's latest transaction marker (a
// marker from an older coordinator is fenced), -1 when none (as in Kafka;
// the producer codec's first version, which has no such field, reads as
// -1); TxnOpen and TxnFirst say
// whether the producer has a transaction open in the partition and at
// which offset it began (what holds the last stable offset back).
// Aborted lists the producer's aborted transactions, oldest first: in a
// segment's producer delta those whose abort marker is in the segment, in
// the state read back every one still in the log (see FoldProducers).
type ProducerState struct {
	ID         int64           `json:"id"`
	Epoch      int16           `json:"epoch"`
	LastTimeMs int64           `json:"last_time_ms"`
	Batches    []ProducerBatch `json:"batches"` // oldest first, at most ProducerWindow
	CoordEpoch int32           `json:"coord_epoch,omitempty"`
	TxnOpen    bool            `json:"txn_open,omitempty"`
	TxnFirst   int64           `json:"txn_first,omitempty"`
	Aborted    []TxnRange      `json:"aborted,omitempty"`
}

// TxnRange is one aborted transaction of a producer: its first offset and
// the offset of its abort marker.
type TxnRange struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

// transactional reports whether st carries any transactional state (and so
// needs the producer codec's second version).
func (st *ProducerState) transactional() bool {
	return st.CoordEpoch != -1 || st.TxnOpen || len(st.Aborted) > 0
}

// PartitionState is a partition's durable state.
type PartitionState struct {
	LogStartOffset int64 `json:"log_start_offset"`
	// NextOffset ends the part of the log committed to the object store:
	// every offset below it (and at or above LogStartOffset) is in a Segment.
	NextOffset int64 `json:"next_offset"`
	// Producers is the idempotent producers' state in the encoding before
	// producer deltas (see producers.go): read, and moved into a snapshot
	// by the partition's next CommitSegments; never written any more.
	Producers []ProducerState `json:"producers,omitempty"`
	Version   int64           `json:"-"` // KV version this was read at
}

// Segment says that offsets [BaseOffset, EndOffset) of one partition live in
// Object at bytes [Pos, Pos+Len): whole record batches, stored verbatim.
type Segment struct {
	Topic        TopicID `json:"topic"`
	Partition    int32   `json:"partition"`
	BaseOffset   int64   `json:"base_offset"`
	EndOffset    int64   `json:"end_offset"`
	Object       string  `json:"object"`
	Pos          int64   `json:"pos"`
	Len          int64   `json:"len"`
	MaxTimestamp int64   `json:"max_timestamp"`
	// Manifest marks an entry that folds a run of older entries: Object is
	// then a manifest object in the bucket listing them (see fold.go),
	// Len their total length, MaxTimestamp their greatest, and Pos 0.
	// Entries is, for a manifest entry, how many entries it folds.
	Manifest bool  `json:"manifest,omitempty"`
	Entries  int   `json:"entries,omitempty"`
	Version  int64 `json:"-"` // KV version this was read at
	// Folded is, for a manifest entry that a caller removes or replaces,
	// the entries its manifest lists: their objects' references go with
	// it. Never stored.
	Folded []Segment `json:"-"`
}

func topicKey(name string) string { return "topics/" + name }

func partPrefix(id TopicID) string { return "parts/" + id.String() + "/" }

func partKey(id TopicID, p int32) string { return fmt.Sprintf("%s%010d", partPrefix(id), p) }

func indexPrefix(id TopicID) string { return "index/" + id.String() + "/" }

func indexPartPrefix(id TopicID, p int32) string {
	return fmt.Sprintf("%s%010d/", indexPrefix(id), p)
}

func indexKey(id TopicID, p int32, base int64) string {
	return fmt.Sprintf("%s%020d", indexPartPrefix(id, p), base)
}

const (
	brokerConfigKey = "config/broker"
	producerIDKey   = "producerids/next"
)
