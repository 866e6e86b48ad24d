package wal

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func write(t *testing.T, f File, s string) {
	t.Helper()
	if _, err := f.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

func contents(t *testing.T, m *MemFS, name string) string {
	t.Helper()
	b, err := m.Bytes(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMemFSCrashRevertsUnsynced(t *testing.T) {
	t.Parallel()
	m := NewMemFS()
	_ = m.MkdirAll("/d")
	f, _ := m.Create("/d/a")
	write(t, f, "durable")
	_ = f.Sync()
	_ = m.SyncDir("/d")
	write(t, f, "+lost")
	_ = f.Truncate(3) // a truncation is unsynced too
	write(t, f, "XY")
	m.Crash()
	if got := contents(t, m, "/d/a"); got != "durable" {
		t.Fatalf("after crash: %q", got)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, ErrCrashed) {
		t.Fatalf("write on a pre-crash handle: %v", err)
	}
}

func TestMemFSCrashUndoesNamespace(t *testing.T) {
	t.Parallel()
	m := NewMemFS()
	_ = m.MkdirAll("/d")
	for _, n := range []string{"/d/keep", "/d/gone", "/d/moved"} {
		f, _ := m.Create(n)
		write(t, f, n)
		_ = f.Sync()
	}
	_ = m.SyncDir("/d")
	f, _ := m.Create("/d/new") // synced file, unsynced directory entry
	write(t, f, "new")
	_ = f.Sync()
	_ = m.Remove("/d/gone")
	_ = m.Rename("/d/moved", "/d/renamed")
	m.Crash()
	names, _ := m.ReadDir("/d")
	if want := []string{"gone", "keep", "moved"}; !slices.Equal(names, want) {
		t.Fatalf("after crash: %v, want %v", names, want)
	}
	if got := contents(t, m, "/d/moved"); got != "/d/moved" {
		t.Fatalf("renamed-back file holds %q", got)
	}
}

func TestMemFSCrashTornKeepsPrefix(t *testing.T) {
	t.Parallel()
	m := NewMemFS()
	m.SetBytes("/d/a", []byte("base"))
	f, _ := m.OpenFile("/d/a")
	write(t, f, "123456")
	m.CrashTorn(func(name string, n int) int {
		if name != "/d/a" || n != 6 {
			t.Errorf("keep(%q, %d)", name, n)
		}
		return 2
	})
	if got := contents(t, m, "/d/a"); got != "base12" {
		t.Fatalf("after torn crash: %q", got)
	}
}

func TestMemFSInjectedFailures(t *testing.T) {
	t.Parallel()
	m := NewMemFS()
	m.SetBytes("/d/a", nil)
	f, _ := m.OpenFile("/d/a")
	boom := errors.New("boom")
	m.FailNextWrite(boom)
	if _, err := f.Write([]byte("x")); !errors.Is(err, boom) {
		t.Fatalf("write: %v", err)
	}
	write(t, f, "ok") // only the next write fails
	m.FailNextSync(boom)
	if err := f.Sync(); !errors.Is(err, boom) {
		t.Fatalf("sync: %v", err)
	}
	m.Crash() // the failed sync made nothing durable
	if got := contents(t, m, "/d/a"); got != "" {
		t.Fatalf("after failed sync and crash: %q", got)
	}
}

func TestMemFSReadOnlyAndReadAt(t *testing.T) {
	t.Parallel()
	m := NewMemFS()
	m.SetBytes("/d/a", []byte("hello"))
	f, _ := m.Open("/d/a")
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatal("write on a read-only handle succeeded")
	}
	p := make([]byte, 4)
	if n, err := f.ReadAt(p, 3); n != 2 || err == nil || !bytes.Equal(p[:n], []byte("lo")) {
		t.Fatalf("short ReadAt: %d %v", n, err)
	}
	_ = f.Close()
	if _, err := f.ReadAt(p, 0); err == nil {
		t.Fatal("ReadAt after Close succeeded")
	}
	if _, err := m.Create("/nodir/x"); err == nil {
		t.Fatal("Create in a missing directory succeeded")
	}
}
