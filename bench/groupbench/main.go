// Command groupbench measures the consumer group coordinator, all on
// loopback against a broker it builds and starts:
//
//   - failover: time from a member's death (its connections cut: no
//     LeaveGroup, no more heartbeats) to the other members owning all its
//     partitions, for several session timeouts;
//   - rebalance: time for 50 members to settle, from a cold start and when
//     a 51st member joins, eager and cooperative-sticky;
//   - commits: offset commits per second sustained by concurrent
//     committers, and the metadata transactions they cost.
//
// Run from the repository root: go run ./bench/groupbench [-duration 10s].
// Timings are printed, never asserted.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sediment-io/sediment/bench/internal/probe"
)

type report struct {
	Failover  []failoverFigure  `json:"failover"`
	Rebalance []rebalanceFigure `json:"rebalance"`
	Commits   []commitFigure    `json:"commits"`
}

func main() {
	d := flag.Duration("duration", 10*time.Second, "length of each commit-rate run")
	rounds := flag.Int("rounds", 5, "kills per session timeout in the failover part")
	members := flag.Int("members", 50, "members of the rebalance part")
	only := flag.String("only", "", "run only this part: failover, rebalance or commits")
	out := flag.String("out", "", "also write the JSON report here")
	flag.Parse()
	work, err := os.MkdirTemp("", "groupbench-")
	check(err)
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "broker")
	build := exec.Command("go", "build", "-o", bin, "./cmd/broker")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	check(build.Run())
	b, err := startBroker(bin, filepath.Join(work, "data"))
	check(err)
	running = b
	defer b.stop()
	b.setConfigs("group.initial.rebalance.delay.ms", "0", "group.min.session.timeout.ms", "500")
	var r report
	run := func(part string) bool { return *only == "" || *only == part }
	if run("failover") {
		r.Failover = runFailover(b, *rounds)
	}
	if run("rebalance") {
		r.Rebalance = runRebalance(b, *members)
	}
	if run("commits") {
		r.Commits = runCommits(b, *d)
	}
	printTables(r)
	js, _ := json.MarshalIndent(r, "", "  ")
	fmt.Println(string(js))
	if *out != "" {
		check(os.WriteFile(*out, js, 0o644))
	}
}

// broker is the broker under test, a subprocess.
type broker struct {
	addr, http string
	proc       *exec.Cmd
}

func startBroker(bin, dir string) (*broker, error) {
	b := &broker{addr: probe.FreeAddr(), http: probe.FreeAddr()}
	b.proc = exec.Command(bin, "serve", "--listen", b.addr, "--http-listen", b.http, "--data-dir", dir, "--log-level", "warn")
	b.proc.Stderr = os.Stderr
	if err := b.proc.Start(); err != nil {
		return nil, err
	}
	for range 3000 {
		if resp, err := http.Get("http://" + b.http + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return b, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.stop()
	return nil, fmt.Errorf("broker not ready")
}

func (b *broker) stop() {
	b.proc.Process.Signal(syscall.SIGTERM)
	b.proc.Wait()
}

// client returns an admin-capable client of the broker.
func (b *broker) client(opts ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.addr)}, opts...)...)
	check(err)
	return cl
}

// setConfigs sets dynamic broker configs (name, value pairs).
func (b *broker) setConfigs(kv ...string) {
	cl := b.client()
	defer cl.Close()
	var alters []kadm.AlterConfig
	for i := 0; i+1 < len(kv); i += 2 {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: kv[i], Value: kadm.StringPtr(kv[i+1])})
	}
	_, err := kadm.NewClient(cl).AlterBrokerConfigs(context.Background(), alters)
	check(err)
}

// createTopic creates a topic with partitions.
func (b *broker) createTopic(name string, partitions int32) {
	cl := b.client()
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(context.Background(), partitions, 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	check(err)
}

// running is the broker to stop when the run fails.
var running *broker

// metric returns the sum of a metric's samples.
func (b *broker) metric(name string) float64 { return probe.Scrape(b.http).Sum(name) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "groupbench:", err)
		if running != nil {
			running.proc.Process.Signal(syscall.SIGKILL)
		}
		os.Exit(1)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
