package bench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestLatencyProxyForwards: the proxy hands each request on unchanged,
// Host header included (an S3 signature covers it), and the answer back.
func TestLatencyProxyForwards(t *testing.T) {
	var gotHost, gotPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHost, gotPath = r.Host, r.URL.RequestURI()
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("ETag", `"e"`)
		w.Write(append([]byte("got "), body...))
	}))
	defer srv.Close()
	p, err := startLatencyProxy(srv.URL, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	req, err := http.NewRequest(http.MethodPut, p.endpoint()+"/bucket/key?x=1", strings.NewReader("data"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	proxyHost := strings.TrimPrefix(p.endpoint(), "http://")
	if string(body) != "got data" || resp.Header.Get("ETag") != `"e"` || gotHost != proxyHost || gotPath != "/bucket/key?x=1" {
		t.Fatalf("answer %q etag %q; server saw host %q path %q (want host %q)", body, resp.Header.Get("ETag"), gotHost, gotPath, proxyHost)
	}
}
