package protocol

// DeleteTopics v0–v6: by name, or (v6+) by name or topic id. The topic's
// partitions stop taking produce and fetch at once; its objects become
// garbage for the object collector.

import (
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
		n := name
		targets = append(targets, kmsg.DeleteTopicsRequestTopic{Topic: &n})
	}
	for _, rt := range targets {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		name, code := r.deleteTarget(req, rt)
		if code == 0 {
			if err := r.s.log.DeleteTopic(r.ctx(), name); err != nil {
				code, st.ErrorMessage = errorCode(err), errorMessage(err)
			}
		}
		st.ErrorCode = r.code(code)
		if st.Topic == nil && code == 0 {
			st.Topic = &name
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// deleteTarget resolves a topic named by name or id.
func (r *request) deleteTarget(req *kmsg.DeleteTopicsRequest, rt kmsg.DeleteTopicsRequestTopic) (string, int16) {
	if rt.Topic != nil && *rt.Topic != "" {
		if _, ok := r.s.log.Topic(*rt.Topic); !ok {
			return "", kerr.UnknownTopicOrPartition.Code
		}
		return *rt.Topic, 0
	}
	t, ok := r.s.log.TopicByID(metadata.TopicID(rt.TopicID))
	if !ok {
		return "", kerr.UnknownTopicID.Code
	}
	return t.Name, 0
}
