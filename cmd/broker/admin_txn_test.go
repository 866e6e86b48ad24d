package main

// Golden-output tests of `broker transactions` and `broker producers`
// against a real Sediment broker; the interop suite runs the same against
// the reference Apache Kafka with the same golden files
// (TestInteropAdminTransactionsApacheKafka). Not against kfake, unlike
// admin_golden_test.go: kfake reports a committed transaction's id as
// Empty, and DescribeProducers only of producers with an open transaction.
// Two franz-go transactional producers make the state: "tx-done" committed
// three records to ledger/0, "tx-open" wrote two to ledger/1 and leaves its
// transaction open, which the CLI then aborts as a hanging one from its
// start offset.

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

func TestAdminTransactions(t *testing.T) {
	tb := startTestBroker(t, "")
	adminTxnSuite(t, &adminCluster{name: "sediment", addr: tb.addr, tokens: map[string]string{tb.addr: "<broker>"}})
}

func adminTxnSuite(t *testing.T, c *adminCluster) {
	c.must(t, "topics", "create", "--topic", "ledger", "--partitions", "2")
	n := txnNormaliser{pids: map[string]string{}}
	done := startTxnProducer(t, c.addr, "tx-done")
	n.pids[done.pid] = "<pid:tx-done>"
	done.produce(t, "ledger", 0, 3)
	done.end(t, kgo.TryCommit)
	open := startTxnProducer(t, c.addr, "tx-open")
	n.pids[open.pid] = "<pid:tx-open>"
	open.produce(t, "ledger", 1, 2)

	for _, out := range []string{"table", "json"} {
		n.golden(t, c, "transactions-list."+out, "transactions", "list", "--output", out)
		n.golden(t, c, "transactions-describe."+out, "transactions", "describe", "tx-done", "--output", out, "tx-open")
		n.golden(t, c, "producers-describe."+out, "producers", "describe", "--topic", "ledger", "--output", out)
	}
	n.golden(t, c, "transactions-list-state", "transactions", "list", "--state", "ongoing")
	n.golden(t, c, "transactions-list-duration", "transactions", "list", "--min-duration", "1ms", "--output", "csv")
	n.golden(t, c, "transactions-describe-missing", "transactions", "describe", "--transactional-id", "nobody")
	n.golden(t, c, "transactions-abort-missing", "transactions", "abort", "--topic", "ledger", "--partition", "1", "--start-offset", "1")
	n.golden(t, c, "transactions-abort", "transactions", "abort", "--topic", "ledger", "--partition", "1", "--start-offset", "0")
	n.golden(t, c, "producers-describe-aborted", "producers", "describe", "--topic", "ledger", "--partition", "1")

	// The abort marker ended the transaction in the partition: a
	// read_committed consumer reads past it, and sees none of its records.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	offsets, err := kadmFor(t, c.addr).ListEndOffsets(ctx, "ledger")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offsets.Lookup("ledger", 1); o.Offset != 3 {
		t.Errorf("ledger/1 end offset %d after the abort, want 3 (2 records and the marker)", o.Offset)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addr), kgo.ConsumeTopics("ledger"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for got := 0; got < 3; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read_committed: %d of tx-done's 3 records", got)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Partition != 0 {
				t.Errorf("read_committed read aborted record %d/%d", r.Partition, r.Offset)
			}
			got++
		})
	}
}

// adminTxnProducer is a franz-go transactional producer with its producer id.
type adminTxnProducer struct {
	cl  *kgo.Client
	pid string
}

func startTxnProducer(t *testing.T, addr, txnID string) *adminTxnProducer {
	t.Helper()
	// Kafka 3.9's versions: transactions as Sediment serves them (KIP-890
	// part 1; part 2's EndTxn v5 bumps the epoch at every commit).
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID(txnID), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MaxVersions(kversion.V3_9_0()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pid, _, err := cl.ProducerID(ctx)
	if err != nil {
		t.Fatalf("%s: producer id: %v", txnID, err)
	}
	return &adminTxnProducer{cl: cl, pid: strconv.FormatInt(pid, 10)}
}

func (p *adminTxnProducer) produce(t *testing.T, topic string, partition int32, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range n {
		r := &kgo.Record{Topic: topic, Partition: partition, Value: []byte("txn-" + strconv.Itoa(i))}
		if err := p.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("transactional produce to %s/%d: %v", topic, partition, err)
		}
	}
}

func (p *adminTxnProducer) end(t *testing.T, commit kgo.TransactionEndTry) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.cl.EndTransaction(ctx, commit); err != nil {
		t.Fatalf("end transaction: %v", err)
	}
}

// txnNormaliser replaces, before a golden comparison, what each broker
// draws its own way: producer ids (by column, as ids are small numbers
// that also appear as offsets), node ids and times in milliseconds.
type txnNormaliser struct{ pids map[string]string }

var (
	txnPIDColumns  = map[string]bool{"PRODUCER-ID": true, "producer_id": true}
	txnTimeColumns = map[string]bool{"START-TIME-MS": true, "DURATION-MS": true, "LAST-TIMESTAMP": true,
		"start_time_ms": true, "duration_ms": true, "last_timestamp": true}
	txnNodeColumns = map[string]bool{"COORDINATOR": true, "coordinator": true}
	txnJSONField   = regexp.MustCompile(`"(\w+)": (-?\d+)`)
)

func (n txnNormaliser) golden(t *testing.T, c *adminCluster, name string, args ...string) {
	t.Helper()
	r := c.cli(t, args...)
	if strings.Contains(strings.Join(args, " "), "--output json") {
		r.stdout = txnJSONField.ReplaceAllStringFunc(r.stdout, func(m string) string {
			f := txnJSONField.FindStringSubmatch(m)
			return `"` + f[1] + `": ` + n.cell(f[1], f[2], `"`)
		})
	} else {
		r.stdout = n.columns(r.stdout)
	}
	r.stderr = n.columns(r.stderr)
	c.golden(t, name, r)
}

// cell is the normalised value of a cell in column col.
func (n txnNormaliser) cell(col, v, quote string) string {
	switch {
	case txnPIDColumns[col] && n.pids[v] != "":
		return quote + n.pids[v] + quote
	case txnTimeColumns[col] && v != "-":
		return quote + "<ms>" + quote
	case txnNodeColumns[col]:
		return quote + "<node>" + quote
	}
	return v
}

// columns normalises the cells of a table (header first, cells split by
// two spaces or a comma for CSV) and the producer ids in free text.
func (n txnNormaliser) columns(s string) string {
	lines := strings.Split(s, "\n")
	var header []string
	sep := "  "
	for i, line := range lines {
		if header == nil {
			if strings.Contains(line, ",") && !strings.Contains(line, " ") {
				sep = ","
			}
			header = splitCells(line, sep)
			continue
		}
		cells := splitCells(line, sep)
		if len(cells) != len(header) {
			continue
		}
		for j := range cells {
			cells[j] = n.cell(header[j], cells[j], "")
		}
		lines[i] = strings.Join(cells, strings.Repeat(sep, 1))
	}
	return strings.Join(lines, "\n")
}

func splitCells(line, sep string) []string {
	if sep == "," {
		return strings.Split(line, ",")
	}
	return cellGap.Split(strings.TrimSpace(line), -1)
}
