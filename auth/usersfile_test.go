package auth

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sediment-io/sediment/internal/testwait"
)

func TestWatchedUsersFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users")
	write := func(content string, mod time.Time) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Now()
	write("alice:pw\n", base)
	var failures atomic.Int32
	w, err := WatchUsersFile(path, time.Millisecond, func(err error) {
		if err != nil {
			failures.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ok := func(user, pw string) bool {
		ok, err := w.AuthenticatePlain(ctx, user, pw)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !ok("alice", "pw") || ok("bob", "pw2") {
		t.Fatal("initial users")
	}
	write("alice:pw\nbob:pw2\n", base.Add(time.Minute))
	testwait.Until(t, 10*time.Second, func() bool { return ok("bob", "pw2") }, "bob was not added")
	write("alice:pw\nbroken line\n", base.Add(2*time.Minute))
	testwait.Until(t, 10*time.Second, func() bool { ok("alice", "pw"); return failures.Load() > 0 }, "the broken file was not reported")
	if !ok("bob", "pw2") {
		t.Fatal("a broken file dropped the users")
	}
}
