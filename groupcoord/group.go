package groupcoord

import (
	"bytes"
	"time"

	"github.com/sediment-io/sediment/metadata"
)

// State is a group's state in the classic protocol.
type State int

// The states, named as Kafka names them in DescribeGroups and ListGroups.
const (
	StateEmpty State = iota
	StatePreparingRebalance
	StateCompletingRebalance
	StateStable
	StateDead
)

var stateNames = [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}

// String returns the state as Kafka names it.
func (s State) String() string { return stateNames[s] }

// newMemberJoinTimeout bounds how long a new member's first JoinGroup may
// wait without the member heartbeating (Kafka's NewMemberJoinTimeoutMs): a
// client that went away while waiting is dropped instead of being carried
// into the next generation.
const newMemberJoinTimeout = 5 * time.Minute

// Protocol is one assignment protocol a member supports, with its metadata
// (for consumers: the subscription).
type Protocol struct {
	Name     string
	Metadata []byte
}

// member is one member of a group. The group's mutex guards it.
type member struct {
	id               string
	instanceID       *string
	clientID         string
	clientHost       string
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	protocols        []Protocol
	assignment       []byte
	joinOrder        uint64 // the leader is the earliest member still present
	isNew            bool   // has not completed a join yet
	joinedAt         time.Time
	skipAssignmentOK bool // its pending JoinGroup understands KIP-814 (v9+)

	joinWait chan JoinResult // set while its JoinGroup waits
	syncWait chan SyncResult // set while its SyncGroup waits

	sessionTimer Timer
	sessionSeq   uint64 // invalidates fired session timers
}

// metadataFor returns the member's metadata for protocol.
func (m *member) metadataFor(protocol string) []byte {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

// sameProtocols says whether protocols are exactly the member's.
func (m *member) sameProtocols(protocols []Protocol) bool {
	if len(protocols) != len(m.protocols) {
		return false
	}
	for i, p := range protocols {
		if p.Name != m.protocols[i].Name || !bytes.Equal(p.Metadata, m.protocols[i].Metadata) {
			return false
		}
	}
	return true
}

// pendingMember is a member id handed out with MEMBER_ID_REQUIRED (KIP-394)
// that has not joined yet; it expires after the session timeout.
type pendingMember struct {
	timer Timer
}

// offsetState is one committed offset in memory, as durable in metadata.
type offsetState struct {
	metadata.CommittedOffset
}

// isStatic says whether the member has a group.instance.id.
func (m *member) isStatic() bool { return m.instanceID != nil }

// instance returns the member's instance id, "" when dynamic.
func (m *member) instance() string {
	if m.instanceID == nil {
		return ""
	}
	return *m.instanceID
}

func strPtr(s string) *string { return &s }

// cloneStr copies an optional string so that no caller's memory is kept.
func cloneStr(s *string) *string {
	if s == nil {
		return nil
	}
	return strPtr(*s)
}
