package protocol

// AlterConfigs v0–v2 (the legacy, non-incremental form): the configs given
// replace every dynamic config of the resource; configs not listed return to
// their defaults. A null value is INVALID_REQUEST. validate_only checks
// without changing anything.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.AlterConfigs, 0, 2, handleAlterConfigs) }

func handleAlterConfigs(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, rr := range req.Resources {
		res := kmsg.NewAlterConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		next, err := replacementConfigs(rr)
		if err != nil {
			res.ErrorCode, res.ErrorMessage = r.code(kerr.InvalidRequest.Code), errorMessage(err)
		} else {
			edit := func(map[string]string) (map[string]string, error) { return next, nil }
			res.ErrorCode, res.ErrorMessage = r.alterResource(rr.ResourceType, rr.ResourceName, edit, req.ValidateOnly)
		}
		resp.Resources = append(resp.Resources, res)
	}
	return resp, nil
}

func replacementConfigs(rr kmsg.AlterConfigsRequestResource) (map[string]string, error) {
	next := map[string]string{}
	for _, c := range rr.Configs {
		if c.Value == nil {
			return nil, fmt.Errorf("config %s has a null value", c.Name)
		}
		if _, dup := next[c.Name]; dup {
			return nil, fmt.Errorf("config %s appears twice", c.Name)
		}
		next[c.Name] = *c.Value
	}
	return next, nil
}
