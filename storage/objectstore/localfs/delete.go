package localfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Delete removes key, makes the removal durable, then removes the
// directories it left empty. A missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	p, err := s.begin(ctx, "delete", key)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err = os.Remove(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("localfs: delete %q: %w", key, err)
	}
	dir := filepath.Dir(p)
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("localfs: delete %q: sync directory: %w", key, err)
	}
	s.pruneLocked(dir)
	return nil
}

// pruneLocked removes dir and then its parents, up to the root, while they
// are empty. It is best-effort: an empty directory left behind is harmless.
func (s *Store) pruneLocked(dir string) {
	for dir != s.root && os.Remove(dir) == nil {
		dir = filepath.Dir(dir)
	}
}
