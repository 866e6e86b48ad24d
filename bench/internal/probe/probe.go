// Package probe holds what the standalone measurement programs
// (corebench, objbench, groupbench) need around a broker they start: a
// free loopback address, a scrape of its /metrics, the machine's
// description.
package probe

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// FreeAddr returns a loopback address with a port free at the time of the
// call.
func FreeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("probe: no free loopback port: %v", err))
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Metrics are scraped samples, name{labels} -> value.
type Metrics map[string]float64

// Scrape reads http://httpAddr/metrics; a broker that does not answer
// gives no samples.
func Scrape(httpAddr string) Metrics {
	out := Metrics{}
	if httpAddr == "" {
		return out
	}
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				out[line[:i]] = v
			}
		}
	}
	return out
}

// Sum adds the samples of metric whose labels contain every one of labels
// (each written as `name="value` or `name="value"`).
func (m Metrics) Sum(metric string, labels ...string) float64 {
	total := 0.0
	for k, v := range m {
		name, rest, _ := strings.Cut(k, "{")
		if name != metric {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(rest, l)
		}
		if ok {
			total += v
		}
	}
	return total
}

// Machine describes the CPUs from /proc/cpuinfo: "2 cpus, AMD EPYC ...".
func Machine() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	cpus, model := 0, ""
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "model name") {
			cpus++
			model = strings.TrimSpace(strings.TrimPrefix(line, "model name\t:"))
		}
	}
	return fmt.Sprintf("%d cpus, %s", cpus, model)
}
