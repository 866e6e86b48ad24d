package protocol

import (
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handler answers one request. It runs on the connection's reader goroutine,
// in request order; work that must wait (fsync, long poll) goes into
// r.wait, which the writer runs, still in order, before encoding the
// response. A returned error closes the connection.
type handler func(r *request) (kmsg.Response, error)

// api is one served API and the versions it serves.
type api struct {
	key      int16
	min, max int16
	handle   handler
}

// apis is the table of served APIs, filled by each API file's init.
var apis = map[int16]api{}

// register adds an API. Each API file calls it exactly once, from init.
func register(key kmsg.Key, min, max int16, h handler) {
	k := int16(key)
	if _, dup := apis[k]; dup {
		panic(fmt.Sprintf("protocol: API %d registered twice", k))
	}
	if probe := kmsg.RequestForKey(k); probe == nil || max > probe.MaxVersion() {
		panic(fmt.Sprintf("protocol: API %d v%d is beyond what kmsg knows", k, max))
	}
	apis[k] = api{key: k, min: min, max: max, handle: h}
}

// supportedAPIs returns the served APIs sorted by key, for ApiVersions.
func supportedAPIs() []api {
	out := make([]api, 0, len(apis))
	for _, a := range apis {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}
