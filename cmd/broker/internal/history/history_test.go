package history

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

var (
	p0 = Partition{Topic: "t", Partition: 0}
	p1 = Partition{Topic: "t", Partition: 1}
	t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

// at is t0 plus ms milliseconds.
func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// ack is an acknowledged produce of value at p's offset, in [start, end] ms.
func ack(p Partition, value string, offset int64, start, end int) Produce {
	return Produce{Partition: p, Value: value, Offset: offset, Start: at(start), End: at(end)}
}

// failed is a produce of value that ended in an error.
func failed(value string, start, end int) Produce {
	return Produce{Partition: p0, Value: value, Start: at(start), End: at(end), Err: errors.New("timed out")}
}

// entries is a final log holding values from offset 0.
func entries(values ...string) []Entry {
	out := make([]Entry, len(values))
	for i, v := range values {
		out[i] = Entry{Offset: int64(i), Value: v}
	}
	return out
}

// cleanHistory is a history that breaks no rule: two partitions, a failed
// produce that landed anyway, reads, owner changes with a hand-over, an
// agreeing sample and fenced commits.
func cleanHistory() (*History, map[Partition][]Entry) {
	h := New()
	h.AddProduce(ack(p0, "a", 0, 0, 10))
	h.AddProduce(ack(p0, "b", 1, 5, 15)) // overlaps a: either order is fine
	h.AddProduce(ack(p0, "c", 2, 20, 30))
	h.AddProduce(failed("d", 25, 35)) // indeterminate: it may be in the log
	h.AddProduce(ack(p1, "e", 0, 0, 40))
	h.AddProduce(failed("f", 50, 60)) // and it may not
	h.AddRead(Read{Partition: p0, Offset: 0, Value: "a"})
	h.AddRead(Read{Partition: p0, Offset: 1, Value: "b"})
	h.AddOwnerChange(OwnerChange{Revision: 10, Partition: p0, Node: 1, Epoch: 1})
	h.AddOwnerChange(OwnerChange{Revision: 11, Partition: p1, Node: 2, Epoch: 1})
	h.AddCommit(Commit{Revision: 12, Partition: p0, Node: 1, BaseOffset: 0, EndOffset: 2})
	h.AddOwnerChange(OwnerChange{Revision: 20, Partition: p0, Released: true})
	h.AddOwnerChange(OwnerChange{Revision: 21, Partition: p0, Node: 3, Epoch: 2})
	h.AddCommit(Commit{Revision: 22, Partition: p0, Node: 3, BaseOffset: 2, EndOffset: 4})
	h.AddCommit(Commit{Revision: 22, Partition: p1, Node: 2, BaseOffset: 0, EndOffset: 1})
	h.AddSample(Sample{Revision: 15, Owners: map[Partition]int32{p0: 1, p1: 2}, Source: "etcd"})
	h.AddSample(Sample{Revision: 21, Owners: map[Partition]int32{p0: 3}, Source: "broker 2"})
	return h, map[Partition][]Entry{p0: entries("a", "b", "c", "d"), p1: entries("e")}
}

func TestCleanHistory(t *testing.T) {
	h, final := cleanHistory()
	r := h.Check(final)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if r.Acked != 4 || r.Failed != 2 || r.Records != 5 || r.Reads != 2 || r.Commits != 3 {
		t.Fatalf("counts %+v", r)
	}
}

// violationCase is a history that breaks exactly one rule, want times.
type violationCase struct {
	name  string
	rule  string
	want  int
	words []string // the message of the first violation names these
	build func(h *History) map[Partition][]Entry
}

func violationCases() []violationCase {
	return []violationCase{
		{"lost ack", RuleLost, 1, []string{`"b"`, "offset 1"}, func(h *History) map[Partition][]Entry {
			h.AddProduce(ack(p0, "a", 0, 0, 1))
			h.AddProduce(ack(p0, "b", 1, 2, 3))
			return map[Partition][]Entry{p0: entries("a")}
		}},
		{"duplicate value", RuleDuplicate, 1, []string{`"a"`, "2 times"}, func(h *History) map[Partition][]Entry {
			h.AddProduce(ack(p0, "a", 0, 0, 1))
			h.AddProduce(ack(p0, "b", 2, 5, 6))
			return map[Partition][]Entry{p0: entries("a", "a", "b")}
		}},
		{"duplicate across partitions", RuleDuplicate, 1, []string{`"a"`}, func(h *History) map[Partition][]Entry {
			h.AddProduce(ack(p0, "a", 0, 0, 1))
			return map[Partition][]Entry{p0: entries("a"), p1: entries("a")}
		}},
		{"phantom value", RulePhantom, 1, []string{`"zz"`}, func(h *History) map[Partition][]Entry {
			h.AddProduce(ack(p0, "a", 0, 0, 1))
			return map[Partition][]Entry{p0: entries("a", "zz")}
		}},
		{"ack names another value's offset", RuleAckOffset, 2, []string{`"a"`, "offset 0", `"b"`}, func(h *History) map[Partition][]Entry {
			h.AddProduce(ack(p0, "a", 0, 0, 1))
			h.AddProduce(ack(p0, "b", 1, 0, 1))
			return map[Partition][]Entry{p0: entries("b", "a")}
		}},
		{"ack names another partition", RuleAckOffset, 1, []string{`"a"`, "t/1"}, func(h *History) map[Partition][]Entry {
			h.AddProduce(ack(p1, "a", 0, 0, 1))
			return map[Partition][]Entry{p0: entries("a")}
		}},
		{"ack past the end", RuleAckOffset, 1, []string{"nothing"}, func(h *History) map[Partition][]Entry {
			h.AddProduce(ack(p0, "a", 0, 0, 1))
			h.AddProduce(ack(p0, "b", 5, 0, 1))
			return map[Partition][]Entry{p0: {{0, "a"}, {1, "b"}}}
		}},
		{"gap in the log", RuleGap, 1, []string{"offset 3 follows offset 1"}, func(h *History) map[Partition][]Entry {
			for i, v := range []string{"a", "b", "c"} {
				h.AddProduce(failed(v, i, i+1))
			}
			return map[Partition][]Entry{p0: {{0, "a"}, {1, "b"}, {3, "c"}}}
		}},
		{"offset repeated", RuleGap, 1, []string{"offset 1 follows offset 1"}, func(h *History) map[Partition][]Entry {
			h.AddProduce(failed("a", 0, 1))
			h.AddProduce(failed("b", 0, 1))
			return map[Partition][]Entry{p0: {{1, "a"}, {1, "b"}}}
		}},
		{"real-time order", RuleOrder, 1, []string{`"a"`, "offset 1", `"b"`, "offset 0"}, func(h *History) map[Partition][]Entry {
			h.AddProduce(ack(p0, "a", 1, 0, 10))
			h.AddProduce(ack(p0, "b", 0, 11, 20)) // started after a ended, yet lower
			return map[Partition][]Entry{p0: entries("b", "a")}
		}},
		{"read not in the final log", RuleRead, 1, []string{`"x"`, "offset 1", "ending at 1"}, func(h *History) map[Partition][]Entry {
			h.AddProduce(ack(p0, "a", 0, 0, 1))
			h.AddProduce(failed("x", 0, 1))
			h.AddRead(Read{Partition: p0, Offset: 1, Value: "x"}) // a dirty read of a write the log lost
			return map[Partition][]Entry{p0: entries("a")}
		}},
		{"read of another value", RuleRead, 1, []string{`"x"`, `holds "a"`}, func(h *History) map[Partition][]Entry {
			h.AddProduce(ack(p0, "a", 0, 0, 1))
			h.AddProduce(failed("x", 0, 1))
			h.AddRead(Read{Partition: p0, Offset: 0, Value: "x"})
			return map[Partition][]Entry{p0: entries("a")}
		}},
		{"two owners", RuleOwner, 1, []string{"node 2", "node 1", "revision 7"}, func(h *History) map[Partition][]Entry {
			h.AddOwnerChange(OwnerChange{Revision: 5, Partition: p0, Node: 1, Epoch: 1})
			h.AddOwnerChange(OwnerChange{Revision: 7, Partition: p0, Node: 2, Epoch: 2})
			return nil
		}},
		{"epoch does not rise", RuleOwner, 1, []string{"epoch 3", "previous epoch 3"}, func(h *History) map[Partition][]Entry {
			h.AddOwnerChange(OwnerChange{Revision: 5, Partition: p0, Node: 1, Epoch: 3})
			h.AddOwnerChange(OwnerChange{Revision: 6, Partition: p0, Released: true})
			h.AddOwnerChange(OwnerChange{Revision: 9, Partition: p0, Node: 2, Epoch: 3})
			return nil
		}},
		{"samples disagree", RuleSample, 1, []string{"revision 4", "node 1", "node 2"}, func(h *History) map[Partition][]Entry {
			h.AddSample(Sample{Revision: 4, Owners: map[Partition]int32{p0: 1}, Source: "a"})
			h.AddSample(Sample{Revision: 4, Owners: map[Partition]int32{p0: 2}, Source: "b"})
			return nil
		}},
		{"sample against the keys", RuleSample, 1, []string{"revision 12", "node 2", "node 1 (epoch 1)"}, func(h *History) map[Partition][]Entry {
			h.AddOwnerChange(OwnerChange{Revision: 10, Partition: p0, Node: 1, Epoch: 1})
			h.AddSample(Sample{Revision: 12, Owners: map[Partition]int32{p0: 2}, Source: "broker 3"})
			return nil
		}},
		{"commit by a former owner", RuleFence, 1, []string{"node 1", "revision 8", "node 2"}, func(h *History) map[Partition][]Entry {
			h.AddOwnerChange(OwnerChange{Revision: 5, Partition: p0, Node: 1, Epoch: 1})
			h.AddOwnerChange(OwnerChange{Revision: 6, Partition: p0, Released: true})
			h.AddOwnerChange(OwnerChange{Revision: 7, Partition: p0, Node: 2, Epoch: 2})
			h.AddCommit(Commit{Revision: 8, Partition: p0, Node: 1, BaseOffset: 0, EndOffset: 3})
			return nil
		}},
		{"commit while nobody owns", RuleFence, 1, []string{"nobody"}, func(h *History) map[Partition][]Entry {
			h.AddOwnerChange(OwnerChange{Revision: 5, Partition: p0, Node: 1, Epoch: 1})
			h.AddOwnerChange(OwnerChange{Revision: 6, Partition: p0, Released: true}) // the lease expired
			h.AddCommit(Commit{Revision: 6, Partition: p0, Node: 1, BaseOffset: 0, EndOffset: 1})
			return nil
		}},
	}
}

// TestEachRule: each hand-made history breaks one rule, and Check reports
// that rule (and no other) with a message that names what broke.
func TestEachRule(t *testing.T) {
	for _, tc := range violationCases() {
		t.Run(tc.name, func(t *testing.T) {
			h := New()
			r := h.Check(tc.build(h))
			if got := r.Of(tc.rule); len(got) != tc.want || len(r.Violations) != tc.want {
				t.Fatalf("want %d %s violations and no other, got %v", tc.want, tc.rule, r.Violations)
			}
			msg := r.Violations[0].String()
			for _, w := range tc.words {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not name %s", msg, w)
				}
			}
			if err := r.Err(); err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("Err() = %v, want it to hold %q", err, msg)
			}
		})
	}
}

// TestErrShowsTen: Err counts every violation by rule but spells out only
// the first ten.
func TestErrShowsTen(t *testing.T) {
	h := New()
	for i := range 25 {
		h.AddProduce(ack(p0, fmt.Sprintf("v%02d", i), int64(i), 0, 1))
	}
	err := h.Check(map[Partition][]Entry{}).Err()
	if err == nil {
		t.Fatal("25 lost acks, no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 1+shown || !strings.Contains(lines[0], "25 violations (lost 25)") {
		t.Fatalf("error:\n%v", err)
	}
}

// TestOrderSameEnd: acks that ended at the same instant as another
// started are concurrent, in either order.
func TestOrderSameEnd(t *testing.T) {
	h := New()
	h.AddProduce(ack(p0, "a", 1, 0, 10))
	h.AddProduce(ack(p0, "b", 0, 10, 20))
	if err := h.Check(map[Partition][]Entry{p0: entries("b", "a")}).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestOrderNamesHighest: of many acks that ended before one started, the
// violation names the one with the highest offset, and each late ack is
// reported once.
func TestOrderNamesHighest(t *testing.T) {
	h := New()
	h.AddProduce(ack(p0, "a", 2, 0, 5))
	h.AddProduce(ack(p0, "b", 3, 1, 6))
	h.AddProduce(ack(p0, "c", 0, 10, 12))
	h.AddProduce(ack(p0, "d", 1, 11, 13))
	r := h.Check(map[Partition][]Entry{p0: entries("c", "d", "a", "b")})
	got := r.Of(RuleOrder)
	if len(got) != 2 || len(r.Violations) != 2 {
		t.Fatalf("want 2 order violations, got %v", r.Violations)
	}
	for _, v := range got {
		if !strings.Contains(v.Message, `"b" was acknowledged at offset 3`) {
			t.Errorf("violation %q does not name b, the highest offset that ended first", v.Message)
		}
	}
}

// TestOwnerReacquireBySameNode: a node writing its own key again (same
// tenure) is no second owner; a fresh acquisition by the same node after a
// release needs a higher epoch.
func TestOwnerReacquireBySameNode(t *testing.T) {
	h := New()
	h.AddOwnerChange(OwnerChange{Revision: 1, Partition: p0, Node: 1, Epoch: 1})
	h.AddOwnerChange(OwnerChange{Revision: 2, Partition: p0, Node: 1, Epoch: 1})
	h.AddOwnerChange(OwnerChange{Revision: 3, Partition: p0, Released: true})
	h.AddOwnerChange(OwnerChange{Revision: 4, Partition: p0, Node: 1, Epoch: 2})
	h.AddCommit(Commit{Revision: 2, Partition: p0, Node: 1})
	h.AddCommit(Commit{Revision: 4, Partition: p0, Node: 1})
	if err := h.Check(nil).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestOwnerChangesOutOfOrder: the changes may be recorded in any order
// (several watchers); Check replays them by revision.
func TestOwnerChangesOutOfOrder(t *testing.T) {
	h := New()
	h.AddOwnerChange(OwnerChange{Revision: 9, Partition: p0, Node: 2, Epoch: 2})
	h.AddOwnerChange(OwnerChange{Revision: 8, Partition: p0, Released: true})
	h.AddOwnerChange(OwnerChange{Revision: 3, Partition: p0, Node: 1, Epoch: 1})
	h.AddCommit(Commit{Revision: 7, Partition: p0, Node: 1})
	h.AddCommit(Commit{Revision: 10, Partition: p0, Node: 2})
	if err := h.Check(nil).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentRecording: the recording methods are safe from many
// goroutines (run with -race).
func TestConcurrentRecording(t *testing.T) {
	h := New()
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 100 {
				v := fmt.Sprintf("g%d-%d", g, i)
				h.AddProduce(Produce{Partition: p0, Value: v, Err: errors.New("x")})
				h.AddRead(Read{Partition: p0, Value: v})
				h.AddCommit(Commit{Partition: p0})
				h.AddOwnerChange(OwnerChange{Partition: p0, Released: true})
				h.AddSample(Sample{})
				_ = h.Acked()
			}
		}()
	}
	for range 4 {
		<-done
	}
	if n := len(h.Produces()); n != 400 {
		t.Fatalf("%d produces recorded, want 400", n)
	}
}
