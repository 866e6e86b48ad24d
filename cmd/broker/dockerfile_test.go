package main

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDockerfileBuild runs the Dockerfile's build command as written
// (there is no Docker engine here to build the image) and checks what the
// image relies on: the binary is static, with no ELF interpreter and no
// shared libraries, so it runs on the small final base; and it serves
// records as the unprivileged user of the Dockerfile's USER line, from a
// data directory that user owns, and shuts down cleanly on SIGTERM.
func TestDockerfileBuild(t *testing.T) {
	var build []string
	for _, run := range dockerfileArgs(t, "RUN") {
		if strings.Contains(run, "go build") {
			build = shellFields(t, run)
		}
	}
	var uid, gid int
	for _, user := range dockerfileArgs(t, "USER") {
		if _, err := fmt.Sscanf(user, "%d:%d", &uid, &gid); err != nil {
			t.Fatalf("Dockerfile USER %q: want numeric uid:gid", user)
		}
	}
	if build == nil || uid == 0 {
		t.Fatalf("Dockerfile: want a RUN line with go build and a non-root numeric USER")
	}

	dir, err := os.MkdirTemp("", "dockerfile-build-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // the unprivileged user runs the binary from here
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "broker")
	var env, args []string
	for i, f := range build {
		if f == "go" {
			args = build[i+1:]
			break
		}
		env = append(env, f)
	}
	for i := range args {
		if args[i] == "-o" && i+1 < len(args) {
			args[i+1] = bin
		}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has an ELF interpreter: it is dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %q", libs)
	}
	f.Close()

	dataDir := filepath.Join(dir, "data")
	if err := os.Mkdir(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var attr *syscall.SysProcAttr
	if os.Geteuid() == 0 { // run it as the image does; otherwise this user is unprivileged already
		if err := os.Chown(dataDir, uid, gid); err != nil {
			t.Fatal(err)
		}
		attr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	p := startBinary(t, bin, dataDir, "", nil, attr)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.DefaultProduceTopic("image"), kgo.AllowAutoTopicCreation(),
		kgo.ConsumeTopics("image"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("from the image's build")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v\n%s", err, p.logs.String())
	}
	fs := cl.PollFetches(ctx)
	if err := fs.Err0(); err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "from the image's build" {
		t.Fatalf("fetched %d records", len(recs))
	}

	if os.Geteuid() == 0 {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(dataDir, "wal"), &st); err != nil {
			t.Fatalf("the broker's WAL directory: %v", err)
		}
		if int(st.Uid) != uid {
			t.Errorf("the WAL directory belongs to uid %d, want %d: the broker did not run as the image's user", st.Uid, uid)
		}
	}

	if err := p.terminate(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.logs.String())
	}
}

// shellFields splits a Dockerfile shell-form command into words the way
// sh would for the simple quoting the Dockerfile uses (double quotes
// group a word and are removed).
func shellFields(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quotes in %q", s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	for _, f := range out {
		if strings.ContainsAny(f, "$`\\|&;<>") {
			t.Fatalf("Dockerfile build command %q uses shell syntax this test does not run: %s", s, strconv.Quote(f))
		}
	}
	return out
}
