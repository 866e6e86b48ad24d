package catalog_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sediment-io/sediment/table/catalog"
)

// TestBadCatalogURL: every unusable --table-catalog value is an error that
// names the flag and says what is wrong, never a panic, and never repeats
// a password or token.
func TestBadCatalogURL(t *testing.T) {
	closed := closedLoopbackPort(t)
	for _, tc := range []struct{ url, want string }{
		{"mysql://u:hunter2@127.0.0.1:3306/db", `unsupported scheme "mysql"`},
		{"http://127.0.0.1:8181/api", `unsupported scheme "http"`},
		{"catalog.db", "no scheme"},
		{"::", "missing protocol scheme"},
		{"postgres://u:hunter2@127.0.0.1:%zz/db", "invalid port"},
		{"postgres://u:hunter2@127.0.0.1:5432/%zz", "invalid URL escape"},
		{"sqlite://relative.db", "three slashes"},
		{"sqlite:relative.db", "ABSOLUTE"},
		{"sqlite:///var/lib/sediment/", "is a directory"},
		{"sqlite:///tmp/x.db?mode=ro", "no parameters"},
		{"postgres:///db", "no server"},
		{"postgres://u:hunter2@127.0.0.1:notaport/db", "invalid port"},
		{"postgres://u:hunter2@127.0.0.1:5432/db?sslmode=sometimes", "sslmode"},
		{"rest+http://", "no server"},
		{"rest+https:///path", "no server"},
		{"rest+http://127.0.0.1:1/?bogus=1", "unknown parameter bogus"},
		{"rest+http://127.0.0.1:1/?token=", "non-empty"},
		{"rest+http://127.0.0.1:" + closed + "/?token=hunter2", "connection refused"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cat, err := catalog.Open(ctx, tc.url, catalog.Options{DataDir: t.TempDir()})
		cancel()
		if err == nil {
			closeCatalog(t, cat)
			t.Errorf("Open(%q): no error", tc.url)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "--table-catalog") || !strings.Contains(msg, tc.want) {
			t.Errorf("Open(%q) = %q, want an error naming --table-catalog and %q", tc.url, msg, tc.want)
		}
		if strings.Contains(msg, "hunter2") {
			t.Errorf("Open(%q) = %q: the error shows the secret", tc.url, msg)
		}
	}
}

func TestOpenNeedsStorage(t *testing.T) {
	if _, err := catalog.Open(context.Background(), "", catalog.Options{}); err == nil {
		t.Error("Open with no data dir: no error")
	}
	_, err := catalog.Open(context.Background(), "", catalog.Options{DataDir: t.TempDir(), ObjectStoreURL: "gs://bucket"})
	if err == nil || !strings.Contains(err.Error(), "--object-store") {
		t.Errorf("Open with an unusable object store = %v, want an error naming --object-store", err)
	}
}

// closedLoopbackPort is a loopback port nothing listens on (just now).
func closedLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
