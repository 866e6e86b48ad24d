package admin

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// Defaults of the flags every command shares.
const (
	defaultBootstrap = "127.0.0.1:9092"
	defaultTimeout   = 30 * time.Second
	bootstrapEnv     = "SEDIMENT_BOOTSTRAP"
)

// usageError is bad usage: the command line itself is wrong. Run prints it
// as one line and exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelp is returned by parse when --help was asked for and printed.
var errHelp = errors.New("admin: help shown")

// stringList is a repeatable flag: each use appends one value.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("must not be empty")
	}
	*l = append(*l, v)
	return nil
}

// commonFlags are the flags of every command: where the cluster is, how long
// to wait for it and, on read commands, how to print.
type commonFlags struct {
	bootstrap string
	timeout   time.Duration
	output    string
}

// flagSet is one command's flags plus what its --help prints.
type flagSet struct {
	*flag.FlagSet
	spec    *commandSpec
	common  commonFlags
	hasOut  bool
	outputs []string
	// operands are the non-flag arguments of a command that takes them
	// (commandSpec.operands).
	operands []string
}

// newFlagSet returns the flags of spec with the common ones registered.
// Read commands also get --output.
func newFlagSet(spec *commandSpec) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(spec.name, flag.ContinueOnError), spec: spec}
	fs.SetOutput(io.Discard)
	fs.StringVar(&fs.common.bootstrap, "bootstrap-server", "", "`HOST:PORT[,HOST:PORT...]` of the cluster (default $"+bootstrapEnv+", else "+defaultBootstrap+")")
	fs.DurationVar(&fs.common.timeout, "timeout", defaultTimeout, "how long the whole command may take")
	if spec.read {
		fs.hasOut = true
		fs.outputs = []string{"table", "json", "csv"}
		fs.StringVar(&fs.common.output, "output", "table", "output `FORMAT`: table, json or csv")
	}
	return fs
}

// parse parses args, printing help to stdout for --help, and checks the
// common flags. Its errors are usage errors or errHelp.
func (fs *flagSet) parse(args []string, stdout io.Writer, getenv func(string) string) error {
	// The flag package stops at the first operand: parse again after each
	// one, so that flags may follow operands (describe ID --output json).
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.printHelp(stdout)
				return errHelp
			}
			return &usageError{msg: dashDash(err.Error())}
		}
		if fs.NArg() == 0 {
			break
		}
		if fs.spec.operands == "" {
			return usagef("unexpected argument %q (flags take --name value)", fs.Arg(0))
		}
		fs.operands = append(fs.operands, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if fs.common.bootstrap == "" {
		fs.common.bootstrap = getenv(bootstrapEnv)
	}
	if fs.common.bootstrap == "" {
		fs.common.bootstrap = defaultBootstrap
	}
	if fs.common.timeout <= 0 {
		return usagef("--timeout %s: must be positive", fs.common.timeout)
	}
	if fs.hasOut && !contains(fs.outputs, fs.common.output) {
		return usagef("--output %q: want table, json or csv", fs.common.output)
	}
	return nil
}

// isSet says whether the named flag was given on the command line.
func (fs *flagSet) isSet(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// printHelp prints the synopsis, the flags and the examples of the command.
func (fs *flagSet) printHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage: broker %s\n\n%s\n\nFlags:\n", fs.spec.synopsis, strings.TrimSpace(fs.spec.about))
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			name = " " + name
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && f.DefValue != "0" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "  --%s%s\n        %s%s\n", f.Name, name, usage, def)
	})
	fmt.Fprintf(w, "\nExamples:\n%s\n", strings.TrimRight(fs.spec.examples, "\n"))
}

// dashDash rewrites the flag package's "-name" to the "--name" spelling
// this command line documents.
func dashDash(msg string) string { return flagName.ReplaceAllString(msg, "$1--$2") }

var flagName = regexp.MustCompile(`(: | flag | for )-(\w)`)

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
