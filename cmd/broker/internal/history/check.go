package history

import (
	"errors"
	"fmt"
	"strings"
)

// Rules, as Violation.Rule spells them (see the package doc).
const (
	RuleLost      = "lost"
	RuleDuplicate = "duplicate"
	RulePhantom   = "phantom"
	RuleAckOffset = "ack-offset"
	RuleGap       = "gap"
	RuleOrder     = "order"
	RuleRead      = "read"
	RuleOwner     = "owner"
	RuleSample    = "sample"
	RuleFence     = "fence"
)

// shown is how many violations Result.Err spells out.
const shown = 10

// Violation is one broken guarantee.
type Violation struct {
	Rule    string
	Message string
}

func (v Violation) String() string { return v.Rule + ": " + v.Message }

// Result is the outcome of Check.
type Result struct {
	Violations []Violation
	Acked      int // acknowledged produce attempts
	Failed     int // produce attempts that ended in an error
	Records    int // records in the final log
	Reads      int
	Commits    int
}

// Err is nil when nothing was violated, else an error that names how many
// rules were broken and spells out the first ten violations.
func (r *Result) Err() error {
	if len(r.Violations) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "history: %d violations (%s) in %d acked, %d failed produces, %d records, %d reads, %d commits; the first %d:",
		len(r.Violations), r.countsByRule(), r.Acked, r.Failed, r.Records, r.Reads, r.Commits, min(shown, len(r.Violations)))
	for _, v := range r.Violations[:min(shown, len(r.Violations))] {
		b.WriteString("\n  " + v.String())
	}
	return errors.New(b.String())
}

// Of returns the violations of one rule.
func (r *Result) Of(rule string) []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if v.Rule == rule {
			out = append(out, v)
		}
	}
	return out
}

func (r *Result) countsByRule() string {
	var rules []string
	counts := map[string]int{}
	for _, v := range r.Violations {
		if counts[v.Rule] == 0 {
			rules = append(rules, v.Rule)
		}
		counts[v.Rule]++
	}
	parts := make([]string, len(rules))
	for i, rule := range rules {
		parts[i] = fmt.Sprintf("%s %d", rule, counts[rule])
	}
	return strings.Join(parts, ", ")
}

// Check judges the history against final, the whole log of every
// partition read after the test, in offset order. Each partition's log
// starts at its first entry's offset (retention may have moved the start).
func (h *History) Check(final map[Partition][]Entry) *Result {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := &Result{Reads: len(h.reads), Commits: len(h.commits)}
	for _, p := range h.produces {
		if p.Acked() {
			r.Acked++
		} else {
			r.Failed++
		}
	}
	for _, entries := range final {
		r.Records += len(entries)
	}
	add := func(rule, format string, args ...any) {
		r.Violations = append(r.Violations, Violation{Rule: rule, Message: fmt.Sprintf(format, args...)})
	}
	idx := indexFinal(final, add)
	checkProduces(h.produces, idx, add)
	checkOrder(h.produces, add)
	checkReads(h.reads, idx, add)
	owners := checkOwnerChanges(h.changes, add)
	checkSamples(h.samples, owners, add)
	checkCommits(h.commits, owners, add)
	return r
}

// report adds one violation of rule.
type report func(rule, format string, args ...any)
