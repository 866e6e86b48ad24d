package admin

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// tabular is rows under named columns. Column names are snake_case, as the
// CSV header and the JSON keys spell them; the table view prints them upper
// case with dashes (current_offset -> CURRENT-OFFSET), as Kafka's tools do.
type tabular struct {
	columns []string
	rows    [][]string
}

func (t *tabular) add(cells ...string) { t.rows = append(t.rows, cells) }

// writeTable prints an aligned table: two spaces between columns, "-" for
// an empty cell, so that every row has every column.
func (t *tabular) writeTable(w io.Writer) error {
	tw := newTabWriter(w)
	heads := make([]string, len(t.columns))
	for i, c := range t.columns {
		heads[i] = strings.ToUpper(strings.ReplaceAll(c, "_", "-"))
	}
	fmt.Fprintln(tw, strings.Join(heads, "\t"))
	for _, r := range t.rows {
		cells := make([]string, len(r))
		for i, c := range r {
			if cells[i] = c; c == "" {
				cells[i] = "-"
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// writeCSV prints a header line of the column names, then the rows.
func (t *tabular) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.columns); err != nil {
		return err
	}
	if err := cw.WriteAll(t.rows); err != nil {
		return fmt.Errorf("admin: write csv: %w", err)
	}
	return nil
}

// newTabWriter is the one table layout of the package: left-aligned cells
// padded with two spaces.
func newTabWriter(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 8, 2, ' ', 0) }

// writeJSON prints v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("admin: write json: %w", err)
	}
	return nil
}

// view is what a read command prints, in each --output format. text, when
// set, replaces the plain table of rows (for views with several sections).
type view struct {
	rows *tabular
	text func(io.Writer) error
	json any
}

// emit prints v in the format --output chose.
func (inv *invocation) emit(v view) error {
	switch inv.common.output {
	case "json":
		return writeJSON(inv.stdout, v.json)
	case "csv":
		return v.rows.writeCSV(inv.stdout)
	}
	if v.text != nil {
		return v.text(inv.stdout)
	}
	return v.rows.writeTable(inv.stdout)
}

// Cell formatting: numbers as decimals; an optional number is empty
// (printed "-" in tables) when absent.
func itoa[T ~int | ~int16 | ~int32 | ~int64](n T) string { return strconv.FormatInt(int64(n), 10) }

func optInt(n *int64) string {
	if n == nil {
		return ""
	}
	return itoa(*n)
}

func int32List(ns []int32) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = itoa(n)
	}
	return strings.Join(parts, ",")
}
