package table

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sediment-io/sediment/config"
)

// The table topic configs (sediment.table.*): a topic with
// sediment.table.enable=true is converted into an Apache Iceberg table by
// the broker's table converter. They have no broker-level synonym.
func init() { config.RegisterTopic(topicConfigDefs...) }

var topicConfigDefs = []config.Def{
	{Name: "sediment.table.enable", Type: config.Boolean, Default: "false",
		Doc: "convert this topic into an Iceberg table (namespace sediment, table name = topic name)"},
	{Name: "sediment.table.format", Type: config.String, Default: "json", Enum: []string{"json", "raw"},
		Doc: "json: one JSON object per record value, one column per field; raw: key and value as binary columns"},
	{Name: "sediment.table.schema", Type: config.String, Default: "", Check: checkTableSchema,
		Doc: "the table's Iceberg schema as JSON ({\"type\":\"struct\",\"fields\":[...]}); empty: inferred from the records and evolved"},
	{Name: "sediment.table.partition-by", Type: config.String, Default: "day(_kafka_timestamp)", Check: checkPartitionBy,
		Doc: "comma-separated partition fields: col, year|month|day|hour(col), bucket(N, col), truncate(W, col); empty: unpartitioned"},
	{Name: "sediment.table.commit.interval.ms", Type: config.Long, Default: "60000", Min: 1000,
		Doc: "commit an Iceberg snapshot this often (minimum 1000)"},
	{Name: "sediment.table.commit.bytes", Type: config.Long, Default: "134217728", Min: 1,
		Doc: "commit early once this many record bytes are buffered"},
	{Name: "sediment.table.errors", Type: config.String, Default: "dlq", Enum: []string{"dlq", "skip", "stop"},
		Doc: "records that cannot be converted: dlq appends them to <topic>.dlq, skip counts and logs them, stop stops the table's converter"},
}

// PartitionField is one field of sediment.table.partition-by: a transform
// (identity, year, month, day, hour, bucket, truncate), its parameter
// (bucket count or truncate width, else 0) and the source column.
type PartitionField struct {
	Transform string
	Param     int
	Column    string
}

var (
	partitionCallRE = regexp.MustCompile(`^(year|month|day|hour|bucket|truncate)\s*\(\s*(?:(\d+)\s*,\s*)?([^(),\s]+)\s*\)$`)
	columnNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)
)

// ParsePartitionBy parses a sediment.table.partition-by value. The empty
// string means an unpartitioned table.
func ParsePartitionBy(s string) ([]PartitionField, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []PartitionField
	for _, part := range splitTopLevel(s) {
		f, err := parsePartitionField(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func parsePartitionField(s string) (PartitionField, error) {
	if columnNameRE.MatchString(s) {
		return PartitionField{Transform: "identity", Column: s}, nil
	}
	m := partitionCallRE.FindStringSubmatch(s)
	if m == nil {
		return PartitionField{}, fmt.Errorf("partition field %q: want col, year|month|day|hour(col), bucket(N, col) or truncate(W, col)", s)
	}
	f := PartitionField{Transform: m[1], Column: m[3]}
	needsParam := f.Transform == "bucket" || f.Transform == "truncate"
	switch {
	case needsParam && m[2] == "":
		return PartitionField{}, fmt.Errorf("partition field %q: %s needs a number: %s(N, col)", s, f.Transform, f.Transform)
	case !needsParam && m[2] != "":
		return PartitionField{}, fmt.Errorf("partition field %q: %s takes only a column", s, f.Transform)
	case needsParam:
		n, err := strconv.Atoi(m[2])
		if err != nil || n <= 0 || n > 1<<20 {
			return PartitionField{}, fmt.Errorf("partition field %q: %s must be 1..%d", s, m[2], 1<<20)
		}
		f.Param = n
	}
	if !columnNameRE.MatchString(f.Column) {
		return PartitionField{}, fmt.Errorf("partition field %q: bad column name %q", s, f.Column)
	}
	return f, nil
}

// splitTopLevel splits s at commas outside parentheses.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func checkPartitionBy(v string) error {
	_, err := ParsePartitionBy(v)
	return err
}

// tableSchemaJSON is the shape of an Iceberg schema as JSON, enough to
// reject what is plainly not one; the converter parses it fully.
type tableSchemaJSON struct {
	Type   string `json:"type"`
	Fields []struct {
		ID       int             `json:"id"`
		Name     string          `json:"name"`
		Type     json.RawMessage `json:"type"`
		Required bool            `json:"required"`
	} `json:"fields"`
}

func checkTableSchema(v string) error {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	var s tableSchemaJSON
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return fmt.Errorf("not an Iceberg schema as JSON: %v", err)
	}
	if s.Type != "struct" || len(s.Fields) == 0 {
		return fmt.Errorf(`want {"type":"struct","fields":[{"id":1,"name":"..","type":"..","required":false},...]}`)
	}
	names := map[string]bool{}
	for _, f := range s.Fields {
		switch {
		case f.ID <= 0:
			return fmt.Errorf("field %q: id must be positive", f.Name)
		case f.Name == "" || len(f.Type) == 0:
			return fmt.Errorf("field id %d: needs a name and a type", f.ID)
		case strings.HasPrefix(f.Name, "_kafka_"):
			return fmt.Errorf("field %q: names starting with _kafka_ are reserved for the metadata columns", f.Name)
		case names[f.Name]:
			return fmt.Errorf("field %q appears twice", f.Name)
		}
		names[f.Name] = true
	}
	return nil
}
