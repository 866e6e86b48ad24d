package protocol

// CreatePartitions v0–v3: grow a topic to count partitions (never shrink:
// INVALID_PARTITIONS). Assignments are accepted and ignored: this broker
// leads every partition. A topic named twice is INVALID_REQUEST.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.CreatePartitions, 0, 3, handleCreatePartitions) }

func handleCreatePartitions(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	count := map[string]int{}
	for _, rt := range req.Topics {
		count[rt.Topic]++
	}
	for _, rt := range req.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		var err error
		if count[rt.Topic] > 1 {
			err = fmt.Errorf("%w: topic %s is named more than once", kerr.InvalidRequest, rt.Topic)
		} else {
			err = r.s.log.CreatePartitions(r.ctx(), rt.Topic, rt.Count, req.ValidateOnly)
		}
		st.ErrorCode, st.ErrorMessage = r.codeOf(err), errorMessage(err)
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
