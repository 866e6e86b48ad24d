//go:build interop

package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// differencesDoc is the list of allowed differences for people.
const differencesDoc = "../../interop/DIFFERENCES.md"

// TestInteropDiffListed: interop/DIFFERENCES.md lists exactly the entries
// of allowedDiffs, each under its section (intended, or known and open in
// its issue). On failure it prints the rows the document must hold.
func TestInteropDiffListed(t *testing.T) {
	doc, err := os.ReadFile(differencesDoc)
	if err != nil {
		t.Fatal(err)
	}
	got := docRows(string(doc))
	want := map[string][]string{}
	for _, a := range allowedDiffs {
		want[diffSection(a.Issue)] = append(want[diffSection(a.Issue)], diffRow(a))
	}
	var bad []string
	for _, sec := range slices.Sorted(mapsKeys(want, got)) {
		if !slices.Equal(got[sec], want[sec]) {
			bad = append(bad, sec+"\n\n| step | field | why | shown by |\n|---|---|---|---|\n"+strings.Join(want[sec], "\n"))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%s does not list the allowed differences of kafkadiff_allowed*_test.go; these sections must read:\n\n%s",
			differencesDoc, strings.Join(bad, "\n\n"))
	}
}

// diffSection is the heading an entry is listed under.
func diffSection(issue int) string {
	if issue == 0 {
		return "## Intended"
	}
	return fmt.Sprintf("## Known, open in issue %d", issue)
}

// diffRow is an entry's table row; its absent side, if any, goes with the
// field.
func diffRow(a allowedDiff) string {
	field := "`" + a.Path + "`"
	if a.Absent != "" {
		field += " (absent in " + a.Absent + ")"
	}
	test := a.Test
	if test == "" {
		test = "(by nature)"
	}
	return fmt.Sprintf("| `%s` | %s | %s | %s |", a.Step, field, a.Reason, test)
}

// docRows returns the document's table rows by the section they are in.
func docRows(doc string) map[string][]string {
	rows := map[string][]string{}
	sec := ""
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			sec = strings.TrimSpace(line)
		case strings.HasPrefix(line, "| `"):
			rows[sec] = append(rows[sec], strings.TrimSpace(line))
		}
	}
	return rows
}

func mapsKeys(ms ...map[string][]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] && !yield(k) {
					return
				}
				seen[k] = true
			}
		}
	}
}
