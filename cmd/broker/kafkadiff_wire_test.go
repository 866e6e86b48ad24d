//go:build interop

package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// wireConn is one Kafka connection that sends a request at exactly the
// version set on it and decodes the answer at that version.
type wireConn struct {
	nc   net.Conn
	fmt  *kmsg.RequestFormatter
	corr int32
}

func dialWire(addr string) (*wireConn, error) {
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("kafkadiff: %w", err)
	}
	return &wireConn{nc: nc, fmt: kmsg.NewRequestFormatter(kmsg.FormatterClientID("sediment-kafkadiff"))}, nil
}

func (w *wireConn) close() { w.nc.Close() }

// do sends req and reads its answer, bounded by 30 s.
func (w *wireConn) do(req kmsg.Request) (kmsg.Response, error) {
	w.corr++
	if err := w.nc.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return nil, fmt.Errorf("kafkadiff: %w", err)
	}
	if _, err := w.nc.Write(w.fmt.AppendRequest(nil, req, w.corr)); err != nil {
		return nil, fmt.Errorf("kafkadiff: write key %d v%d: %w", req.Key(), req.GetVersion(), err)
	}
	var size [4]byte
	if _, err := io.ReadFull(w.nc, size[:]); err != nil {
		return nil, fmt.Errorf("kafkadiff: read key %d v%d: %w", req.Key(), req.GetVersion(), err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(w.nc, body); err != nil {
		return nil, fmt.Errorf("kafkadiff: read key %d v%d: %w", req.Key(), req.GetVersion(), err)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	rd := kbin.Reader{Src: body}
	if corr := rd.Int32(); corr != w.corr {
		return nil, fmt.Errorf("kafkadiff: correlation id %d, want %d", corr, w.corr)
	}
	if resp.IsFlexible() && req.Key() != int16(kmsg.ApiVersions) {
		skipTags(&rd)
	}
	if err := resp.ReadFrom(rd.Src); err != nil {
		return nil, fmt.Errorf("kafkadiff: decode key %d v%d: %w", req.Key(), req.GetVersion(), err)
	}
	return resp, nil
}

// skipTags skips a response header's tagged fields.
func skipTags(rd *kbin.Reader) {
	for n := rd.Uvarint(); n > 0; n-- {
		rd.Uvarint()
		rd.Span(int(rd.Uvarint()))
	}
}
