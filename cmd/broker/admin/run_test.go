package admin

import (
	"bytes"
	"net"
	"strings"
	"sync"
	"testing"
)

// run runs the CLI with SEDIMENT_BOOTSTRAP at a port nothing listens on:
// a command that reached the network would fail with exit 1, not 2.
func run(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	env := func(k string) string {
		if k == bootstrapEnv {
			return "127.0.0.1:1"
		}
		return ""
	}
	code = Run(args, &out, &errOut, env)
	return out.String(), errOut.String(), code
}

// TestUsageErrors: bad usage exits 2 with one line on stderr naming the
// flag (or what is missing), before any request is sent.
func TestUsageErrors(t *testing.T) {
	reset := []string{"groups", "reset-offsets", "--group", "g"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frob"}, "want one of topics, groups, offsets"},
		{[]string{"topics"}, "missing subcommand"},
		{[]string{"topics", "frob"}, `unknown subcommand "frob"`},
		{[]string{"topics", "create"}, "--topic is required"},
		{[]string{"topics", "create", "--topic", "a", "--partitions", "0"}, "--partitions 0"},
		{[]string{"topics", "create", "--topic", "a", "--partitions", "x"}, `invalid value "x" for flag --partitions`},
		{[]string{"topics", "create", "--topic", "a", "--replication-factor", "-2"}, "--replication-factor -2"},
		{[]string{"topics", "create", "--topic", "a", "--config", "novalue"}, `--config "novalue": want NAME=VALUE`},
		{[]string{"topics", "create", "--topic", "a", "--bogus"}, "flag provided but not defined: --bogus"},
		{[]string{"topics", "create", "--topic"}, "flag needs an argument: --topic"},
		{[]string{"topics", "list", "--output", "yaml"}, `--output "yaml"`},
		{[]string{"topics", "list", "--timeout", "0s"}, "--timeout 0s"},
		{[]string{"topics", "list", "extra"}, `unexpected argument "extra"`},
		{[]string{"topics", "list", "--bootstrap-server", ",,"}, "--bootstrap-server"},
		{[]string{"topics", "delete"}, "--topic is required"},
		{[]string{"topics", "alter-config", "--topic", "a"}, "nothing to change"},
		{[]string{"topics", "alter-config", "--topic", "a", "--set", "x=1", "--delete", "x"}, "--set and --delete both name x"},
		{[]string{"topics", "alter-config", "--topic", "a", "--partitions", "-3"}, "--partitions -3"},
		{[]string{"groups", "list", "--state", "weird"}, `--state "weird"`},
		{[]string{"groups", "describe"}, "--group or --all-groups is required"},
		{[]string{"groups", "describe", "--group", "a", "--all-groups"}, "--group and --all-groups exclude each other"},
		{[]string{"groups", "describe", "--all-groups", "--members", "--state", "--output", "csv"}, "--output csv prints one view"},
		{[]string{"groups", "delete"}, "--group is required"},
		{[]string{"groups", "delete-offsets", "--topic", "t"}, "--group is required"},
		{[]string{"groups", "delete-offsets", "--group", "g"}, "--topic is required"},
		{[]string{"groups", "delete-offsets", "--group", "g", "--topic", "t:x"}, `--topic "t:x": partition "x"`},
		{[]string{"groups", "reset-offsets", "--topic", "t", "--to-earliest"}, "--group is required"},
		{append(reset, "--topic", "t"), "a target is required"},
		{append(reset, "--topic", "t", "--to-earliest", "--to-latest"), "give one target, not --to-earliest and --to-latest"},
		{append(reset, "--topic", "t", "--to-earliest", "--dry-run", "--execute"), "--dry-run and --execute exclude each other"},
		{append(reset, "--to-earliest"), "--topic or --all-topics is required"},
		{append(reset, "--topic", "t", "--all-topics", "--to-earliest"), "--topic and --all-topics exclude each other"},
		{append(reset, "--all-topics", "--from-file", "f.json"), "--all-topics does not apply to --from-file"},
		{append(reset, "--topic", "t:1,-2", "--to-earliest"), `partition "-2"`},
		{append(reset, "--topic", ":1", "--to-earliest"), `--topic ":1"`},
		{append(reset, "--topic", "t", "--to-offset", "-1"), "--to-offset -1"},
		{append(reset, "--topic", "t", "--to-datetime", "yesterday"), `--to-datetime "yesterday": want RFC 3339`},
		{append(reset, "--topic", "t", "--by-duration", "forever"), `--by-duration "forever"`},
		{append(reset, "--topic", "t", "--by-duration", "-1h"), "must be positive"},
		{append(reset, "--from-file", "/nonexistent/offsets.json"), "--from-file"},
		{[]string{"offsets", "get"}, "--group is required"},
		{[]string{"offsets", "commit", "--group", "g"}, "--input-json is required"},
		{[]string{"offsets", "commit", "--group", "g", "--input-json", "/nonexistent/o.json"}, "--input-json"},
		{[]string{"transactions", "list", "--state", "weird"}, `--state "weird"`},
		{[]string{"transactions", "list", "--producer-id", "x"}, `--producer-id "x"`},
		{[]string{"transactions", "list", "--min-duration", "-1m"}, "--min-duration -1m0s: must not be negative"},
		{[]string{"transactions", "describe"}, "a transactional id is required"},
		{[]string{"transactions", "list", "tx-1"}, `unexpected argument "tx-1"`},
		{[]string{"transactions", "abort", "--partition", "0", "--start-offset", "1"}, "--topic is required"},
		{[]string{"transactions", "abort", "--topic", "t", "--start-offset", "1"}, "--partition is required"},
		{[]string{"transactions", "abort", "--topic", "t", "--partition", "0"}, "give --start-offset, or --producer-id"},
		{[]string{"transactions", "abort", "--topic", "t", "--partition", "0", "--start-offset", "1", "--producer-id", "4"}, "--start-offset excludes"},
		{[]string{"transactions", "abort", "--topic", "t", "--partition", "0", "--start-offset", "-1"}, "--start-offset -1"},
		{[]string{"transactions", "abort", "--topic", "t", "--partition", "0", "--producer-id", "4"}, "are all required"},
		{[]string{"producers", "describe"}, "--topic is required"},
		{[]string{"producers", "describe", "--topic", "t", "--partition", "x"}, `--partition "x"`},
	} {
		_, stderr, code := run(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("broker %s: exit %d, stderr %q; want exit 2 and one line containing %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestHelp: --help of every subcommand exits 0 and prints its synopsis,
// flags and examples; a family's --help lists its subcommands.
func TestHelp(t *testing.T) {
	for family, specs := range families {
		stdout, _, code := run(family, "--help")
		if code != 0 || !strings.Contains(stdout, "Subcommands:") {
			t.Errorf("broker %s --help: exit %d\n%s", family, code, stdout)
		}
		for _, s := range specs {
			sub := strings.TrimPrefix(s.name, family+" ")
			for _, h := range []string{"--help", "-h"} {
				stdout, stderr, code := run(family, sub, h)
				_, examples, _ := strings.Cut(stdout, "\nExamples:\n")
				for _, want := range []string{"Usage: broker " + s.name, "\n  --bootstrap-server ", "\n  --timeout "} {
					if code != 0 || stderr != "" || !strings.Contains(stdout, want) || !strings.Contains(examples, "  broker "+s.name) {
						t.Errorf("broker %s %s: exit %d, stderr %q, stdout lacks %q or an example:\n%s", s.name, h, code, stderr, want, stdout)
					}
				}
				if s.read != strings.Contains(stdout, "\n  --output ") {
					t.Errorf("broker %s %s: --output listed %v, want %v", s.name, h, !s.read, s.read)
				}
			}
		}
	}
}

// TestUnreachable: a cluster that does not answer is a failed operation:
// exit 1 and one line naming the address.
func TestUnreachable(t *testing.T) {
	_, stderr, code := run("topics", "list", "--timeout", "2s")
	if code != 1 || !strings.Contains(stderr, "127.0.0.1:1") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("topics list against a closed port: exit %d, stderr %q; want 1 and one line naming 127.0.0.1:1", code, stderr)
	}
}

// TestSilentCluster: a cluster that accepts connections but never answers
// fails the command once --timeout has passed, saying so.
func TestSilentCluster(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	var stdout, stderr bytes.Buffer
	code := Run([]string{"groups", "list", "--bootstrap-server", ln.Addr().String(), "--timeout", "1s"}, &stdout, &stderr, func(string) string { return "" })
	if code != 1 || !strings.Contains(stderr.String(), "within --timeout 1s") {
		t.Errorf("groups list against a silent listener: exit %d, stderr %q; want 1 and 'within --timeout 1s'", code, stderr.String())
	}
}
