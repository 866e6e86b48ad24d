package protocol

// DeleteTopics v0–v6: by name, or (v6+) by name or topic id. The topic's
// partitions stop taking produce and fetch at once; its objects become
// garbage for the object collector. As in Kafka, a topic named twice, an
// entry with both a name and an id (or neither), and a name whose id another
// entry gives are INVALID_REQUEST, and such a topic is not deleted.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/metadata"
)

func init() { register(kmsg.DeleteTopics, 0, 6, handleDeleteTopics) }

func handleDeleteTopics(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	targets := req.Topics
	for _, name := range req.TopicNames { // v0-v5
		targets = append(targets, kmsg.DeleteTopicsRequestTopic{Topic: &name})
	}
	answer := func(name *string, id [16]byte, code int16, err error) {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID, st.ErrorCode, st.ErrorMessage = name, id, r.code(code), errorMessage(err)
		resp.Topics = append(resp.Topics, st)
	}
	for _, t := range r.deleteTargets(targets, answer) {
		var code int16
		var err error
		if t.unknown != 0 {
			code = t.unknown
		} else if err = r.s.log.DeleteTopic(r.ctx(), t.name); err != nil {
			code = errorCode(err)
		}
		name := &t.name
		if t.unknown == kerr.UnknownTopicID.Code {
			name = nil
		}
		answer(name, t.id, code, err)
	}
	return resp, nil
}

// deleteTarget is one topic a DeleteTopics request may delete.
type deleteTarget struct {
	name    string
	id      [16]byte // as the request gave it (zero when named)
	unknown int16    // the error code when the topic does not exist
}

// deleteTargets resolves the request's entries to topics, answering the
// malformed ones (via answer) with Kafka's INVALID_REQUEST messages.
func (r *request) deleteTargets(entries []kmsg.DeleteTopicsRequestTopic,
	answer func(*string, [16]byte, int16, error)) []deleteTarget {
	invalid := func(name *string, id [16]byte, msg string) {
		answer(name, id, kerr.InvalidRequest.Code, errors.New(msg))
	}
	names, ids := map[string]int{}, map[[16]byte]int{}
	for _, e := range entries {
		switch {
		case e.Topic == nil && e.TopicID == [16]byte{}:
			invalid(nil, e.TopicID, "Neither topic name nor id were specified.")
		case e.Topic != nil && e.TopicID != [16]byte{}:
			invalid(e.Topic, e.TopicID, "You may not specify both topic name and topic id.")
		case e.Topic != nil:
			names[*e.Topic]++
		default:
			ids[e.TopicID]++
		}
	}
	var out []deleteTarget
	byID := map[string]bool{}
	for _, e := range entries { // request order, each id once
		if e.Topic != nil || e.TopicID == [16]byte{} || ids[e.TopicID] == 0 {
			continue
		}
		n := ids[e.TopicID]
		ids[e.TopicID] = 0
		switch t, ok := r.s.log.TopicByID(metadata.TopicID(e.TopicID)); {
		case n > 1:
			invalid(nil, e.TopicID, "Duplicate topic id.")
		case !ok:
			out = append(out, deleteTarget{id: e.TopicID, unknown: kerr.UnknownTopicID.Code})
		default:
			byID[t.Name] = true
			out = append(out, deleteTarget{name: t.Name, id: e.TopicID})
		}
	}
	for _, e := range entries { // request order, each name once
		if e.Topic == nil || e.TopicID != [16]byte{} || names[*e.Topic] == 0 {
			continue
		}
		name, n := *e.Topic, names[*e.Topic]
		names[name] = 0
		switch _, ok := r.s.log.Topic(name); {
		case n > 1:
			invalid(&name, [16]byte{}, "Duplicate topic name.")
		case byID[name]:
			invalid(&name, [16]byte{}, "The provided topic name maps to an ID that was already supplied.")
		case !ok:
			out = append(out, deleteTarget{name: name, unknown: kerr.UnknownTopicOrPartition.Code})
		default:
			out = append(out, deleteTarget{name: name})
		}
	}
	return out
}
