package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	miniogo "github.com/minio/minio-go/v7"

	"github.com/sediment-io/sediment/storage/objectstore/miniotest"
)

type requestsResult struct {
	Records        int                `json:"records"`
	CommitBytes    int                `json:"commit_bytes"`
	Commits        int64              `json:"commits"`
	Files          int64              `json:"data_files"`
	PerCommit      map[string]float64 `json:"warehouse_requests_per_commit_by_method"`
	TotalPerCommit float64            `json:"warehouse_requests_per_commit"`
	Note           string             `json:"note"`
}

// countingProxy forwards to MinIO and counts the requests on the
// warehouse (keys under tables/) by method.
type countingProxy struct {
	mu     sync.Mutex
	counts map[string]int
	srv    *http.Server
	addr   string
}

func newCountingProxy(target string) (*countingProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{counts: map[string]int{}, addr: ln.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(u)
	p.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/tables/") || strings.Contains(r.URL.RawQuery, "prefix=tables") ||
			strings.Contains(r.URL.RawQuery, "tables%2F") {
			p.mu.Lock()
			p.counts[r.Method]++
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	})}
	go p.srv.Serve(ln)
	return p, nil
}

func (p *countingProxy) snapshot(reset bool) map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.counts {
		out[k] = v
	}
	if reset {
		p.counts = map[string]int{}
	}
	return out
}

// measureRequests converts records on a MinIO behind a counting proxy,
// committing every commit.bytes, and divides the warehouse requests by
// the commits. The SQLite catalog is local and not counted.
func measureRequests(ctx context.Context, cfg config) (*requestsResult, error) {
	dir, err := os.MkdirTemp("", "tablebench-minio-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	srv, err := miniotest.Launch(dir)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	if err := makeBucket(ctx, srv, "tablebench"); err != nil {
		return nil, err
	}
	proxy, err := newCountingProxy(srv.Endpoint())
	if err != nil {
		return nil, err
	}
	defer proxy.srv.Close()
	storeURL := fmt.Sprintf("s3://tablebench/b?endpoint=http://%s&region=%s&path_style=true", proxy.addr, miniotest.Region)
	s, err := newStack(ctx, storeURL)
	if err != nil {
		return nil, err
	}
	defer s.close()
	return countCommits(ctx, s, proxy, cfg)
}

func countCommits(ctx context.Context, s *stack, proxy *countingProxy, cfg config) (*requestsResult, error) {
	const commitBytes, records = 4 << 20, 20_000
	topic, err := s.log.CreateTopic(ctx, "req", int32(cfg.partitions), nil, false)
	if err != nil {
		return nil, err
	}
	if err := enableTable(ctx, s, "req", "60000", "sediment.table.commit.bytes", fmt.Sprint(commitBytes)); err != nil {
		return nil, err
	}
	for range 200 { // the table is created before anything is counted
		if st, ok := s.conv.Status("req"); ok && st.State == "running" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	proxy.snapshot(true)
	if err := s.appendRecords(ctx, topic, 0, records, cfg.size, 200); err != nil {
		return nil, err
	}
	// The last partial buffer waits for the 60 s interval: count up to the
	// moment the last full commit is seen.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var seen int64
	var counts map[string]int
	for wctx.Err() == nil {
		st, _ := s.conv.Status("req")
		if st.Commits > seen {
			seen, counts = st.Commits, proxy.snapshot(false)
		}
		if st.Committed >= int64(records-records/4) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	st, _ := s.conv.Status("req")
	st.Commits = seen
	res := &requestsResult{Records: records, CommitBytes: commitBytes, Commits: st.Commits, Files: st.Files, PerCommit: map[string]float64{},
		Note: "S3 requests under the warehouse prefix (tables/) seen by a proxy in front of MinIO, divided by the commits; the SQLite catalog is local"}
	if st.Commits == 0 {
		return nil, fmt.Errorf("no commit happened")
	}
	for m, n := range counts {
		res.PerCommit[m] = float64(n) / float64(st.Commits)
		res.TotalPerCommit += float64(n) / float64(st.Commits)
	}
	return res, nil
}

func makeBucket(ctx context.Context, srv *miniotest.Server, name string) error {
	cl, err := srv.Client()
	if err != nil {
		return err
	}
	for range 100 {
		if err = cl.MakeBucket(ctx, name, miniogo.MakeBucketOptions{Region: miniotest.Region}); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}
