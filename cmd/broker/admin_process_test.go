package main

// The admin commands through the real entry point: this test binary run
// as `broker` (SEDIMENT_TEST_BROKER=1, see TestMain), so main's dispatch,
// the process exit codes and the environment are the ones an operator
// gets.

import (
	"errors"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"
)

// brokerCLI runs `broker ARGS` as a process with env added and returns its
// stdout, stderr and exit code.
func brokerCLI(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	return brokerCLIInput(t, env, "", args...)
}

// brokerCLIInput is brokerCLI with stdin.
func brokerCLIInput(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "SEDIMENT_TEST_BROKER=1"), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	}
	t.Fatalf("run broker %v: %v", args, err)
	return "", "", -1
}

func TestAdminProcess(t *testing.T) {
	tb := startTestBroker(t, "")
	dead := []string{"SEDIMENT_BOOTSTRAP=127.0.0.1:1"}
	for _, tc := range []struct {
		env  []string
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{dead, []string{"topics", "create", "--topic", "proc", "--bootstrap-server", tb.addr}, 0, "Created topic proc", ""},
		{[]string{"SEDIMENT_BOOTSTRAP=" + tb.addr}, []string{"topics", "list"}, 0, "proc ", ""},
		{dead, []string{"topics", "list", "--bootstrap-server", tb.addr, "--output", "csv"}, 0, "proc,1,1", ""},
		{dead, []string{"topics", "delete", "--topic", "nope", "--bootstrap-server", tb.addr}, 1, "", "UNKNOWN_TOPIC_OR_PARTITION"},
		{dead, []string{"groups", "frob"}, 2, "", `unknown subcommand "frob"`},
		{dead, []string{"offsets", "get", "--group", "g", "--output", "xml"}, 2, "", `--output "xml"`},
		{dead, []string{"groups", "describe", "--help"}, 0, "Examples:", ""},
		{dead, []string{"help"}, 0, "broker groups SUBCOMMAND", ""},
	} {
		stdout, stderr, code := brokerCLI(t, tc.env, tc.args...)
		if code != tc.code || !strings.Contains(stdout, tc.out) || !strings.Contains(stderr, tc.err) {
			t.Errorf("broker %s: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d, %q in stdout, %q in stderr",
				strings.Join(tc.args, " "), code, stdout, stderr, tc.code, tc.out, tc.err)
		}
	}
}

// TestAdminProcessStdin: `offsets get` piped into `offsets commit
// --input-json -` copies a group's offsets, as a shell pipeline would.
func TestAdminProcessStdin(t *testing.T) {
	tb := startTestBroker(t, "")
	env := []string{"SEDIMENT_BOOTSTRAP=" + tb.addr}
	if _, stderr, code := brokerCLI(t, env, "topics", "create", "--topic", "pipe", "--partitions", "2"); code != 0 {
		t.Fatalf("create: %s", stderr)
	}
	produceTo(t, tb.addr, "pipe", 0, 3, time.Time{})
	produceTo(t, tb.addr, "pipe", 1, 5, time.Time{})
	consumeAndCommit(t, tb.addr, "from", 8, "pipe")
	export, stderr, code := brokerCLI(t, env, "offsets", "get", "--group", "from", "--output", "csv")
	if code != 0 {
		t.Fatalf("get: %s", stderr)
	}
	if _, stderr, code := brokerCLIInput(t, env, export, "offsets", "commit", "--group", "to", "--input-json", "-"); code != 0 {
		t.Fatalf("commit from stdin: %s", stderr)
	}
	want := map[string]int64{"pipe/0": 3, "pipe/1": 5}
	if got := committed(t, kadmFor(t, tb.addr), "to"); !reflect.DeepEqual(got, want) {
		t.Errorf("group to after the pipe: %v, want %v", got, want)
	}
}
