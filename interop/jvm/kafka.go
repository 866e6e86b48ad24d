package jvm

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// KafkaOptions configure a reference Apache Kafka broker.
type KafkaOptions struct {
	// Dir holds server.properties, the log dirs and the broker's output
	// (kafka.log). Required; the caller removes it.
	Dir string
	// Props are set in server.properties over the defaults below (for
	// example log.flush.interval.messages=1 for an fsync per write).
	Props map[string]string
	// Heap is the JVM's -Xmx; default 1g.
	Heap string
	// StartTimeout bounds formatting and start-up; default 90s.
	StartTimeout time.Duration
}

// Kafka is a running single-node Apache Kafka broker (KRaft, combined
// broker and controller) on loopback ports.
type Kafka struct {
	// Addr is the PLAINTEXT listener's HOST:PORT.
	Addr string
	// Dir is KafkaOptions.Dir.
	Dir  string
	cmd  *exec.Cmd
	done chan error
}

// defaultProps make one node a complete cluster: every internal topic with
// one replica, no initial rebalance delay, and nothing else changed from
// Kafka's defaults.
func defaultProps(dir string, port, controllerPort int) map[string]string {
	return map[string]string{
		"process.roles":                                    "broker,controller",
		"node.id":                                          "1",
		"controller.quorum.voters":                         fmt.Sprintf("1@127.0.0.1:%d", controllerPort),
		"listeners":                                        fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", port, controllerPort),
		"advertised.listeners":                             fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port),
		"controller.listener.names":                        "CONTROLLER",
		"listener.security.protocol.map":                   "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name":                       "PLAINTEXT",
		"log.dirs":                                         filepath.Join(dir, "data"),
		"offsets.topic.replication.factor":                 "1",
		"transaction.state.log.replication.factor":         "1",
		"transaction.state.log.min.isr":                    "1",
		"share.coordinator.state.topic.replication.factor": "1",
		"share.coordinator.state.topic.min.isr":            "1",
		"group.initial.rebalance.delay.ms":                 "0",
	}
}

// StartKafka formats a fresh KRaft log in opts.Dir and starts the broker,
// returning once its listener accepts connections.
func StartKafka(ctx context.Context, cp string, opts KafkaOptions) (*Kafka, error) {
	if opts.Dir == "" {
		return nil, fmt.Errorf("jvm: KafkaOptions.Dir is required")
	}
	if opts.Heap == "" {
		opts.Heap = "1g"
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 90 * time.Second
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	props := defaultProps(opts.Dir, ports[0], ports[1])
	maps.Copy(props, opts.Props)
	propsPath := filepath.Join(opts.Dir, "server.properties")
	if err := os.WriteFile(propsPath, []byte(renderProps(props)), 0o644); err != nil {
		return nil, fmt.Errorf("jvm: %w", err)
	}
	fctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	id, err := Run(fctx, cp, "kafka.tools.StorageTool", "random-uuid")
	if err != nil {
		return nil, err
	}
	if _, err := Run(fctx, cp, "kafka.tools.StorageTool", "format", "-t", strings.TrimSpace(id.Stdout), "-c", propsPath); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(opts.Dir, "kafka.log"))
	if err != nil {
		return nil, fmt.Errorf("jvm: %w", err)
	}
	defer logf.Close()
	// Not CommandContext: the broker outlives ctx, which only bounds start-up.
	cmd := Command(context.Background(), cp, []string{"-Xmx" + opts.Heap, "-Xms" + opts.Heap}, "kafka.Kafka", propsPath)
	cmd.Args = slices.DeleteFunc(cmd.Args, func(a string) bool { return a == "-XX:TieredStopAtLevel=1" || a == "-XX:+UseSerialGC" })
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("jvm: start kafka: %w", err)
	}
	k := &Kafka{Addr: fmt.Sprintf("127.0.0.1:%d", ports[0]), Dir: opts.Dir, cmd: cmd, done: make(chan error, 1)}
	go func() { k.done <- cmd.Wait() }()
	for {
		select {
		case err := <-k.done:
			k.done <- err
			return nil, fmt.Errorf("jvm: kafka exited during start-up (%v); see %s", err, logf.Name())
		case <-fctx.Done():
			k.Close()
			return nil, fmt.Errorf("jvm: kafka not listening on %s after %v; see %s", k.Addr, opts.StartTimeout, logf.Name())
		case <-time.After(200 * time.Millisecond):
		}
		if c, err := net.DialTimeout("tcp", k.Addr, time.Second); err == nil {
			c.Close()
			return k, nil
		}
	}
}

// PID is the broker's process id (for CPU and RSS readings).
func (k *Kafka) PID() int { return k.cmd.Process.Pid }

// Close stops the broker: SIGTERM for a clean shutdown, SIGKILL after 30s.
func (k *Kafka) Close() error {
	if k.cmd.Process == nil {
		return nil
	}
	_ = syscall.Kill(-k.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL)
		<-k.done
	}
	k.done <- nil // later Close calls return at once
	return nil
}

func renderProps(props map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return b.String()
}

// freePorts reserves n loopback ports and releases them for the broker.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("jvm: %w", err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
