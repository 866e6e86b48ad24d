package bench

import (
	"fmt"
	"io"
	"net"
	"time"
)

// Loopback is the machine's raw loopback TCP throughput: one connection,
// 256 KiB writes, nothing else done with the bytes. No broker on the same
// machine can move records faster than this.
type Loopback struct {
	MBPerSec float64 `json:"mb_per_s"`
	Bytes    int64   `json:"bytes"`
	Seconds  float64 `json:"seconds"`
}

// maxLoopbackBytes bounds the transfer whatever the duration.
const maxLoopbackBytes = 8 << 30

// MeasureLoopback sends bytes over a loopback TCP connection for d (at
// most 8 GiB) and returns the rate the receiver saw.
func MeasureLoopback(d time.Duration) (Loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Loopback{}, fmt.Errorf("bench: loopback: %w", err)
	}
	defer ln.Close()
	type result struct {
		n   int64
		err error
	}
	got := make(chan result, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			got <- result{err: err}
			return
		}
		defer conn.Close()
		n, err := io.Copy(io.Discard, conn)
		got <- result{n, err}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return Loopback{}, fmt.Errorf("bench: loopback: %w", err)
	}
	buf := make([]byte, 256<<10)
	start := time.Now()
	var sent int64
	for time.Since(start) < d && sent < maxLoopbackBytes {
		n, err := conn.Write(buf)
		sent += int64(n)
		if err != nil {
			conn.Close()
			return Loopback{}, fmt.Errorf("bench: loopback write: %w", err)
		}
	}
	conn.Close()
	r := <-got
	elapsed := time.Since(start).Seconds()
	if r.err != nil {
		return Loopback{}, fmt.Errorf("bench: loopback read: %w", r.err)
	}
	return Loopback{MBPerSec: float64(r.n) / elapsed / 1e6, Bytes: r.n, Seconds: elapsed}, nil
}
