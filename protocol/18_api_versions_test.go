package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// checkAPIKeys asserts that keys are exactly the registered APIs.
func checkAPIKeys(t testing.TB, what string, keys []kmsg.ApiVersionsResponseApiKey) {
	t.Helper()
	if len(keys) != len(apis) {
		t.Errorf("%s: %d keys, %d registered", what, len(keys), len(apis))
	}
	for _, k := range keys {
		a, ok := apis[k.ApiKey]
		if !ok || a.min != k.MinVersion || a.max != k.MaxVersion {
			t.Errorf("%s: key %d v%d-v%d, registered %+v", what, k.ApiKey, k.MinVersion, k.MaxVersion, a)
		}
	}
}

func TestApiVersions(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	for v := int16(0); v <= 5; v++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version, req.ClientSoftwareName, req.ClientSoftwareVersion = v, "raw-test", "1.0"
		resp := roundTrip[*kmsg.ApiVersionsResponse](c, req)
		wantCode(t, "ApiVersions", resp.ErrorCode, 0)
		checkAPIKeys(t, "ApiVersions", resp.ApiKeys)
	}
}

// TestApiVersionsUnknownVersion: KIP-511. A version we do not know is
// answered at v0 with UNSUPPORTED_VERSION and our ranges, whatever the
// request body holds, and the connection stays usable.
func TestApiVersionsUnknownVersion(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	for _, v := range []int16{6, 99, -1} {
		frame := []byte{0, 0, 0, 0, 0, 18, byte(uint16(v) >> 8), byte(v), 0, 0, 0, 7, 0, 3, 'x', 'y', 'z', 0xfe, 0xfe, 0xfe}
		frame[3] = byte(len(frame) - 4)
		c.write(frame)
		corr, body, err := c.readFrame()
		if err != nil || corr != 7 {
			t.Fatalf("v%d: corr %d, err %v", v, corr, err)
		}
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = 0
		if err := resp.ReadFrom(body); err != nil {
			t.Fatalf("v%d: decode v0 answer: %v", v, err)
		}
		wantCode(t, "unknown ApiVersions version", resp.ErrorCode, kerr.UnsupportedVersion.Code)
		checkAPIKeys(t, "fallback", resp.ApiKeys)
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	wantCode(t, "after fallback", roundTrip[*kmsg.ApiVersionsResponse](c, req).ErrorCode, 0)
}
