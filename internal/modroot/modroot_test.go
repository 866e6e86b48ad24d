package modroot

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirFindsTheCheckoutFromAPackage(t *testing.T) {
	root, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if !declares(filepath.Join(root, "go.mod")) {
		t.Fatalf("%s/go.mod does not declare %s", root, Path)
	}
}

// A go.mod of another module on the way up is passed over, and a tree
// without Sediment's go.mod is an error, not the filesystem root.
func TestFromSkipsOtherModules(t *testing.T) {
	top := t.TempDir()
	inner := filepath.Join(top, "sub", "pkg")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(dir, module string) {
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+module+"\n\ngo 1.24\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(top, "sub"), "example.com/other")
	if got, err := from(inner); err == nil {
		t.Fatalf("found %s in a tree without %s", got, Path)
	}
	write(top, Path)
	if got, err := from(inner); err != nil || got != top {
		t.Fatalf("from(%s) = %q, %v; want %q", inner, got, err, top)
	}
}
