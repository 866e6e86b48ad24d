package cluster

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/sediment-io/sediment/metadata"
)

// Key prefixes, relative to the metadata prefix.
const (
	brokersPrefix    = "brokers/"
	membersPrefix    = "members/"
	placementPrefix  = "placement/"
	shardsPlacement  = "placement/shards"
	controllerPrefix = "controller" // concurrency.Election adds the "/"
	topicsPrefix     = "topics/"
	ownPrefix        = "own/"
)

func brokerKey(node int32) string { return fmt.Sprintf("%s%010d", brokersPrefix, node) }

func memberKey(node int32) string { return fmt.Sprintf("%s%010d", membersPrefix, node) }

func placementKey(id metadata.TopicID) string { return placementPrefix + id.String() }

// brokerRecord is the value of brokers/<id>.
type brokerRecord struct {
	NodeID     int32  `json:"node_id"`
	Host       string `json:"host"`
	Port       int32  `json:"port"`
	Rack       string `json:"rack,omitempty"`
	Durability string `json:"durability"`
	StartedMs  int64  `json:"started_ms"`
}

func (b brokerRecord) broker() Broker {
	return Broker{NodeID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack}
}

func (b brokerRecord) addr() string { return fmt.Sprintf("%s:%d", b.Host, b.Port) }

// Member is the value of members/<id>: what the cluster remembers of a
// broker after it is gone.
type Member struct {
	NodeID     int32  `json:"node_id"`
	Durability string `json:"durability"`
	Host       string `json:"host"`
	Port       int32  `json:"port"`
	Rack       string `json:"rack,omitempty"`
	// TakenOver: an operator moved the partitions of this (wal-mode,
	// gone) broker by force, accepting the loss of what its WAL held.
	TakenOver bool `json:"taken_over"`
}

// waitedFor reports whether the partitions of this gone broker wait for it.
func (m Member) waitedFor() bool { return m.Durability == "wal" && !m.TakenOver }

// placementRecord is the value of placement/<topic-id-hex> and of
// placement/shards: the target owner of each partition or shard, -1 for
// none (no live broker).
type placementRecord struct {
	Owners []int32 `json:"owners"`
	// Topics, in placement/tables only: the table topic (id hex) of each
	// owner.
	Topics []string `json:"topics,omitempty"`
}

func decodeBroker(v []byte) (any, error) {
	var b brokerRecord
	err := json.Unmarshal(v, &b)
	return b, err
}

func decodeMember(v []byte) (any, error) {
	var m Member
	err := json.Unmarshal(v, &m)
	return m, err
}

func decodePlacement(v []byte) (any, error) {
	var p placementRecord
	err := json.Unmarshal(v, &p)
	return p, err
}

func decodeOwner(v []byte) (any, error) {
	var r metadata.OwnerRecord
	err := json.Unmarshal(v, &r)
	return r, err
}

// decodeControllerValue reads the node id a controller candidate
// campaigns with.
func decodeControllerValue(v []byte) (any, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 32)
	return int32(n), err
}

func decodeNothing([]byte) (any, error) { return nil, nil }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("cluster: encode %T: %v", v, err)) // plain structs only
	}
	return string(b)
}
