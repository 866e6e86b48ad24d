package admin

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

func init() {
	register("groups", &commandSpec{
		name: "groups reset-offsets",
		synopsis: "groups reset-offsets --group G (--topic T[:P,P...] ... | --all-topics)\n" +
			"      (--to-earliest | --to-latest | --to-offset N | --to-datetime RFC3339 | --by-duration D | --shift-by N | --from-file F)\n" +
			"      [--dry-run | --execute] [--output table|json|csv]",
		about: `Moves a group's committed offsets. The default is a dry run: it prints the
plan (per partition the current offset, the new one and the difference) and
changes nothing; --execute commits the plan, and is refused while the group
has active members. A target outside a partition's log is clamped to its log
start or end offset, with a warning on stderr for each partition clamped.

Partitions: --topic T (every partition of T), --topic T:0,2 (those), or
--all-topics (every partition the group has committed). With --from-file
the partitions are the file's, and --topic, if given, keeps only those.

Targets:
  --to-earliest         the log start offset
  --to-latest           the log end offset
  --to-offset N         offset N
  --to-datetime TIME    the first offset at or after TIME (RFC 3339,
                        2024-05-01T00:00:00Z); the log end if none is
  --by-duration D       the first offset at or after now minus D (Go
                        duration 36h30m, or ISO 8601 P1DT12H)
  --shift-by N          the committed offset plus N (N may be negative)
  --from-file F         the offsets in F: JSON or CSV from "offsets get" or
                        from a dry run (its new_offset), or Kafka's
                        topic,partition,offset lines`,
		examples: "  broker groups reset-offsets --group billing --topic orders --to-earliest\n" +
			"  broker groups reset-offsets --group billing --topic orders:3 --shift-by 1 --execute   # skip a poison message\n" +
			"  broker groups reset-offsets --group billing --all-topics --by-duration 24h --execute   # re-process a day\n" +
			"  broker groups reset-offsets --group billing --topic orders --to-latest --output json > plan.json   # review, then:\n" +
			"  broker groups reset-offsets --group billing --from-file plan.json --execute",
		read:  true,
		setup: setupReset,
	})
}

// resetRequest is a parsed reset-offsets command line.
type resetRequest struct {
	group     string
	topics    stringList
	allTopics bool
	mode      string // the target flag given: "to-earliest", ...
	offset    int64  // --to-offset or --shift-by
	at        time.Time
	fromFile  string
	execute   bool
	scope     topicScope // parsed --topic
}

// resetModes are the target flags, exactly one of which is given.
var resetModes = []string{"to-earliest", "to-latest", "to-offset", "to-datetime", "by-duration", "shift-by", "from-file"}

func setupReset(fs *flagSet) action {
	r := &resetRequest{}
	fs.StringVar(&r.group, "group", "", "`GROUP` whose offsets to move")
	fs.Var(&r.topics, "topic", "`TOPIC[:P,P...]`: every partition of TOPIC, or those listed (repeatable)")
	fs.BoolVar(&r.allTopics, "all-topics", false, "every partition the group has committed")
	fs.Bool("to-earliest", false, "to the log start offset")
	fs.Bool("to-latest", false, "to the log end offset")
	toOffset := fs.Int64("to-offset", 0, "to offset `N`")
	datetime := fs.String("to-datetime", "", "to the first offset at or after `TIME` (RFC 3339)")
	duration := fs.String("by-duration", "", "to the first offset at or after now minus `D`")
	shift := fs.Int64("shift-by", 0, "by `N` from the committed offset")
	fs.StringVar(&r.fromFile, "from-file", "", "to the offsets in `FILE`")
	dryRun := fs.Bool("dry-run", false, "print the plan only (the default)")
	fs.BoolVar(&r.execute, "execute", false, "commit the plan")
	return func(inv *invocation) error {
		if err := r.check(fs, *dryRun); err != nil {
			return err
		}
		switch r.mode {
		case "to-offset":
			if r.offset = *toOffset; r.offset < 0 {
				return usagef("--to-offset %d: must not be negative", r.offset)
			}
		case "shift-by":
			r.offset = *shift
		case "to-datetime":
			at, err := time.Parse(time.RFC3339Nano, *datetime)
			if err != nil {
				return usagef("--to-datetime %q: want RFC 3339, like 2024-05-01T00:00:00Z", *datetime)
			}
			r.at = at
		case "by-duration":
			d, err := parseDuration(*duration)
			if err != nil {
				return usagef("--by-duration %q: %v", *duration, err)
			}
			r.at = time.Now().Add(-d)
		}
		return inv.reset(r)
	}
}

// check validates the flag combination: a group, one target, and a scope.
func (r *resetRequest) check(fs *flagSet, dryRun bool) error {
	var modes []string
	for _, m := range resetModes {
		if fs.isSet(m) {
			modes = append(modes, "--"+m)
			r.mode = m
		}
	}
	switch {
	case r.group == "":
		return usagef("--group is required")
	case len(modes) == 0:
		return usagef("a target is required: one of --%s", strings.Join(resetModes, ", --"))
	case len(modes) > 1:
		return usagef("give one target, not %s", strings.Join(modes, " and "))
	case dryRun && r.execute:
		return usagef("--dry-run and --execute exclude each other")
	case len(r.topics) > 0 && r.allTopics:
		return usagef("--topic and --all-topics exclude each other")
	case r.mode == "from-file" && r.allTopics:
		return usagef("--all-topics does not apply to --from-file (the file names the partitions)")
	case r.mode != "from-file" && len(r.topics) == 0 && !r.allTopics:
		return usagef("--topic or --all-topics is required")
	}
	var err error
	r.scope, err = parseScope(r.topics)
	return err
}

// reset plans the reset, prints the plan, and commits it with --execute.
func (inv *invocation) reset(r *resetRequest) error {
	var file []offsetEntry
	if r.mode == "from-file" {
		var err error
		if file, err = readOffsetFile("--from-file", r.fromFile); err != nil {
			return err
		}
	}
	plan, err := inv.planReset(r, file)
	if err != nil {
		return err
	}
	if r.execute {
		if err := inv.checkInactive(r.group); err != nil {
			return err
		}
	}
	if err := inv.emit(planView(plan)); err != nil {
		return err
	}
	if !r.execute {
		fmt.Fprintf(inv.stderr, "Dry run: nothing was committed. Add --execute to commit these %d offsets.\n", len(plan))
		return nil
	}
	if err := inv.commitPlan(r.group, plan); err != nil {
		return err
	}
	fmt.Fprintf(inv.stderr, "Committed %d offsets for group %s.\n", len(plan), r.group)
	return nil
}

// checkInactive refuses a group with members: a live consumer would
// overwrite the new offsets with its own next commit. A group the cluster
// does not know yet is fine: the commit creates it, as Kafka allows.
func (inv *invocation) checkInactive(group string) error {
	listed, err := inv.listGroups(nil)
	if err != nil {
		return err
	}
	infos, failed, err := inv.describeGroups([]string{group}, listed)
	switch {
	case err != nil:
		return err
	case len(failed) > 0 && errors.Is(failed[0], errNoSuchGroup):
		return nil
	case len(failed) > 0:
		return failed[0]
	case len(infos) != 1:
		return fmt.Errorf("describe group %s: no answer for the group", group)
	}
	g := infos[0]
	if len(g.members) > 0 || (g.state != "Empty" && g.state != "Dead") {
		return fmt.Errorf("group %s has %d active member(s) (state %s): --execute needs an inactive group; stop its consumers and retry (nothing was committed)",
			group, len(g.members), g.state)
	}
	return nil
}
