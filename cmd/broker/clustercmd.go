package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"
	"time"

	"github.com/sediment-io/sediment/cluster"
	"github.com/sediment-io/sediment/metadata/etcdkv"
)

// The cluster commands read and write the cluster's etcd directly, as an
// operator's tool that works whichever brokers are up (like Kafka's
// kafka-metadata-shell): they take the brokers' --metadata URL.

const clusterUsage = `Usage:
  broker cluster describe --metadata etcd://HOST:PORT/PREFIX [--output table|json]
      the live brokers, the controller, every partition's placement, owner,
      leader epoch and committed offset, the coordinator shards and the
      table topics' converters
`

const partitionsUsage = `Usage:
  broker partitions takeover --metadata etcd://HOST:PORT/PREFIX --from NODE --accept-loss
      move the partitions of a gone broker that ran --durability wal (they
      wait for it to come back, to upload its WAL) to the live brokers by
      force: what it acknowledged after each partition's committed offset,
      and never uploaded, is lost
`

func runCluster(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "describe" {
		fmt.Fprint(stderr, clusterUsage)
		return 2
	}
	fs := flag.NewFlagSet("broker cluster describe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("metadata", os.Getenv("SEDIMENT_METADATA"), "the brokers' --metadata etcd URL")
	output := fs.String("output", "table", "table or json")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *output != "table" && *output != "json" {
		fmt.Fprintf(stderr, "broker cluster describe: --output %q: want table or json\n", *output)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := openClusterKV(ctx, *url)
	if err != nil {
		fmt.Fprintf(stderr, "broker cluster describe: %v\n", err)
		return 2
	}
	defer kv.Close()
	d, err := cluster.Describe(ctx, kv)
	if err != nil {
		fmt.Fprintf(stderr, "broker cluster describe: %v\n", err)
		return 1
	}
	if *output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(d)
		return 0
	}
	printDescription(stdout, d)
	return 0
}

func printDescription(w io.Writer, d cluster.Description) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "revision\t%d\n", d.Revision)
	fmt.Fprintf(tw, "controller\t%d\n\n", d.Controller)
	fmt.Fprintln(tw, "BROKER\tADDRESS\tRACK\tDURABILITY\tSTARTED")
	for _, b := range d.Brokers {
		fmt.Fprintf(tw, "%d\t%s:%d\t%s\t%s\t%s\n", b.NodeID, b.Host, b.Port, b.Rack, b.Durability,
			time.UnixMilli(b.StartedMs).UTC().Format(time.RFC3339))
	}
	fmt.Fprintln(tw, "\nTOPIC\tPARTITION\tPLACED\tOWNER\tEPOCH\tCOMMITTED")
	for _, p := range d.Partitions {
		note := ""
		if p.PlacedOnGoneNode {
			note = "\t(waits for its gone broker)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d%s\n", p.Topic, p.Partition, p.Placed, p.Owner, p.Epoch, p.CommittedOffset, note)
	}
	fmt.Fprintln(tw, "\nSHARD\tPLACED\tOWNER")
	for _, s := range d.Shards {
		fmt.Fprintf(tw, "%d\t%d\t%d\n", s.Shard, s.Placed, s.Owner)
	}
	if len(d.Tables) > 0 {
		fmt.Fprintln(tw, "\nTABLE TOPIC\tPLACED\tCONVERTER")
		for _, t := range d.Tables {
			fmt.Fprintf(tw, "%s\t%d\t%d\n", t.Topic, t.Placed, t.Owner)
		}
	}
	tw.Flush()
}

func runPartitions(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "takeover" {
		fmt.Fprint(stderr, partitionsUsage)
		return 2
	}
	fs := flag.NewFlagSet("broker partitions takeover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("metadata", os.Getenv("SEDIMENT_METADATA"), "the brokers' --metadata etcd URL")
	from := fs.Int("from", -1, "node id of the gone broker")
	accept := fs.Bool("accept-loss", false, "accept that what it acknowledged and never uploaded is lost (required)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *from < 0 || !*accept {
		fmt.Fprint(stderr, "broker partitions takeover: --from NODE and --accept-loss are required\n\n"+partitionsUsage)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := openClusterKV(ctx, *url)
	if err != nil {
		fmt.Fprintf(stderr, "broker partitions takeover: %v\n", err)
		return 2
	}
	defer kv.Close()
	r, err := cluster.Takeover(ctx, kv, int32(*from))
	printLossWindow(stdout, r, err)
	if err != nil {
		fmt.Fprintf(stderr, "broker partitions takeover: %v\n", err)
		return 1
	}
	return 0
}

// printLossWindow reports what the takeover lost: for a wal-mode broker,
// each partition placed on it from its committed offset on (what it
// acknowledged past that was in its WAL only, and it drops it should it
// come back); an object-mode broker acknowledged nothing it had not
// committed. A takeover that failed part-way names the partitions it
// fenced, which are lost all the same.
func printLossWindow(w io.Writer, r cluster.TakeoverReport, err error) {
	m := r.Member
	for _, p := range r.Partitions {
		if p.OwnedBy >= 0 {
			fmt.Fprintf(w, "%s/%d: already owned by broker %d: records broker %d acknowledged and never committed are lost\n",
				p.Topic, p.Partition, p.OwnedBy, m.NodeID)
			continue
		}
		fmt.Fprintf(w, "%s/%d: records broker %d acknowledged at offset %d or later are lost\n",
			p.Topic, p.Partition, m.NodeID, p.LostFrom)
	}
	switch {
	case err != nil:
		if len(r.Partitions) > 0 {
			fmt.Fprintf(w, "the takeover of broker %d stopped after fencing the %d partitions above\n", m.NodeID, len(r.Partitions))
		}
	case m.TakenOver:
		fmt.Fprintf(w, "broker %d was taken over already\n", m.NodeID)
	case m.Durability != "wal":
		fmt.Fprintf(w, "broker %d (%s:%d) ran --durability %s: it acknowledged only what it had committed, nothing is lost\n",
			m.NodeID, m.Host, m.Port, m.Durability)
	default:
		fmt.Fprintf(w, "broker %d (%s:%d, durability %s) taken over: %d partitions move to the live brokers\n",
			m.NodeID, m.Host, m.Port, m.Durability, len(r.Partitions))
	}
}

// openClusterKV connects to the cluster's etcd.
func openClusterKV(ctx context.Context, url string) (*etcdkv.KV, error) {
	if url == "" {
		return nil, errors.New("--metadata etcd://HOST:PORT/PREFIX is required (the brokers' --metadata)")
	}
	cfg, err := etcdkv.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("--metadata: %w", err)
	}
	cfg.Username, cfg.Password = os.Getenv("ETCD_USERNAME"), os.Getenv("ETCD_PASSWORD")
	kv, err := etcdkv.Open(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, fmt.Errorf("--metadata: %w", err)
	}
	return kv, nil
}
