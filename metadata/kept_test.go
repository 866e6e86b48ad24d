package metadata_test

import (
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

// TestKeptBatchesContinue: kept batches continue the log while the history
// says each of their epochs runs to their end (a consumer that read them
// would see no divergence), and stop continuing it once another leader's
// epoch starts at or below them.
func TestKeptBatchesContinue(t *testing.T) {
	h := func(es ...metadata.EpochEntry) metadata.LeaderEpochs { return metadata.LeaderEpochs{Entries: es} }
	e := func(epoch int32, start int64) metadata.EpochEntry {
		return metadata.EpochEntry{Epoch: epoch, StartOffset: start}
	}
	kept := metadata.KeptBatches{Start: 5, End: 9, Epochs: []metadata.EpochEntry{e(1, 5)}}
	twoRuns := metadata.KeptBatches{Start: 5, End: 12, Epochs: []metadata.EpochEntry{e(1, 5), e(2, 9)}}
	for _, tc := range []struct {
		name      string
		kept      metadata.KeptBatches
		h         metadata.LeaderEpochs
		committed int64
		want      bool
	}{
		{"its own epoch is current", kept, h(e(0, 0), e(1, 3)), 5, true},
		{"an acquisition kept them before", twoRuns, h(e(0, 0), e(1, 3), e(2, 9)), 5, true},
		{"another leader started at their start", kept, h(e(0, 0), e(1, 3), e(2, 5)), 5, false},
		{"a takeover replaced their later epoch", twoRuns, h(e(0, 0), e(1, 3), e(3, 5)), 5, false},
		{"their epoch ends inside them", kept, h(e(0, 0), e(1, 3), e(2, 7)), 5, false},
		{"their epoch is not in the history", kept, h(e(0, 0), e(2, 3)), 5, false},
		{"their epoch is above the current one", kept, h(e(0, 0)), 5, false},
		{"the committed log ends elsewhere", kept, h(e(0, 0), e(1, 3)), 6, false},
		{"nothing kept", metadata.KeptBatches{}, h(e(0, 0)), 0, false},
	} {
		if got := tc.kept.Continues(tc.h, tc.committed); got != tc.want {
			t.Errorf("%s: Continues = %v, want %v", tc.name, got, tc.want)
		}
	}
}
