//go:build interop

package main

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInteropDiffMetadata: Metadata for a known topic, an unknown one
// without and with auto-create, an invalid name and an unknown topic id,
// at the versions clients send.
func TestInteropDiffMetadata(t *testing.T) {
	d := newDiffRun(t)
	known, unknown, auto := diffTopic(t, "known"), diffTopic(t, "unknown"), diffTopic(t, "auto")
	d.same("CreateTopics", func() kmsg.Request { return createTopicReq(known, 3, 1) })
	d.waitTopics(known)
	for _, v := range []int16{1, 4, 9, vMetadata} {
		d.same("Metadata known", func() kmsg.Request { return metadataReq(v, false, known) })
	}
	d.same("Metadata unknown", func() kmsg.Request { return metadataReq(vMetadata, false, unknown) })
	d.same("Metadata invalid name", func() kmsg.Request { return metadataReq(vMetadata, true, "bad name!") })
	d.same("Metadata unknown id", func() kmsg.Request {
		req := metadataReq(vMetadata, false)
		rt := kmsg.NewMetadataRequestTopic()
		rt.TopicID = [16]byte{1, 2, 3}
		req.Topics = append(req.Topics, rt)
		return req
	})
	d.same("Metadata auto-create", func() kmsg.Request { return metadataReq(vMetadata, true, auto) })
	d.waitTopics(auto)
	d.same("Metadata auto-created", func() kmsg.Request { return metadataReq(vMetadata, false, auto) })
	d.same("Metadata authorized operations", func() kmsg.Request {
		req := metadataReq(vMetadata, false, known)
		req.IncludeTopicAuthorizedOperations = true
		return req
	})
}
