package miniotest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Test credentials of every server this package starts.
const (
	AccessKey = "sediment-test"
	SecretKey = "sediment-test-secret"
	Region    = "us-east-1"
)

// Server is a MinIO server process on loopback.
type Server struct {
	// Addr is the S3 API's HOST:PORT; ConsoleAddr the web console's.
	Addr, ConsoleAddr string
	bin, dir          string
	logs              *logRing

	mu     sync.Mutex // guards cmd and exited
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
}

// newServer starts a server with its data in dir and waits until it is
// live.
func newServer(dir string) (*Server, error) {
	bin, err := binary()
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	console, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: addr, ConsoleAddr: console, bin: bin, dir: dir, logs: newLogRing(200)}
	if err := s.Restart(); err != nil {
		return nil, err
	}
	return s, nil
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("miniotest: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Endpoint is the S3 API's base URL.
func (s *Server) Endpoint() string { return "http://" + s.Addr }

// Restart starts the server process, on the same ports and data as
// before, and waits until /minio/health/live answers. It is a no-op while
// the server runs.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	cmd := exec.Command(s.bin, "server", s.dir, "--address", s.Addr, "--console-address", s.ConsoleAddr)
	cmd.Env = serverEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test binary
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("miniotest: start %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	if err := s.waitLiveLocked(); err != nil {
		s.stopLocked()
		return err
	}
	return nil
}

// serverEnv is the environment without the caller's MinIO settings, plus
// the test credentials and no update checks.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MINIO_") {
			env = append(env, kv)
		}
	}
	return append(env, "MINIO_ROOT_USER="+AccessKey, "MINIO_ROOT_PASSWORD="+SecretKey,
		"MINIO_UPDATE=off", "MINIO_CI_CD=on", "MINIO_REGION="+Region)
}

// waitLiveLocked polls the liveness endpoint for up to 60 s.
func (s *Server) waitLiveLocked() error {
	client := &http.Client{Timeout: time.Second}
	for range 600 {
		select {
		case <-s.exited:
			return fmt.Errorf("miniotest: minio exited during start-up:\n%s", s.logs)
		default:
		}
		resp, err := client.Get(s.Endpoint() + "/minio/health/live")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("miniotest: minio not live after 60s:\n%s", s.logs)
}

// Stop ends the server with SIGTERM, and SIGKILL if it has not exited
// within 10 s. The data stays for Restart. Stopping a stopped server is a
// no-op.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopLocked()
}

func (s *Server) stopLocked() error {
	if s.cmd == nil {
		return nil
	}
	defer func() { s.cmd, s.exited = nil, nil }()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return nil
	case <-time.After(10 * time.Second):
	}
	s.cmd.Process.Kill()
	select {
	case <-s.exited:
		return fmt.Errorf("miniotest: minio ignored SIGTERM for 10s and was killed")
	case <-time.After(10 * time.Second):
		return fmt.Errorf("miniotest: minio (pid %d) did not exit after SIGKILL", s.cmd.Process.Pid)
	}
}

// Logs returns the server's last lines of output.
func (s *Server) Logs() string { return s.logs.String() }

// Env is the environment a client process needs to reach the server with
// the AWS variables.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey, "AWS_REGION=" + Region}
}

// S3URL is the --object-store URL of bucket/prefix for the s3 backend.
func (s *Server) S3URL(bucket, prefix string) string {
	return fmt.Sprintf("s3://%s/%s?endpoint=%s&region=%s&path_style=true", bucket, prefix, s.Endpoint(), Region)
}

// MinioURL is the --object-store URL of bucket/prefix for the minio
// backend.
func (s *Server) MinioURL(bucket, prefix string) string {
	return fmt.Sprintf("minio://%s/%s/%s?secure=false", s.Addr, bucket, prefix)
}

// logRing keeps the last lines a process wrote.
type logRing struct {
	mu    sync.Mutex // guards lines and next
	lines []string
	next  int
}

func newLogRing(n int) *logRing { return &logRing{lines: make([]string, 0, n)} }

// Write keeps p's lines (a line split across writes counts as two).
func (l *logRing) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if len(l.lines) < cap(l.lines) {
			l.lines = append(l.lines, line)
		} else {
			l.lines[l.next] = line
			l.next = (l.next + 1) % len(l.lines)
		}
	}
	return len(p), nil
}

func (l *logRing) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(append(append([]string(nil), l.lines[l.next:]...), l.lines[:l.next]...), "\n")
}
