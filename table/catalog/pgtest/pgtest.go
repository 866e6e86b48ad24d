// Package pgtest runs a real PostgreSQL server for tests: Debian's
// postgresql package (/usr/lib/postgresql/VERSION/bin), a fresh cluster in
// a temporary folder, trust authentication, on a free loopback port,
// stopped when the test ends. As root the cluster runs as the postgres
// user, since PostgreSQL refuses root. A missing server fails the test and
// names the package to install; it never skips.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// postgresBin is the newest PostgreSQL server's bin folder, from Debian's
// postgresql package.
func postgresBin(t testing.TB) string {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return pgVersion(b) - pgVersion(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d
		}
	}
	t.Fatal("no PostgreSQL server in /usr/lib/postgresql/*/bin: install it with `apt-get install -y postgresql` " +
		"(make -s print-interop-pkgs lists every package the interop tests need; .ci/run installs them)")
	return ""
}

func pgVersion(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// Start initialises a cluster in a fresh folder, starts a server on
// a free loopback port and returns its URL; the server is stopped when the
// test ends. PostgreSQL refuses to run as root, so as root the cluster
// belongs to, and the server runs as, the postgres user.
func Start(t testing.TB) string {
	t.Helper()
	bin := postgresBin(t)
	base, err := os.MkdirTemp("", "sediment-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	cred := pgCredential(t, base)
	data, sock := filepath.Join(base, "data"), filepath.Join(base, "sock")
	if err := os.Mkdir(sock, 0o700); err != nil {
		t.Fatal(err)
	}
	chown(t, cred, sock)
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "sediment", "--auth=trust", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port := freePort(t)
	srv := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", sock,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off")
	srv.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	logs := &strings.Builder{}
	srv.Stdout, srv.Stderr = logs, logs
	if err := srv.Start(); err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	t.Cleanup(func() { stopPostgres(t, srv) })
	pgURL := fmt.Sprintf("postgres://sediment:unused-password@127.0.0.1:%d/postgres?sslmode=disable", port)
	if err := waitPostgres(pgURL); err != nil {
		t.Fatalf("postgres did not come up: %v\n%s", err, logs.String())
	}
	return pgURL
}

// pgCredential is the user the cluster runs as: nil (ourselves) unless we
// are root, else the postgres user, who is given base.
func pgCredential(t testing.TB, base string) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("running as root, PostgreSQL needs an unprivileged user and there is no postgres user: %v "+
			"(apt-get install -y postgresql creates it)", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	chown(t, cred, base)
	return cred
}

func chown(t testing.TB, cred *syscall.Credential, path string) {
	t.Helper()
	if cred == nil {
		return
	}
	if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		t.Fatal(err)
	}
}

// waitPostgres pings url until the server answers, for up to 60 s.
func waitPostgres(url string) error {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return err
	}
	defer db.Close()
	for range 600 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// stopPostgres asks the server for a fast shutdown and kills it if it has
// not stopped within 30 s.
func stopPostgres(t testing.TB, srv *exec.Cmd) {
	_ = srv.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Errorf("postgres: %v", err)
		}
	case <-time.After(30 * time.Second):
		_ = srv.Process.Kill()
		<-done
		t.Error("postgres did not stop within 30 s of SIGINT; killed")
	}
}

// freePort is a loopback port that nothing listens on (just now).
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
