//go:build interop

package main

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInteropDiffApiVersions: the APIs and versions each broker serves and
// the features it announces. Every API Apache Kafka serves and Sediment
// does not is listed with the issue that adds it.
func TestInteropDiffApiVersions(t *testing.T) {
	d := newDiffRun(t)
	d.same("ApiVersions", func() kmsg.Request {
		req := kmsg.NewPtrApiVersionsRequest()
		req.SetVersion(3)
		req.ClientSoftwareName, req.ClientSoftwareVersion = "sediment-kafkadiff", "1.0"
		return req
	})
}
