//go:build interop

package main

// A consumer group of two members of the same PyPI client that rebalances
// under them (the clients and venv of pypi_interop_test.go).

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestInteropPyPIGroupRebalance: one member of a group takes all four
// partitions and reads what is there; a second member joins, and the
// group splits them two and two (the first commits what it read as its
// partitions are revoked); more records come, both read their share to the
// end, commit and leave. Together they read every record exactly once, the
// second member some of them, and the group's offsets end at the topic's.
func TestInteropPyPIGroupRebalance(t *testing.T) {
	py := pypiVenv(t)
	tb := startTestBroker(t, "")
	for _, script := range []string{"confluent_group_member.py", "aiokafka_group_member.py"} {
		t.Run(script, func(t *testing.T) {
			name := script[:len(script)-3]
			topic, group := "rebalance-"+name, "r-"+name
			createTopics(t, tb.addr, topic, 4)
			produceGenerated(t, tb.addr, topic, 0, 200)
			first := py.start(t, script, tb.addr, topic, group)
			waitGroupAssigned(t, tb.addr, group, 4)
			second := py.start(t, script, tb.addr, topic, group)
			waitGroupAssigned(t, tb.addr, group, 2, 2)
			produceGenerated(t, tb.addr, topic, 200, 150)
			a, b := first.finish(t), second.finish(t)
			if len(b) == 0 {
				t.Fatalf("the second member read nothing of the 150 records produced after it joined")
			}
			checkPyPIRecords(t, append(a, b...), 0, 350)
			checkCommittedAtEnd(t, tb.addr, group, topic)
		})
	}
}

// pypiProc is a script running in the background until its stdin closes.
type pypiProc struct {
	script         string
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr bytes.Buffer
}

func (py pypiPython) start(t *testing.T, script string, args ...string) *pypiProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	p := &pypiProc{script: script, cmd: exec.CommandContext(ctx, py.python, py.argv(script, args...)...)}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	stdin, err := p.cmd.StdinPipe()
	if err == nil {
		err = p.cmd.Start()
	}
	if err != nil {
		cancel()
		t.Fatalf("start %s: %v", script, err)
	}
	p.stdin = stdin
	t.Cleanup(func() {
		cancel() // kills the script unless it already exited
		p.cmd.Wait()
	})
	return p
}

// finish closes the script's stdin, which tells it to finish, and returns
// the records it read.
func (p *pypiProc) finish(t *testing.T) []pypiRecord {
	t.Helper()
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s", p.script, err, p.stderr.String())
	}
	return parsePyPIResult(t, p.script, p.stdout.String())
}

// waitGroupAssigned waits until group is stable with one member per entry
// of partitions, holding that many partitions each.
func waitGroupAssigned(t *testing.T, addr, group string, partitions ...int) {
	t.Helper()
	ctx, _ := ctxFor(t, 2*time.Minute)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var last kadm.DescribedGroup
	for {
		groups, err := adm.DescribeGroups(ctx, group)
		if err == nil {
			last = groups[group]
			if last.Err == nil && last.State == "Stable" && sameAssignment(last, partitions) {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s never stable with %v partitions per member: last %+v (err %v)", group, partitions, last, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func sameAssignment(g kadm.DescribedGroup, partitions []int) bool {
	if len(g.Members) != len(partitions) {
		return false
	}
	held := map[int]int{}
	for _, m := range g.Members {
		n := 0
		if c, ok := m.Assigned.AsConsumer(); ok {
			for _, tp := range c.Topics {
				n += len(tp.Partitions)
			}
		}
		held[n]++
	}
	for _, n := range partitions {
		held[n]--
	}
	for _, left := range held {
		if left != 0 {
			return false
		}
	}
	return true
}
