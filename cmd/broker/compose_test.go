package main

import (
	"bytes"
	"flag"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeFile is the part of docker-compose.yml the test reads. Decoding
// is strict: a key not declared here (a typo such as "healtcheck") fails.
type composeFile struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]struct{}       `yaml:"volumes"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       string            `yaml:"build"`
	Command     []string          `yaml:"command"`
	Entrypoint  []string          `yaml:"entrypoint"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	Profiles    []string          `yaml:"profiles"`
	Restart     string            `yaml:"restart"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test        []string `yaml:"test"`
		Interval    string   `yaml:"interval"`
		Timeout     string   `yaml:"timeout"`
		Retries     int      `yaml:"retries"`
		StartPeriod string   `yaml:"start_period"`
	} `yaml:"healthcheck"`
}

// readCompose decodes the repository's docker-compose.yml strictly.
func readCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f composeFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	for _, name := range []string{"minio", "create-bucket", "broker", "etcd"} {
		if _, ok := f.Services[name]; !ok {
			t.Fatalf("docker-compose.yml: no %s service", name)
		}
	}
	return f
}

// TestComposeBrokerFlags: every flag and SEDIMENT_ variable the compose
// file gives the broker exists, the whole command line passes the broker's
// own validation, its listeners are reachable from outside the container,
// and its healthcheck asks /readyz on the HTTP listener.
func TestComposeBrokerFlags(t *testing.T) {
	broker := readCompose(t).Services["broker"]
	if len(broker.Command) == 0 || broker.Command[0] != "serve" {
		t.Fatalf("broker command %q: want serve and flags", broker.Command)
	}
	args := broker.Command[1:]
	fs := flag.NewFlagSet("compose", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	(&serveConfig{}).flags(fs)
	for _, arg := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if strings.HasPrefix(arg, "-") && fs.Lookup(name) == nil {
			t.Errorf("docker-compose.yml: broker flag --%s does not exist", name)
		}
	}
	for key := range broker.Environment {
		name := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(key, "SEDIMENT_")), "_", "-")
		if strings.HasPrefix(key, "SEDIMENT_") && fs.Lookup(name) == nil {
			t.Errorf("docker-compose.yml: broker variable %s names no flag", key)
		}
	}
	cfg, err := parseServe(args, func(k string) string { return broker.Environment[k] })
	if err != nil {
		t.Fatalf("docker-compose.yml: broker command rejected: %v", err)
	}
	for flagName, addr := range map[string]string{"listen": cfg.Listen, "http-listen": cfg.HTTPListen} {
		if host, _, _ := net.SplitHostPort(addr); host != "0.0.0.0" {
			t.Errorf("--%s %s: want 0.0.0.0:PORT, reachable through the published port", flagName, addr)
		}
	}
	_, port, _ := net.SplitHostPort(cfg.HTTPListen)
	hc := broker.Healthcheck
	if hc == nil || !slices.Contains(hc.Test, "http://127.0.0.1:"+port+"/readyz") {
		t.Errorf("broker healthcheck %+v: want it to fetch http://127.0.0.1:%s/readyz", hc, port)
	}
}

// TestComposeBucket: the bucket the mc step creates is the one in the
// broker's --object-store URL, on the minio service, with MinIO's
// credentials; the steps run in order and MinIO has a liveness check.
func TestComposeBucket(t *testing.T) {
	f := readCompose(t)
	minio, mc, broker := f.Services["minio"], f.Services["create-bucket"], f.Services["broker"]
	created := createdBucket(t, mc)
	u := brokerObjectStore(t, broker)
	if u.Scheme != "s3" {
		t.Fatalf("--object-store %q: want an s3:// URL", u)
	}
	if u.Host != created {
		t.Errorf("broker uses bucket %q, the mc step creates %q", u.Host, created)
	}
	endpoint, _ := url.Parse(u.Query().Get("endpoint"))
	if endpoint == nil || endpoint.Host != "minio:9000" || u.Query().Get("path_style") != "true" {
		t.Errorf("--object-store %q: want endpoint=http://minio:9000 (the minio service) and path_style=true", u)
	}
	user, pass := minio.Environment["MINIO_ROOT_USER"], minio.Environment["MINIO_ROOT_PASSWORD"]
	if broker.Environment["AWS_ACCESS_KEY_ID"] != user || broker.Environment["AWS_SECRET_ACCESS_KEY"] != pass {
		t.Errorf("broker AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY differ from MinIO's root credentials")
	}
	if want := "http://" + user + ":" + pass + "@minio:9000"; mc.Environment["MC_HOST_local"] != want {
		t.Errorf("create-bucket MC_HOST_local = %q, want %q", mc.Environment["MC_HOST_local"], want)
	}
	if mc.DependsOn["minio"].Condition != "service_healthy" ||
		broker.DependsOn["create-bucket"].Condition != "service_completed_successfully" {
		t.Errorf("want create-bucket after minio is healthy and the broker after create-bucket completed")
	}
	if minio.Healthcheck == nil || !strings.Contains(strings.Join(minio.Healthcheck.Test, " "), "/minio/health/live") {
		t.Errorf("minio healthcheck %+v: want /minio/health/live", minio.Healthcheck)
	}
}

// brokerObjectStore returns the broker service's --object-store URL, as
// the broker reads it from its command line and environment.
func brokerObjectStore(t *testing.T, broker composeService) *url.URL {
	t.Helper()
	if len(broker.Command) == 0 {
		t.Fatal("docker-compose.yml: the broker service has no command")
	}
	cfg, err := parseServe(broker.Command[1:], func(k string) string { return broker.Environment[k] })
	if err != nil {
		t.Fatalf("docker-compose.yml: broker command rejected: %v", err)
	}
	u, err := url.Parse(cfg.ObjectStore)
	if err != nil {
		t.Fatalf("--object-store %q: %v", cfg.ObjectStore, err)
	}
	return u
}

// createdBucket returns the bucket of the create-bucket step's
// `mc mb ... local/BUCKET`.
func createdBucket(t *testing.T, mc composeService) string {
	t.Helper()
	if !slices.Equal(mc.Entrypoint, []string{"mc"}) || len(mc.Command) == 0 || mc.Command[0] != "mb" {
		t.Fatalf("create-bucket runs %q %q: want mc mb", mc.Entrypoint, mc.Command)
	}
	target := mc.Command[len(mc.Command)-1]
	bucket, ok := strings.CutPrefix(target, "local/")
	if !ok || bucket == "" || strings.Contains(bucket, "/") {
		t.Fatalf("create-bucket target %q: want local/BUCKET", target)
	}
	return bucket
}

// TestComposeProfilesAndImage: etcd and the cluster's brokers start only
// with the cluster profile, everything else with a plain `docker compose
// up`; the broker image is built from the Dockerfile as a static binary
// run by a non-root user.
func TestComposeProfilesAndImage(t *testing.T) {
	f := readCompose(t)
	for name, s := range f.Services {
		want := []string(nil)
		if name == "etcd" || slices.Contains(composeClusterBrokers, name) {
			want = []string{"cluster"}
		}
		if !slices.Equal(s.Profiles, want) {
			t.Errorf("service %s profiles %q, want %q", name, s.Profiles, want)
		}
	}
	if f.Services["broker"].Build != "." {
		t.Errorf("broker build %q: want the root Dockerfile (.)", f.Services["broker"].Build)
	}
	run := strings.Join(dockerfileArgs(t, "RUN"), "\n")
	if !strings.Contains(run, "CGO_ENABLED=0 go build") || !strings.Contains(run, "./cmd/broker") {
		t.Errorf("Dockerfile: want a static build of ./cmd/broker (CGO_ENABLED=0 go build)")
	}
	var user string
	if users := dockerfileArgs(t, "USER"); len(users) > 0 {
		user = users[len(users)-1]
	}
	if user == "" || user == "root" || strings.HasPrefix(user, "0") {
		t.Errorf("Dockerfile: final USER %q, want a non-root user", user)
	}
}

// dockerfileArgs returns the arguments of the root Dockerfile's
// instructions instr ("RUN", "USER"), one per line that starts with it, in
// order.
func dockerfileArgs(t *testing.T, instr string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, instr+" "); ok {
			out = append(out, strings.TrimSpace(rest))
		}
	}
	return out
}
