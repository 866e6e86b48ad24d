package groupcoord

import "encoding/binary"

// consumerProtocolType is the protocol type of Kafka consumers, whose
// member metadata is a subscription the coordinator can read.
const consumerProtocolType = "consumer"

// consumerTopics decodes the topics of a consumer protocol subscription.
// Every version (0-3) opens with the same two fields: version int16 and
// topics [string]; the rest is not needed. ok is false for metadata that
// does not decode.
func consumerTopics(meta []byte) (topics []string, ok bool) {
	if len(meta) < 6 {
		return nil, false
	}
	n := int32(binary.BigEndian.Uint32(meta[2:6]))
	b := meta[6:]
	if n < 0 || int(n) > len(b)/2 {
		return nil, false
	}
	topics = make([]string, 0, n)
	for range n {
		if len(b) < 2 {
			return nil, false
		}
		l := int16(binary.BigEndian.Uint16(b))
		b = b[2:]
		if l < 0 || int(l) > len(b) {
			return nil, false
		}
		topics = append(topics, string(b[:l]))
		b = b[l:]
	}
	return topics, true
}

// subscribedLocked returns the topics the group's members subscribe to.
// ok is false when that is unknown (not a consumer group, or metadata that
// does not decode); callers then assume every topic is subscribed.
func (g *group) subscribedLocked() (map[string]bool, bool) {
	if g.protocolType != consumerProtocolType {
		return nil, false
	}
	subs := map[string]bool{}
	for _, m := range g.members {
		meta := m.metadataFor(g.protocol)
		if g.protocol == "" && len(m.protocols) > 0 {
			meta = m.protocols[0].Metadata
		}
		topics, ok := consumerTopics(meta)
		if !ok {
			return nil, false
		}
		for _, t := range topics {
			subs[t] = true
		}
	}
	return subs, true
}
