package admin

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// commandSpec is one subcommand: its words, its help and how it runs.
type commandSpec struct {
	name     string // "topics create"
	synopsis string // the usage line after "broker "
	about    string // what it does, for --help
	examples string // shell lines, for --help
	read     bool   // a read command: has --output
	// operands, when set, names the arguments the command takes besides
	// its flags ("ID..."), given before, between or after the flags.
	operands string
	// setup registers the command's own flags and returns what runs once
	// they are parsed.
	setup func(fs *flagSet) action
}

// action runs a parsed command. Bad flag combinations are usage errors
// (returned before any request); anything else is a failed operation.
type action func(inv *invocation) error

// families maps the first word (topics, groups, offsets) to its subcommands.
var families = map[string][]*commandSpec{}

func register(family string, spec *commandSpec) {
	families[family] = append(families[family], spec)
}

// Run runs `broker ARGS...` for the admin commands: args[0] is topics,
// groups or offsets. It returns the exit code: 0 ok, 1 a failed operation,
// 2 bad usage. getenv reads the environment (SEDIMENT_BOOTSTRAP).
func Run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 || families[args[0]] == nil {
		fmt.Fprintf(stderr, "broker: want one of topics, groups, offsets, transactions, producers\n")
		return 2
	}
	family, specs := args[0], families[args[0]]
	if len(args) < 2 || isHelp(args[1]) {
		printFamily(stdout, family, specs)
		if len(args) < 2 {
			fmt.Fprintf(stderr, "broker %s: missing subcommand (%s)\n", family, names(specs))
			return 2
		}
		return 0
	}
	spec := find(specs, args[1])
	if spec == nil {
		fmt.Fprintf(stderr, "broker %s: unknown subcommand %q (want %s)\n", family, args[1], names(specs))
		return 2
	}
	return runSpec(spec, args[2:], stdout, stderr, getenv)
}

func runSpec(spec *commandSpec, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := newFlagSet(spec)
	act := spec.setup(fs)
	err := fs.parse(args, stdout, getenv)
	if err == nil {
		inv := newInvocation(fs.common, stdout, stderr)
		err = act(inv)
		inv.close()
	}
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "broker %s: %v (see --help)\n", spec.name, err)
		return 2
	default:
		fmt.Fprintf(stderr, "broker %s: %v\n", spec.name, err)
		return 1
	}
}

// isHelp says whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

func find(specs []*commandSpec, sub string) *commandSpec {
	for _, s := range specs {
		if strings.TrimPrefix(s.name, s.family()+" ") == sub {
			return s
		}
	}
	return nil
}

func (s *commandSpec) family() string { family, _, _ := strings.Cut(s.name, " "); return family }

func names(specs []*commandSpec) string {
	var out []string
	for _, s := range specs {
		out = append(out, strings.TrimPrefix(s.name, s.family()+" "))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// printFamily prints the subcommands of one family with their synopses.
func printFamily(w io.Writer, family string, specs []*commandSpec) {
	sorted := append([]*commandSpec(nil), specs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	fmt.Fprintf(w, "Usage: broker %s SUBCOMMAND [flags]\n\nSubcommands:\n", family)
	for _, s := range sorted {
		fmt.Fprintf(w, "  broker %s\n", s.synopsis)
	}
	fmt.Fprintf(w, "\nbroker %s SUBCOMMAND --help shows the flags and examples of one.\n", family)
}
