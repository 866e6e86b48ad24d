package storeurl

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore/internal/remote"
)

// params reads a URL's query parameters, each at most once, and collects
// what is wrong with them; done reports the problems and any parameter
// left unread.
type params struct {
	q    url.Values
	read []string
	errs []error
}

func newParams(q url.Values) (*params, error) {
	for k, vs := range q {
		if len(vs) > 1 {
			return nil, fmt.Errorf("parameter %s given %d times", k, len(vs))
		}
	}
	return &params{q: q}, nil
}

func (p *params) str(name string) string {
	p.read = append(p.read, name)
	return p.q.Get(name)
}

func (p *params) bool(name string, def bool) bool {
	v := p.str(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s=%q: want true or false", name, v))
	}
	return b
}

// tuning reads the multipart, timeout and retry parameters into t.
func (p *params) tuning(t *remote.Tuning) {
	t.MultipartThreshold = p.size("multipart_threshold")
	t.PartSize = p.size("part_size")
	if v := p.str("request_timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			p.errs = append(p.errs, fmt.Errorf("request_timeout=%q: want a duration of at least 1s (10s)", v))
		}
		t.RequestTimeout = d
	}
	if v := p.str("max_attempts"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			p.errs = append(p.errs, fmt.Errorf("max_attempts=%q: want 1..100", v))
		}
		t.MaxAttempts = n
	}
	part := orDefault(t.PartSize, remote.DefaultPartSize)
	switch {
	case t.PartSize != 0 && t.PartSize < remote.MinPartSize:
		p.errs = append(p.errs, fmt.Errorf("part_size %d: want at least 5MiB", t.PartSize))
	case orDefault(t.MultipartThreshold, remote.DefaultMultipartThreshold) < part:
		p.errs = append(p.errs, fmt.Errorf("multipart_threshold %d: want at least part_size (%d)", t.MultipartThreshold, part))
	}
}

// orDefault returns v, or def when v is zero.
func orDefault(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

// size reads a byte count with an optional KiB, MiB or GiB suffix.
func (p *params) size(name string) int64 {
	v := p.str(name)
	if v == "" {
		return 0
	}
	num, mult := v, int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(v, suffix) {
			num, mult = strings.TrimSuffix(v, suffix), m
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (5<<40)/mult {
		p.errs = append(p.errs, fmt.Errorf("%s=%q: want a positive size such as 67108864 or 64MiB", name, v))
		return 0
	}
	return n * mult
}

// done returns every problem found, and names unknown parameters.
func (p *params) done() error {
	var unknown []string
	for k := range p.q {
		if !slices.Contains(p.read, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	if len(unknown) > 0 {
		p.errs = append(p.errs, fmt.Errorf("unknown parameter %s (known: %s)", strings.Join(unknown, ", "), strings.Join(p.read, ", ")))
	}
	msgs := make([]string, len(p.errs))
	for i, err := range p.errs {
		msgs[i] = err.Error()
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}
