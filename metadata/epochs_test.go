package metadata_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/sediment-io/sediment/metadata"
)

type entries = []metadata.EpochEntry

func history(es ...metadata.EpochEntry) metadata.LeaderEpochs {
	return metadata.LeaderEpochs{Entries: es}
}

func e(epoch int32, start int64) metadata.EpochEntry {
	return metadata.EpochEntry{Epoch: epoch, StartOffset: start}
}

// TestEndOffsetFor follows Kafka's LeaderEpochFileCache.endOffsetFor case by
// case.
func TestEndOffsetFor(t *testing.T) {
	h := history(e(2, 10), e(5, 40), e(7, 90))
	cases := []struct {
		name      string
		h         metadata.LeaderEpochs
		requested int32
		epoch     int32
		end       int64
	}{
		{"current epoch: the log end offset", h, 7, 7, 120},
		{"older epoch: the next epoch's start", h, 5, 5, 90},
		{"first epoch", h, 2, 2, 40},
		{"epoch never had, between two: the one below, ending at the one above", h, 4, 2, 40},
		{"epoch never had, between the last two", h, 6, 5, 90},
		{"below the first epoch: itself, ending at the first start", h, 1, 1, 10},
		{"below the first epoch, zero", h, 0, 0, 10},
		{"above the current epoch: undefined", h, 8, -1, -1},
		{"undefined epoch asked: undefined", h, -1, -1, -1},
		{"empty history: undefined", history(), 0, -1, -1},
		{"initial history, epoch 0", metadata.InitialLeaderEpochs(), 0, 0, 120},
	}
	for _, tc := range cases {
		epoch, end := tc.h.EndOffsetFor(tc.requested, 120)
		if epoch != tc.epoch || end != tc.end {
			t.Errorf("%s: EndOffsetFor(%d) = (%d, %d), want (%d, %d)", tc.name, tc.requested, epoch, end, tc.epoch, tc.end)
		}
	}
}

// TestTruncateFromStart: the log start moving past an epoch's start, as
// Kafka's truncateFromStart (exclusive: an entry at the new start stays).
func TestTruncateFromStart(t *testing.T) {
	h := history(e(0, 0), e(1, 100), e(3, 200))
	cases := []struct {
		logStart int64
		want     entries
	}{
		{0, entries{e(0, 0), e(1, 100), e(3, 200)}},
		{50, entries{e(0, 50), e(1, 100), e(3, 200)}},
		{100, entries{e(1, 100), e(3, 200)}},
		{150, entries{e(1, 150), e(3, 200)}},
		{250, entries{e(3, 250)}},
	}
	for _, tc := range cases {
		got := h.TruncateFromStart(tc.logStart)
		if !reflect.DeepEqual(got.Entries, tc.want) {
			t.Errorf("logStart %d: %v, want %v", tc.logStart, got.Entries, tc.want)
		}
	}
	if !reflect.DeepEqual(h.Entries, entries{e(0, 0), e(1, 100), e(3, 200)}) {
		t.Errorf("receiver changed: %v", h.Entries)
	}
	// Seen from a log starting at 150, epoch 0 is below the first epoch.
	if epoch, end := h.TruncateFromStart(150).EndOffsetFor(0, 300); epoch != 0 || end != 150 {
		t.Errorf("epoch 0 after the log start moved to 150: (%d, %d), want (0, 150)", epoch, end)
	}
}

func TestEpochForOffset(t *testing.T) {
	h := history(e(1, 10), e(4, 30))
	for _, tc := range []struct {
		off   int64
		epoch int32
		ok    bool
	}{{5, 0, false}, {10, 1, true}, {29, 1, true}, {30, 4, true}, {1000, 4, true}} {
		epoch, ok := h.EpochForOffset(tc.off)
		if epoch != tc.epoch || ok != tc.ok {
			t.Errorf("offset %d: (%d, %v), want (%d, %v)", tc.off, epoch, ok, tc.epoch, tc.ok)
		}
	}
}

// TestBumpLeaderEpoch: bumps are persisted with their start offsets, survive
// a reopen, never reuse an epoch, drop epochs a new start makes empty, trim
// below the log start, and stop at a deleted topic.
func TestBumpLeaderEpoch(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStoreAt(t, dir)
	topic := metadata.Topic{Name: "epochs", ID: metadata.NewTopicID(), Partitions: 2}
	if err := s.CreateTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	h, err := s.LeaderEpochs(ctx, topic.ID, 0)
	if err != nil || !reflect.DeepEqual(h.Entries, entries{e(0, 0)}) || h.Version != 0 {
		t.Fatalf("initial history: %+v err=%v", h, err)
	}
	mustBump := func(p int32, start int64, want entries) {
		t.Helper()
		h, err := s.BumpLeaderEpoch(ctx, topic.ID, p, start)
		if err != nil {
			t.Fatalf("bump at %d: %v", start, err)
		}
		if !reflect.DeepEqual(h.Entries, want) || h.Version == 0 {
			t.Fatalf("bump at %d: %+v, want %v", start, h, want)
		}
	}
	mustBump(0, 10, entries{e(0, 0), e(1, 10)})
	mustBump(0, 25, entries{e(0, 0), e(1, 10), e(2, 25)})
	// A new owner that finds no new record since the last bump: the empty
	// epoch 2 goes, and its number is never reused.
	mustBump(0, 25, entries{e(0, 0), e(1, 10), e(3, 25)})
	if err := s.SetLogStartOffset(ctx, topic.ID, 0, 12); err != nil {
		t.Fatal(err)
	}
	mustBump(0, 40, entries{e(1, 12), e(3, 25), e(4, 40)})
	if _, err := s.BumpLeaderEpoch(ctx, topic.ID, 0, 5); !errors.Is(err, metadata.ErrEpochStart) {
		t.Fatalf("bump below the log start: %v", err)
	}
	s.Close()

	s = openStoreAt(t, dir)
	all, err := s.TopicLeaderEpochs(ctx, topic.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || !reflect.DeepEqual(all[0].Entries, entries{e(1, 12), e(3, 25), e(4, 40)}) {
		t.Fatalf("after reopen: %+v", all)
	}
	if h, _ := s.LeaderEpochs(ctx, topic.ID, 1); !reflect.DeepEqual(h.Entries, entries{e(0, 0)}) {
		t.Fatalf("partition 1 was never bumped: %+v", h)
	}
	stored, _, _ := s.Topic(ctx, topic.Name)
	if err := s.DeleteTopic(ctx, stored); err != nil {
		t.Fatal(err)
	}
	if all, err := s.TopicLeaderEpochs(ctx, topic.ID); err != nil || len(all) != 0 {
		t.Fatalf("histories left after delete: %+v err=%v", all, err)
	}
	if _, err := s.BumpLeaderEpoch(ctx, topic.ID, 0, 50); !errors.Is(err, metadata.ErrUnknownTopic) {
		t.Fatalf("bump of a deleted partition: %v", err)
	}
}

// TestBumpLeaderEpochRaces: concurrent bumps each get their own epoch.
func TestBumpLeaderEpochRaces(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	topic := metadata.Topic{Name: "race", ID: metadata.NewTopicID(), Partitions: 1}
	if err := s.CreateTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	const n = 8
	got := make(chan int32, n)
	for i := range n {
		go func() {
			h, err := s.BumpLeaderEpoch(ctx, topic.ID, 0, int64(i+1)*10)
			if err != nil {
				t.Error(err)
				got <- -1
				return
			}
			got <- h.Current().Epoch
		}()
	}
	seen := map[int32]bool{}
	for range n {
		ep := <-got
		if seen[ep] {
			t.Fatalf("epoch %d handed out twice", ep)
		}
		seen[ep] = true
	}
	h, _ := s.LeaderEpochs(ctx, topic.ID, 0)
	if h.Current().Epoch != n {
		t.Fatalf("current epoch %d after %d bumps: %+v", h.Current().Epoch, n, h)
	}
}

func openStoreAt(t *testing.T, dir string) *metadata.Store {
	t.Helper()
	kv, err := metadata.OpenBolt(dir + "/meta.db")
	if err != nil {
		t.Fatal(err)
	}
	s := metadata.NewStore(kv)
	t.Cleanup(func() { s.Close() })
	return s
}
