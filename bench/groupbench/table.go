package main

import (
	"fmt"
	"os"
	"text/tabwriter"
)

// printTables prints the report for people, to stderr.
func printTables(r report) {
	w := tabwriter.NewWriter(os.Stderr, 0, 4, 2, ' ', 0)
	if len(r.Failover) > 0 {
		fmt.Fprintln(w, "session timeout\ttakeover (median)\tover the session timeout\tall rounds (ms)")
		for _, f := range r.Failover {
			fmt.Fprintf(w, "%.0f ms\t%.0f ms\t%+.0f ms\t%.0f\n", f.SessionTimeoutMs, f.MedianMs, f.MedianOverMs, f.TakeoverMs)
		}
		fmt.Fprintln(w)
	}
	if len(r.Rebalance) > 0 {
		fmt.Fprintln(w, "balancer\tmembers\tpartitions\tcold start\tone more member\trebalances")
		for _, f := range r.Rebalance {
			fmt.Fprintf(w, "%s\t%d\t%d\t%.0f ms\t%.0f ms\t%.0f\n", f.Balancer, f.Members, f.Partitions, f.ColdStartMs, f.JoinOneMs, f.Rebalances)
		}
		fmt.Fprintln(w)
	}
	if len(r.Commits) > 0 {
		fmt.Fprintln(w, "committers\tpartitions/commit\tcommits/s\toffsets/s\tmetadata txns/s\tp50\tp99")
		for _, f := range r.Commits {
			fmt.Fprintf(w, "%d\t%d\t%.0f\t%.0f\t%.0f\t%.2f ms\t%.2f ms\n", f.Committers, f.Partitions, f.CommitsPerSec,
				f.OffsetsPerSec, f.TxnsPerSec, f.P50Ms, f.P99Ms)
		}
	}
	w.Flush()
}
