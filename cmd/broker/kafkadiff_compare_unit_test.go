//go:build interop

package main

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInteropDiffCompare: the comparison names the path of every field
// that differs, matches set-like lists by key, and the allowed list's
// patterns match the paths they mean and no others.
func TestInteropDiffCompare(t *testing.T) {
	a, b := kmsg.NewPtrMetadataResponse(), kmsg.NewPtrMetadataResponse()
	for i, r := range []*kmsg.MetadataResponse{a, b} {
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = kmsg.StringPtr("t")
		for p := range int32(2 - i) {
			mp := kmsg.NewMetadataResponseTopicPartition()
			mp.Partition, mp.ErrorCode = p, int16(i)
			mt.Partitions = append(mt.Partitions, mp)
		}
		r.Topics = append(r.Topics, mt)
	}
	var paths []string
	for _, fd := range diffResponses(a, b) {
		paths = append(paths, fd.path)
	}
	if want := []string{"Topics[0].Partitions[0].ErrorCode", "Topics[0].Partitions[1]"}; !slices.Equal(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}

	ca, cb := kmsg.NewPtrDescribeConfigsResponse(), kmsg.NewPtrDescribeConfigsResponse()
	ca.Resources = []kmsg.DescribeConfigsResponseResource{{Configs: []kmsg.DescribeConfigsResponseResourceConfig{
		{Name: "a", Value: kmsg.StringPtr("1")}, {Name: "b", Value: kmsg.StringPtr("2")}}}}
	cb.Resources = []kmsg.DescribeConfigsResponseResource{{Configs: []kmsg.DescribeConfigsResponseResourceConfig{
		{Name: "b", Value: kmsg.StringPtr("3")}, {Name: "a", Value: kmsg.StringPtr("1")}}}}
	got := diffResponses(ca, cb)
	if len(got) != 1 || got[0].path != "Resources[0].Configs[b].Value" {
		t.Errorf("keyed configs: %+v", got)
	}

	for _, tc := range []struct {
		pattern, path string
		match         bool
	}{
		{"Topics[*].TopicID", "Topics[3].TopicID", true},
		{"Topics[*].TopicID", "Topics[3].Partitions[0].TopicID", false},
		{"*.Configs[*]", "Resources[0].Configs[retention.ms]", true},
		{"*.Configs[*]", "Resources[0].Configs[retention.ms].Value", false},
		{"*.Configs[sediment.table.*]", "Topics[0].Configs[sediment.table.format]", true},
		{"*.Configs[sediment.table.*]", "Topics[0].Configs[segment.ms]", false},
		{"Topics[0].**", "Topics[0].Partitions[1].ErrorCode", true},
		{"Topics[0].**", "Topics[0]", true},
		{"Topics[0].**", "Topics[1].ErrorCode", false},
		{"**", "Anything[0].At.All", true},
	} {
		if got := globMatch(tc.pattern, tc.path); got != tc.match {
			t.Errorf("globMatch(%q, %q) = %v", tc.pattern, tc.path, got)
		}
	}
	if !stepMatch("Produce idempotent*duplicate", "Produce idempotent old duplicate") || stepMatch("Fetch*", "ListOffsets") {
		t.Error("stepMatch")
	}
}
