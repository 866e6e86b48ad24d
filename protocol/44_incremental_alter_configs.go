package protocol

// IncrementalAlterConfigs v0–v1 (KIP-339): SET, DELETE (back to the
// default), APPEND and SUBTRACT (list configs only, e.g. cleanup.policy),
// for topics and the broker. A config named twice in one resource, or a null
// value for anything but DELETE, is INVALID_REQUEST; a bad name or value is
// INVALID_CONFIG with a message that names it. validate_only checks without
// changing anything.

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.IncrementalAlterConfigs, 0, 1, handleIncrementalAlterConfigs) }

func handleIncrementalAlterConfigs(r *request) (kmsg.Response, error) {
	req := r.kreq.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, rr := range req.Resources {
		res := kmsg.NewIncrementalAlterConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		if err := checkIncrementalConfigs(rr); err != nil {
			res.ErrorCode, res.ErrorMessage = r.code(kerr.InvalidRequest.Code), errorMessage(err)
		} else {
			edit := func(cfg map[string]string) (map[string]string, error) {
				if cfg == nil {
					// A topic created without configs has none (nil),
					// and writing to a nil map panics.
					cfg = map[string]string{}
				}
				for _, c := range rr.Configs {
					if err := applyIncremental(cfg, rr.ResourceType, c); err != nil {
						return nil, err
					}
				}
				return cfg, nil
			}
			res.ErrorCode, res.ErrorMessage = r.alterResource(rr.ResourceType, rr.ResourceName, edit, req.ValidateOnly)
		}
		resp.Resources = append(resp.Resources, res)
	}
	return resp, nil
}

// checkIncrementalConfigs refuses, as Kafka's broker does before anything
// is validated, a config named twice and a null value for any operation but
// DELETE (INVALID_REQUEST).
func checkIncrementalConfigs(rr kmsg.IncrementalAlterConfigsRequestResource) error {
	seen := map[string]bool{}
	var nulls []string
	for _, c := range rr.Configs {
		if seen[c.Name] {
			return fmt.Errorf("config %s appears twice", c.Name)
		}
		seen[c.Name] = true
		if c.Value == nil && c.Op != kmsg.IncrementalAlterConfigOpDelete {
			nulls = append(nulls, c.Name)
		}
	}
	if len(nulls) > 0 {
		return fmt.Errorf("null value not supported for %s", strings.Join(nulls, ", "))
	}
	return nil
}
