package bench

import (
	"fmt"
	"strings"

	"github.com/dustin/go-humanize"
)

// writeCluster reports every cluster target's load on etcd, per broker and
// in total, its etcd database and its failover.
func writeCluster(b *strings.Builder, res *Results) {
	for _, t := range res.Targets {
		c := t.Cluster
		if c == nil {
			continue
		}
		fmt.Fprintf(b, "\n%s: %d broker(s) on one etcd. Metadata transactions from each broker's sediment_metadata_requests_total{op=\"txn\"}, per second of the rounds and per GB (10^9 value bytes) produced to the whole cluster or appended on that broker:\n\n",
			t.Target, len(c.Brokers))
		b.WriteString("| broker | rack | etcd txn/s | txns per GB produced | appended here | txns per GB appended here | partitions owned | objects | upload rounds | CPU s |\n|---|---|---|---|---|---|---|---|---|---|\n")
		for _, k := range c.Brokers {
			name := fmt.Sprintf("node %d", k.Node)
			if k.Killed {
				name += " (killed)"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %d | %.0f | %.0f | %.1f |\n", name, k.Rack, txnCell(c, k.EtcdTxnsPerSec),
				txnCell(c, k.EtcdTxnsPerGB), humanize.Bytes(uint64(k.AppendedBytes)), txnCell(c, k.EtcdTxnsPerOwnGB),
				k.Partitions, k.Objects, k.UploadRounds, k.CPUSeconds)
		}
		fmt.Fprintf(b, "| **total** | | %s | %s | | | | | | |\n", txnCell(c, c.EtcdTxnsPerSec), txnCell(c, c.EtcdTxnsPerGB))
		if c.NoTxnMetric {
			b.WriteString("\nThe brokers export no sediment_metadata_requests_total: their transaction counts are not known (—).\n")
		}
		writeEtcd(b, c)
		writeFailover(b, c.Failover)
	}
}

func txnCell(c *ClusterFigure, v float64) string {
	if c.NoTxnMetric {
		return "—"
	}
	return fmt.Sprintf("%.1f", v)
}

// writeEtcd is what etcd itself said: bytes received, transactions, size.
func writeEtcd(b *strings.Builder, c *ClusterFigure) {
	fmt.Fprintf(b, "\netcd received %s from its clients (**%s per GB produced**) and sent %s; it counted %.0f transactions. ",
		humanize.Bytes(uint64(c.EtcdReceivedBytes)), humanize.Bytes(uint64(c.EtcdReceivedPerGB)),
		humanize.Bytes(uint64(c.EtcdSentBytes)), c.EtcdServerTxns)
	fmt.Fprintf(b, "Its database at the end: **%s** (%s in use), as the brokers' own compaction left it. ",
		humanize.IBytes(uint64(c.EtcdDBSize)), humanize.IBytes(uint64(c.EtcdDBInUse)))
	if k := c.Compaction; k != nil {
		fmt.Fprintf(b, "After the bench compacted it to revision %d and defragmented it (%.1f s): **%s** (%s in use), %d keys, %.1f per partition of the round. ",
			k.Revision, k.Seconds, humanize.IBytes(uint64(k.DBSizeAfter)), humanize.IBytes(uint64(k.DBInUseAfter)), k.Keys, k.KeysPerPartition)
	}
	fmt.Fprintf(b, "The rounds lasted %.0f upload intervals of %s; the brokers' objects stand for %.0f upload rounds each (objects ÷ ⌈partitions owned ÷ %d⌉), **%.3f hours of uploads** at the default 250 ms.\n",
		c.UploadIntervals, humanize.FtoaWithDigits(c.UploadIntervalSeconds*1000, 1)+" ms", c.UploadRounds, objectPartitions, c.HourEquivalents)
}

func writeFailover(b *strings.Builder, f *FailoverFigure) {
	if f == nil {
		return
	}
	if f.Error != "" && f.Moved == 0 {
		fmt.Fprintf(b, "\nFailover: not measured: %s.\n", f.Error)
		return
	}
	fmt.Fprintf(b, "\nFailover: node %d, owner of %d partitions, SIGKILLed %.1f s into the round. From the kill to the first acknowledged produce (of a record sent after it) on each moved partition: **min %.2f s, median %.2f s, max %.2f s** (%d of %d partitions acknowledged within the round).\n",
		f.KilledNode, f.Moved, f.AfterSeconds, f.MinSeconds, f.MedianSeconds, f.MaxSeconds, f.Recovered, f.Moved)
	if f.Error != "" {
		fmt.Fprintf(b, "Failover error: %s.\n", f.Error)
	}
}
