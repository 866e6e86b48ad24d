package protocol

// ApiVersions v0–v5. The answer is computed from the registered handlers.
// A request at a version we do not serve is answered at v0 with
// UNSUPPORTED_VERSION and the full key list (KIP-511), so the client can
// retry at a version we do; that request is never parsed, since its layout
// is unknown.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.ApiVersions, 0, 5, handleApiVersions) }

func handleApiVersions(r *request) (kmsg.Response, error) {
	resp := r.kreq.ResponseKind().(*kmsg.ApiVersionsResponse)
	resp.ApiKeys = apiKeys()
	return resp, nil
}

func apiVersionsFallback(r *request) kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = r.code(kerr.UnsupportedVersion.Code)
	resp.ApiKeys = apiKeys()
	return resp
}

func apiKeys() []kmsg.ApiVersionsResponseApiKey {
	var keys []kmsg.ApiVersionsResponseApiKey
	for _, a := range supportedAPIs() {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.key, a.min, a.max
		keys = append(keys, k)
	}
	return keys
}
