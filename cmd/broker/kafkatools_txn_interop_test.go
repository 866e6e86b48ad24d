//go:build interop

package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestInteropKafkaToolsTransactions: kafka-transactions list, describe,
// describe-producers, find-hanging and abort, compared fact by fact with
// `broker transactions` and `broker producers`. "tx-done" committed three
// records to tools-txn/0; "tx-open" wrote two to tools-txn/1 and leaves
// its transaction open: it is not hanging (its coordinator still knows
// it), and the tool's abort from its start offset ends it in the
// partition.
func TestInteropKafkaToolsTransactions(t *testing.T) {
	addr := toolsCluster(t)
	txns := func(args ...string) []map[string]string {
		return parseTxnToolTable(t, mustKafkaTool(t, addr, kafkaTransactions, args...))
	}
	mustKafkaTool(t, addr, kafkaTopics, "--create", "--topic", "tools-txn", "--partitions", "2")
	done := startTxnProducer(t, addr, "tx-done")
	done.produce(t, "tools-txn", 0, 3)
	done.end(t, kgo.TryCommit)
	open := startTxnProducer(t, addr, "tx-open")
	open.produce(t, "tools-txn", 1, 2)

	var cliList []struct {
		TransactionalID string `json:"transactional_id"`
		ProducerID      int64  `json:"producer_id"`
		State           string `json:"state"`
	}
	brokerJSON(t, addr, &cliList, "transactions", "list")
	var got, want []string
	for _, r := range txns("list") {
		got = append(got, r["TransactionalId"]+" "+r["ProducerId"]+" "+r["TransactionState"])
	}
	for _, c := range cliList {
		want = append(want, c.TransactionalID+" "+strconv.FormatInt(c.ProducerID, 10)+" "+c.State)
	}
	if strings.Join(slices.Sorted(slices.Values(got)), "|") != strings.Join(want, "|") || len(want) != 2 ||
		want[0] != "tx-done "+done.pid+" CompleteCommit" || want[1] != "tx-open "+open.pid+" Ongoing" {
		t.Errorf("kafka-transactions list %v, broker transactions list %v; want tx-done CompleteCommit and tx-open Ongoing", got, want)
	}

	desc := txns("describe", "--transactional-id", "tx-open")
	if len(desc) != 1 || desc[0]["ProducerId"] != open.pid || desc[0]["ProducerEpoch"] != "0" ||
		desc[0]["TransactionState"] != "Ongoing" || desc[0]["TopicPartitions"] != "tools-txn-1" {
		t.Errorf("kafka-transactions describe tx-open: %v; want producer %s epoch 0, Ongoing, tools-txn-1", desc, open.pid)
	}

	producers := func(partition string) []map[string]string {
		return txns("describe-producers", "--topic", "tools-txn", "--partition", partition)
	}
	checkToolProducers(t, addr, producers("0"), "0", done.pid, "None")
	checkToolProducers(t, addr, producers("1"), "1", open.pid, "0")

	node := strconv.Itoa(int(describeTopicCLI(t, addr, "tools-txn").Partitions[1].Leader))
	for _, scope := range [][]string{{"--topic", "tools-txn"}, {"--broker-id", node}} {
		args := append([]string{"find-hanging", "--max-transaction-timeout", "1"}, scope...)
		if hanging := txns(args...); len(hanging) != 0 {
			t.Errorf("kafka-transactions %s: %v; want none (tx-open is live)", strings.Join(args, " "), hanging)
		}
	}

	r := kafkaTool(t, addr, kafkaTransactions, "abort", "--topic", "tools-txn", "--partition", "1", "--start-offset", "0")
	if r.code != 0 {
		t.Fatalf("kafka-transactions abort: exit %d\n%s", r.code, r.output())
	}
	checkToolProducers(t, addr, producers("1"), "1", open.pid, "None")
	if _, end := logOffsetsCLI(t, addr, "tools-txn"); end["tools-txn/1"] != 3 {
		t.Errorf("tools-txn/1 ends at %d after the abort, want 3 (2 records and the marker)", end["tools-txn/1"])
	}
	r = kafkaTool(t, addr, kafkaTransactions, "abort", "--topic", "tools-txn", "--partition", "1", "--start-offset", "1")
	if r.code != 1 || !strings.Contains(r.output(), "Could not find any open transactions starting at offset 1") {
		t.Errorf("kafka-transactions abort of no transaction: exit %d, want 1 and 'Could not find any open transactions':\n%s", r.code, r.output())
	}
}

// checkToolProducers compares kafka-transactions describe-producers of one
// partition with `broker producers describe`: one producer, pid, with its
// open transaction's start offset ("None" when none is open).
func checkToolProducers(t *testing.T, addr string, rows []map[string]string, partition, pid, start string) {
	t.Helper()
	var cli []struct {
		ProducerID            int64  `json:"producer_id"`
		ProducerEpoch         int16  `json:"producer_epoch"`
		CoordinatorEpoch      int32  `json:"coordinator_epoch"`
		LastSequence          int32  `json:"last_sequence"`
		CurrentTxnStartOffset *int64 `json:"current_txn_start_offset"`
	}
	brokerJSON(t, addr, &cli, "producers", "describe", "--topic", "tools-txn", "--partition", partition)
	if len(rows) != 1 || len(cli) != 1 {
		t.Fatalf("tools-txn/%s: kafka-transactions describe-producers %v, broker producers describe %+v; want one producer", partition, rows, cli)
	}
	r, c := rows[0], cli[0]
	cliStart := "None"
	if c.CurrentTxnStartOffset != nil {
		cliStart = strconv.FormatInt(*c.CurrentTxnStartOffset, 10)
	}
	got := []string{r["ProducerId"], r["ProducerEpoch"], r["LatestCoordinatorEpoch"], r["LastSequence"], r["CurrentTransactionStartOffset"]}
	fromCLI := []string{strconv.FormatInt(c.ProducerID, 10), strconv.Itoa(int(c.ProducerEpoch)), strconv.Itoa(int(c.CoordinatorEpoch)),
		strconv.Itoa(int(c.LastSequence)), cliStart}
	if strings.Join(got, " ") != strings.Join(fromCLI, " ") || got[0] != pid || got[4] != start {
		t.Errorf("tools-txn/%s: kafka-transactions describe-producers %v, broker producers describe %v; want producer %s, transaction start %s",
			partition, got, fromCLI, pid, start)
	}
}

// parseTxnToolTable reads a table of kafka-transactions: a header line of
// column names (TransactionalId, ProducerId, ...), then one row per line,
// cells split by whitespace.
func parseTxnToolTable(t *testing.T, s string) []map[string]string {
	t.Helper()
	var header []string
	var rows []map[string]string
	for _, line := range strings.Split(s, "\n") {
		cells := strings.Fields(line)
		switch {
		case len(cells) == 0:
		case header == nil:
			header = cells
		case len(cells) != len(header):
			t.Fatalf("kafka-transactions: row %q does not match header %v", line, header)
		default:
			row := map[string]string{}
			for i, h := range header {
				row[h] = cells[i]
			}
			rows = append(rows, row)
		}
	}
	return rows
}
