package remote

import (
	"context"
	"fmt"

	"github.com/sediment-io/sediment/storage/objectstore"
)

// List calls fn for every object whose key starts with prefix and sorts
// after startAfter, in lexical order, a page of up to 1,000 at a time.
// Each page is its own request, retried on its own, and starts after the
// last key delivered, so that a retry never delivers a key twice.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(objectstore.Info) bool) error {
	after := ""
	if startAfter != "" {
		after = s.full(startAfter)
	}
	for {
		var (
			page []objectstore.Info
			more bool
		)
		_, err := s.do(ctx, "list", 0, func(a *attempt) error {
			var err error
			page, more, err = s.wire.ListPage(a.ctx, s.full(prefix), after)
			return err
		})
		if err != nil {
			return s.fail("list", prefix+"*", err, false)
		}
		for _, info := range page {
			if info.Key <= after {
				return fmt.Errorf("%s: list %s: key %q out of order after %q", s.name, s.where(prefix+"*"), info.Key, after)
			}
			after = info.Key
			if !fn(s.info(info)) {
				return nil
			}
		}
		if !more || len(page) == 0 {
			return nil
		}
	}
}
