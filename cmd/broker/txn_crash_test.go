package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/internal/testwait"
)

// txnPhases are the coordinator phases the crash seam can kill a broker
// in (SEDIMENT_TEST_TXN_CRASH).
var txnPhases = []string{"after-add-partitions", "after-prepare-commit", "after-prepare-abort", "between-markers", "after-complete"}

// TestTxnCrashInEachCoordinatorPhase (issue 19, test 4): a
// GroupTransactSession member reads topic in and writes each record to
// out, committing the offsets in the transaction and aborting every
// second one, while the broker kills itself with SIGKILL the first time
// its transaction coordinator reaches the phase under test. The broker
// restarts on the same data; the member goes on (a new session with the
// same transactional id when its old one failed). In the end every key of
// in is in out exactly once for read_committed, the group's offsets are
// at the end of in, and no transaction is left open or half-completed: the
// crashed one was completed all-or-nothing, in both --durability modes.
func TestTxnCrashInEachCoordinatorPhase(t *testing.T) {
	for _, durability := range []string{"wal", "object"} {
		t.Run(durability, func(t *testing.T) {
			for _, phase := range txnPhases {
				t.Run(phase, func(t *testing.T) { runTxnCrash(t, durability, phase) })
			}
		})
	}
}

func runTxnCrash(t *testing.T, durability, phase string) {
	dir := t.TempDir()
	flags := []string{"--durability", durability, "--upload-interval", "50ms"}
	p := startProc(t, dir, "", []string{txnCrashEnv + "=" + phase}, flags...)
	seeds := []string{p.addr}
	const group = "crash"
	createTopics(t, p.addr, "in", 2)
	createTopics(t, p.addr, "out", 3)
	keys := txnKeys(300)
	produceKeys(t, seeds, "in", 2, keys)

	st := &etlStage{t: t, name: "crash", seeds: seeds, group: group, in: "in", outs: []string{"out"},
		balancer: kgo.CooperativeStickyBalancer(), abortEvery: 2, timeout: 10 * time.Second, committed: newKeySet()}
	m := st.start("m", 0)
	waitKilled(t, p, 2*time.Minute)
	if logs := p.logs.String(); !strings.Contains(logs, txnCrashEnv) || !strings.Contains(logs, "phase="+phase) {
		t.Fatalf("the broker exited, but not through the %s seam in phase %s:\n%s", txnCrashEnv, phase, logs)
	}
	p = startProc(t, dir, p.addr, nil, flags...)
	waitGroupAtEnd(t, seeds, group, "in", 2*time.Minute)
	m.stop(t)

	checkNoOpenTxns(t, seeds)
	writeSentinels(t, seeds, "out", 3)
	checkKeysOnce(t, "out read_committed", readToSentinels(t, seeds, "out", 3, kgo.ReadCommitted()), keys)
	checkGroupAtEnd(t, seeds, group, "in")
}

// waitKilled waits until the broker process is gone.
func waitKilled(t *testing.T, p *brokerProc, d time.Duration) {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err
		t.Logf("broker exited: %v", err)
	case <-time.After(d):
		t.Fatalf("the broker still runs after %v: its crash seam never fired\n%s", d, p.logs.String())
	}
}

// waitGroupAtEnd waits until group committed the end offset of every
// partition of topic (written without transactions).
func waitGroupAtEnd(t *testing.T, seeds []string, group, topic string, d time.Duration) {
	t.Helper()
	adm := kadm.NewClient(newClusterClient(t, seeds))
	defer adm.Close()
	ctx, _ := ctxFor(t, d+time.Minute)
	ends := listEndOffsets(ctx, t, adm, topic)
	last := ""
	testwait.Until(t, d, func() bool {
		got, err := adm.FetchOffsets(ctx, group)
		if err == nil {
			err = got.Error()
		}
		if err != nil {
			last = err.Error()
			return false
		}
		done := true
		ends.Each(func(o kadm.ListedOffset) {
			c, ok := got.Lookup(topic, o.Partition)
			done = done && ok && c.At == o.Offset
		})
		last = fmt.Sprint(got.Offsets())
		return done
	}, "group %s never committed the ends of %s (last: %v)", group, topic, testwait.Later(func() string { return last }))
}

// checkNoOpenTxns fails while any transaction is open or half-completed
// (Ongoing, PrepareCommit, PrepareAbort), after giving those a coordinator
// is completing time to finish.
func checkNoOpenTxns(t *testing.T, seeds []string) {
	t.Helper()
	adm := kadm.NewClient(newClusterClient(t, seeds))
	defer adm.Close()
	ctx, _ := ctxFor(t, 2*time.Minute)
	last := ""
	testwait.Until(t, time.Minute, func() bool {
		l, err := adm.ListTransactions(ctx, nil, []string{"Ongoing", "PrepareCommit", "PrepareAbort"})
		if err != nil {
			last = err.Error()
			return false
		}
		last = fmt.Sprint(l.TransactionalIDs())
		return len(l) == 0
	}, "transactions still open: %v", testwait.Later(func() string { return last }))
}

// TestTxnOngoingAbortedAfterRestart: a broker killed with SIGKILL while a
// transaction is Ongoing, whose producer is gone, loads it Ongoing on
// restart and aborts it once its timeout passed, in both --durability
// modes: the last stable offset reaches the end and read_committed sees
// none of it.
func TestTxnOngoingAbortedAfterRestart(t *testing.T) {
	for _, durability := range []string{"wal", "object"} {
		t.Run(durability, func(t *testing.T) {
			dir := t.TempDir()
			flags := []string{"--durability", durability}
			p := startProc(t, dir, "", nil, flags...)
			seeds := []string{p.addr}
			const topic, parts = "left", 3
			createTopics(t, p.addr, topic, parts)
			ctx, _ := ctxFor(t, 2*time.Minute)
			prod := txnProducer(t, seeds, "left-open", kgo.TransactionTimeout(3*time.Second))
			must(t, "begin", prod.BeginTransaction())
			produceEach(t, ctx, prod, topic, parts, "open")
			prod.Close()
			p.kill()
			p = startProc(t, dir, p.addr, nil, flags...)
			waitStable(t, seeds, topic, time.Minute)
			writeSentinels(t, seeds, topic, parts)
			checkValues(t, "read_committed", readToSentinels(t, seeds, topic, parts, kgo.ReadCommitted()))
			if got := readToSentinels(t, seeds, topic, parts, kgo.ReadUncommitted()); len(got) != parts {
				t.Fatalf("read_uncommitted: %v, want the aborted transaction's %d records", values(got), parts)
			}
		})
	}
}
