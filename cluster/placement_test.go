package cluster

import (
	"fmt"
	"reflect"
	"testing"
)

func slotName(i int) string { return fmt.Sprintf("topic/%d", i) }

func never(int32) bool { return false }

func counts(owners []int32) map[int32]int {
	c := map[int32]int{}
	for _, o := range owners {
		c[o]++
	}
	return c
}

// TestPlaceBalanced: a fresh placement spreads the slots evenly, and
// computing it again from its own result changes nothing.
func TestPlaceBalanced(t *testing.T) {
	live := []int32{1, 2, 3}
	got := place(slotName, 64, nil, live, never)
	for b, n := range counts(got) {
		if n > 22 || (b != 1 && b != 2 && b != 3) {
			t.Fatalf("broker %d got %d of 64: %v", b, n, got)
		}
	}
	if again := place(slotName, 64, got, live, never); !reflect.DeepEqual(again, got) {
		t.Fatalf("not stable:\n%v\n%v", got, again)
	}
}

// TestPlaceSticky: when a broker goes, only its slots move; when it comes
// back it takes only its share back from the others.
func TestPlaceSticky(t *testing.T) {
	first := place(slotName, 60, nil, []int32{1, 2, 3}, never)
	after := place(slotName, 60, first, []int32{1, 2}, never)
	for i := range first {
		if first[i] != 3 && after[i] != first[i] {
			t.Fatalf("slot %d moved from live broker %d to %d", i, first[i], after[i])
		}
		if after[i] == 3 {
			t.Fatalf("slot %d still on the gone broker", i)
		}
	}
	back := place(slotName, 60, after, []int32{1, 2, 3}, never)
	moved := 0
	for i := range back {
		if back[i] != after[i] {
			moved++
			if back[i] != 3 {
				t.Fatalf("slot %d moved to %d, not to the broker that came back", i, back[i])
			}
		}
	}
	if c := counts(back); moved != 20 || c[1] != 20 || c[2] != 20 || c[3] != 20 {
		t.Fatalf("moved %d, counts %v", moved, c)
	}
}

// TestPlaceWaits: the slots of a gone broker that is waited for stay with
// it; once it is not waited for, they move.
func TestPlaceWaits(t *testing.T) {
	first := place(slotName, 30, nil, []int32{1, 2, 3}, never)
	waiting := place(slotName, 30, first, []int32{1, 2}, func(b int32) bool { return b == 3 })
	if !reflect.DeepEqual(waiting, first) {
		t.Fatalf("slots of a waited-for broker moved:\n%v\n%v", first, waiting)
	}
	moved := place(slotName, 30, waiting, []int32{1, 2}, never)
	if counts(moved)[3] != 0 {
		t.Fatalf("slots still on broker 3 after its takeover: %v", moved)
	}
	if place(slotName, 30, first, nil, never) != nil {
		t.Fatal("a placement without live brokers")
	}
}
