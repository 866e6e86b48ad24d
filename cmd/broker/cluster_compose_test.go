package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/sediment-io/sediment/metadata/etcdkv"
)

// composeClusterBrokers are the brokers of docker-compose.yml's cluster
// profile, node ids 1, 2 and 3 in order.
var composeClusterBrokers = []string{"broker-1", "broker-2", "broker-3"}

// TestComposeCluster: the cluster profile's three brokers take flags the
// broker has and that pass its own validation; they have node ids 1-3 and
// distinct racks; they share one etcd prefix on the etcd service and one
// object-store prefix in the bucket the mc step creates (not the one-node
// broker's); they acknowledge in object durability; each advertises
// localhost on a port of its own that compose publishes and it listens
// on; each keeps its data in a volume of its own, asks /readyz in its
// healthcheck, and starts after etcd is healthy and the bucket exists.
func TestComposeCluster(t *testing.T) {
	f := readCompose(t)
	single := brokerObjectStore(t, f.Services["broker"]).String()
	bucket := createdBucket(t, f.Services["create-bucket"])
	seen := map[string]map[string]string{} // what must differ, or agree, between the brokers
	for i, name := range composeClusterBrokers {
		s, ok := f.Services[name]
		if !ok {
			t.Fatalf("docker-compose.yml: no %s service", name)
		}
		cfg := composeClusterConfig(t, name, s)
		note := func(what, v string) {
			if seen[what] == nil {
				seen[what] = map[string]string{}
			}
			seen[what][name] = v
		}
		if cfg.NodeID != i+1 {
			t.Errorf("%s: --node-id %d, want %d", name, cfg.NodeID, i+1)
		}
		if cfg.Durability != "object" {
			t.Errorf("%s: --durability %q, want object: a cluster acknowledges after the fenced commit", name, cfg.Durability)
		}
		etcd, err := etcdkv.ParseURL(cfg.Metadata)
		if err != nil || !slices.Equal(etcd.Endpoints, []string{"etcd:2379"}) {
			t.Errorf("%s: --metadata %q (%v): want etcd://etcd:2379/PREFIX, the etcd service", name, cfg.Metadata, err)
		}
		note("metadata", cfg.Metadata)
		u := brokerObjectStore(t, s)
		if u.Host != bucket || u.String() == single {
			t.Errorf("%s: --object-store %s: want the bucket %s under a prefix apart from the one-node broker's", name, u, bucket)
		}
		note("object store", u.String())
		note("rack", composeFlag(s, "rack"))
		note("advertise", checkComposePorts(t, name, s, cfg))
		note("volume", strings.Join(s.Volumes, ","))
		for dep, cond := range map[string]string{"etcd": "service_healthy", "create-bucket": "service_completed_successfully"} {
			if s.DependsOn[dep].Condition != cond {
				t.Errorf("%s: want it to depend on %s (%s)", name, dep, cond)
			}
		}
	}
	for _, what := range []string{"metadata", "object store"} {
		if vs := distinct(seen[what]); len(vs) != 1 {
			t.Errorf("the cluster's brokers have different %s: %v", what, seen[what])
		}
	}
	for _, what := range []string{"rack", "advertise", "volume"} {
		if vs := distinct(seen[what]); len(vs) != len(composeClusterBrokers) || slices.Contains(vs, "") {
			t.Errorf("the cluster's brokers need a %s each: %v", what, seen[what])
		}
	}
}

// composeClusterConfig checks that every flag of a cluster broker exists
// and returns the config the broker parses from its command line.
func composeClusterConfig(t *testing.T, name string, s composeService) *serveConfig {
	t.Helper()
	if len(s.Command) == 0 || s.Command[0] != "serve" {
		t.Fatalf("%s command %q: want serve and flags", name, s.Command)
	}
	fs := flag.NewFlagSet("compose", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	(&serveConfig{}).flags(fs)
	for _, arg := range s.Command[1:] {
		flagName, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if strings.HasPrefix(arg, "-") && fs.Lookup(flagName) == nil {
			t.Errorf("docker-compose.yml: %s flag --%s does not exist", name, flagName)
		}
	}
	cfg, err := parseServe(s.Command[1:], func(k string) string { return s.Environment[k] })
	if err != nil {
		t.Fatalf("docker-compose.yml: %s command rejected: %v", name, err)
	}
	return cfg
}

// checkComposePorts: the broker listens on 0.0.0.0 at the port it
// advertises as localhost:PORT, compose publishes that port and the HTTP
// one as the same numbers, and the healthcheck asks /readyz. It returns
// the advertised address.
func checkComposePorts(t *testing.T, name string, s composeService, cfg *serveConfig) string {
	t.Helper()
	_, listenPort, _ := net.SplitHostPort(cfg.Listen)
	advHost, advPort, _ := net.SplitHostPort(cfg.Advertise)
	if advHost != "localhost" || advPort != listenPort || !strings.HasPrefix(cfg.Listen, "0.0.0.0:") {
		t.Errorf("%s: --listen %s --advertise %s: want 0.0.0.0:PORT and localhost:PORT", name, cfg.Listen, cfg.Advertise)
	}
	_, httpPort, _ := net.SplitHostPort(cfg.HTTPListen)
	for _, port := range []string{listenPort, httpPort} {
		if !slices.ContainsFunc(s.Ports, func(p string) bool { return strings.HasPrefix(p, port+":"+port) }) {
			t.Errorf("%s: port %s is not published as %s:%s (ports %q)", name, port, port, port, s.Ports)
		}
	}
	if hc := s.Healthcheck; hc == nil || !slices.Contains(hc.Test, fmt.Sprintf("http://127.0.0.1:%s/readyz", httpPort)) {
		t.Errorf("%s: healthcheck %+v: want it to fetch http://127.0.0.1:%s/readyz", name, hc, httpPort)
	}
	return cfg.Advertise
}

// composeFlag returns the value of --name=VALUE in a service's command.
func composeFlag(s composeService, name string) string {
	for _, arg := range s.Command {
		if v, ok := strings.CutPrefix(arg, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// distinct returns the distinct values of m, sorted.
func distinct(m map[string]string) []string {
	var out []string
	for _, v := range m {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}
