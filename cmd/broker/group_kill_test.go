package main

// A group member SIGKILLed in its own process: the others take its
// partitions over once its session times out and go on from its last
// committed offset, so that no record is lost.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// memberProcessEnv makes the test binary run runGroupMember (from TestMain) as a
// group member (its value is a JSON memberSpec).
const memberProcessEnv = "SEDIMENT_TEST_GROUP_MEMBER"

// memberSpec configures a member process.
type memberSpec struct {
	Addr, Group, Topic string
	Session            time.Duration
	Pace               time.Duration // pause after each batch, so it is slow
}

// runGroupMember is the group member process of TestGroupMemberKilled,
// which runs the test binary with memberProcessEnv set (TestMain sends it
// here) and kills it with SIGKILL. It prints, unbuffered, one line per
// event: ASSIGNED p, REVOKED p, PROCESSED p o, COMMIT p next (before
// committing) and ACK or NACK (after). It returns the exit code.
func runGroupMember(raw string) int {
	var spec memberSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "group member: %s: %v\n", memberProcessEnv, err)
		return 2
	}
	say := func(format string, args ...any) { fmt.Fprintf(os.Stdout, format+"\n", args...) }
	report := func(what string) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			for _, p := range m[spec.Topic] {
				say("%s %d", what, p)
			}
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(spec.Addr), kgo.ConsumerGroup(spec.Group), kgo.ConsumeTopics(spec.Topic),
		kgo.ClientID("doomed"), kgo.SessionTimeout(spec.Session), kgo.HeartbeatInterval(100*time.Millisecond),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond), kgo.OnPartitionsAssigned(report("ASSIGNED")),
		kgo.OnPartitionsRevoked(report("REVOKED")), kgo.OnPartitionsLost(report("REVOKED")))
	if err != nil {
		fmt.Fprintf(os.Stderr, "group member: %v\n", err)
		return 1
	}
	defer cl.Close()
	// The parent kills this process long before; the deadline only keeps
	// an orphan from living forever.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for ctx.Err() == nil {
		fs := cl.PollRecords(ctx, 5)
		recs := fs.Records()
		if len(recs) == 0 {
			continue
		}
		next := map[int32]int64{}
		for _, r := range recs {
			say("PROCESSED %d %d", r.Partition, r.Offset)
			next[r.Partition] = r.Offset + 1
		}
		for p, o := range next {
			say("COMMIT %d %d", p, o)
		}
		if err := cl.CommitRecords(ctx, recs...); err == nil {
			say("ACK")
		} else {
			say("NACK")
		}
		time.Sleep(spec.Pace) // the member is slow on purpose: pacing, not a wait
	}
	return 0
}

// memberProc is the parent's view of a member process.
type memberProc struct {
	cmd *exec.Cmd

	mu        sync.Mutex // guards the fields below
	owned     map[int32]bool
	processed map[int32]map[int64]bool
	acked     map[int32]int64 // last acknowledged commit per partition
	pending   map[int32]int64 // commit sent, not (yet) acknowledged
	exited    chan struct{}
}

func startMemberProc(t *testing.T, spec memberSpec) *memberProc {
	t.Helper()
	raw, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), memberProcessEnv+"="+string(raw))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	mp := &memberProc{cmd: cmd, owned: map[int32]bool{}, processed: map[int32]map[int64]bool{},
		acked: map[int32]int64{}, pending: map[int32]int64{}, exited: make(chan struct{})}
	go func() {
		defer close(mp.exited)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			mp.line(sc.Text())
		}
		cmd.Wait()
	}()
	t.Cleanup(mp.kill)
	return mp
}

// line takes one event line of the member.
func (mp *memberProc) line(s string) {
	f := strings.Fields(s)
	num := func(i int) int64 {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		return n
	}
	mp.mu.Lock()
	defer mp.mu.Unlock()
	switch {
	case len(f) == 2 && f[0] == "ASSIGNED":
		mp.owned[int32(num(1))] = true
	case len(f) == 2 && f[0] == "REVOKED":
		delete(mp.owned, int32(num(1)))
	case len(f) == 3 && f[0] == "PROCESSED":
		p := int32(num(1))
		if mp.processed[p] == nil {
			mp.processed[p] = map[int64]bool{}
		}
		mp.processed[p][num(2)] = true
	case len(f) == 3 && f[0] == "COMMIT":
		mp.pending[int32(num(1))] = num(2)
	case len(f) == 1 && f[0] == "ACK":
		for p, o := range mp.pending {
			mp.acked[p] = o
		}
		clear(mp.pending)
	case len(f) == 1 && f[0] == "NACK": // refused (a rebalance revoked the partitions): not stored
		clear(mp.pending)
	}
}

// kill sends SIGKILL and waits until the process is gone.
func (mp *memberProc) kill() {
	mp.cmd.Process.Signal(syscall.SIGKILL)
	<-mp.exited
}

// ownedCommitted says whether the member owns n partitions and has an
// acknowledged commit on at least k of them.
func (mp *memberProc) ownedCommitted(n, k int) bool {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	c := 0
	for p := range mp.owned {
		if mp.acked[p] > 0 {
			c++
		}
	}
	return len(mp.owned) == n && c >= k
}

// consumption records what in-process members consumed, per partition,
// and the first offset each partition was consumed from after the kill.
type consumption struct {
	mu      sync.Mutex // guards the fields below
	seen    map[int32]map[int64]bool
	killed  bool
	firstAt map[int32]int64
}

func (c *consumption) add(r *kgo.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[r.Partition] == nil {
		c.seen[r.Partition] = map[int64]bool{}
	}
	c.seen[r.Partition][r.Offset] = true
	if _, ok := c.firstAt[r.Partition]; c.killed && !ok {
		c.firstAt[r.Partition] = r.Offset
	}
}

// startCommittingMember starts an in-process member that records what it
// consumes into cons and commits after every poll.
func startCommittingMember(t *testing.T, addr, group, topic, name string, l *ledger, cons *consumption) *kgo.Client {
	t.Helper()
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID(name),
		kgo.SessionTimeout(6 * time.Second), kgo.HeartbeatInterval(100 * time.Millisecond), kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(100 * time.Millisecond)}
	for _, o := range l.callbacks(name) {
		opts = append(opts, o)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			fs := cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
			fs.EachRecord(cons.add)
			cl.CommitUncommittedOffsets(context.Background())
		}
	}()
	t.Cleanup(func() {
		cl.Close()
		<-done
	})
	return cl
}

func TestGroupMemberKilled(t *testing.T) {
	t.Parallel()
	tb := startTestBroker(t, "")
	setBrokerConfigs(t, tb.addr, quickGroups...)
	const topic, group, partitions, perPartition = "killed", "survivors", 12, 300
	createTopics(t, tb.addr, topic, partitions)
	produceEven(t, tb.addr, topic, partitions, perPartition)

	const session = 2 * time.Second
	doomed := startMemberProc(t, memberSpec{Addr: tb.addr, Group: group, Topic: topic, Session: session, Pace: 50 * time.Millisecond})
	waitFor(t, "the member process to own every partition", func() bool { return doomed.ownedCommitted(partitions, 0) })
	l := newLedger(topic)
	cons := &consumption{seen: map[int32]map[int64]bool{}, firstAt: map[int32]int64{}}
	startCommittingMember(t, tb.addr, group, topic, "b", l, cons)
	startCommittingMember(t, tb.addr, group, topic, "c", l, cons)
	waitFor(t, "b and c to own 8 partitions and the member process to commit on all 4 of its partitions",
		func() bool { return len(l.owners()["b"])+len(l.owners()["c"]) == 8 && doomed.ownedCommitted(4, 4) })

	cons.mu.Lock()
	cons.killed = true
	cons.mu.Unlock()
	doomed.kill()
	killedAt := time.Now()
	waitFor(t, "b and c to own every partition", func() bool { return l.settled(partitions, "b", "c") })
	t.Logf("the others owned the killed member's partitions %v after its death (session timeout %v)",
		time.Since(killedAt).Round(time.Millisecond), session)
	waitFor(t, "every record to be consumed", func() bool { return consumedAll(cons, doomed, partitions, perPartition) })
	l.check(t)
	checkTakeover(t, cons, doomed, perPartition)
}

// consumedAll says whether the member process and the others together
// consumed every record.
func consumedAll(cons *consumption, mp *memberProc, partitions int32, perPartition int64) bool {
	cons.mu.Lock()
	defer cons.mu.Unlock()
	mp.mu.Lock()
	defer mp.mu.Unlock()
	for p := range partitions {
		for o := range perPartition {
			if !cons.seen[p][o] && !mp.processed[p][o] {
				return false
			}
		}
	}
	return true
}

// checkTakeover checks, for each partition the killed member owned, that
// the others started from its last commit (acknowledged, or sent and
// possibly stored before the kill), and that the member processed every
// record below it: nothing lost, nothing skipped.
func checkTakeover(t *testing.T, cons *consumption, mp *memberProc, end int64) {
	t.Helper()
	cons.mu.Lock()
	defer cons.mu.Unlock()
	mp.mu.Lock()
	defer mp.mu.Unlock()
	if len(mp.owned) == 0 {
		t.Fatal("the killed member owned nothing")
	}
	for p := range mp.owned {
		acked, pending := mp.acked[p], mp.pending[p]
		start, ok := cons.firstAt[p]
		if !ok { // the killed member had committed the whole partition
			start = end
			if acked != end && pending != end {
				t.Fatalf("partition %d: never consumed after the kill, last commit %d of %d", p, acked, end)
			}
		}
		if start != acked && (pending == 0 || start != pending) {
			t.Fatalf("partition %d: resumed at %d; the killed member's last commit was %d (in flight: %d)", p, start, acked, pending)
		}
		for o := int64(0); o < start; o++ {
			if !mp.processed[p][o] {
				t.Fatalf("partition %d: offset %d below the resume point %d was never processed: lost", p, o, start)
			}
		}
		t.Logf("partition %d: resumed at the killed member's last commit %d", p, start)
	}
}

// produceEven produces n records to every partition of topic.
func produceEven(t *testing.T, addr, topic string, partitions int32, n int) {
	t.Helper()
	ctx, _ := ctxFor(t, 60*time.Second)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for p := range partitions {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("%d-%d", p, i))})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}
