package protocol

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxInFlight bounds the requests a connection may have decoded but not yet
// answered; the reader stops reading (back-pressure) beyond it.
const maxInFlight = 64

// unbudgetedFrame is the size up to which a frame is read without taking
// from the server's in-flight budget (Config.MaxInflightBytes): the budget
// holds back bulk produce data, never heartbeats, fetches, offset commits
// or metadata requests, which must get through while producers wait. Such
// frames are bounded per connection by maxInFlight instead.
const unbudgetedFrame = 64 << 10

// writeTimeout bounds one response write to a client that stopped reading.
const writeTimeout = time.Minute

// conn is one client connection: a reader goroutine that decodes and
// dispatches requests in order, and a writer goroutine that answers them in
// the same order.
type conn struct {
	s      *Server
	nc     net.Conn
	remote string
	ctx    context.Context // canceled when the connection ends
	cancel context.CancelFunc
	out    chan *request // in request order; closed by the reader
}

func newConn(s *Server, nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(s.ctx)
	return &conn{s: s, nc: nc, remote: nc.RemoteAddr().String(), ctx: ctx, cancel: cancel,
		out: make(chan *request, maxInFlight)}
}

func (c *conn) serve() {
	labels := pprof.Labels("sediment", "conn", "remote", c.remote)
	pprof.Do(c.ctx, labels, func(context.Context) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.writeLoop()
		}()
		c.readLoop()
		<-done
		c.cancel()
		c.nc.Close()
	})
}

// readLoop decodes requests until the connection ends or misbehaves. It
// always closes c.out, which tells the writer to finish.
func (c *conn) readLoop() {
	defer close(c.out)
	br := bufio.NewReaderSize(c.nc, 64<<10)
	for {
		frame, held, err := c.readFrame(br)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && c.ctx.Err() == nil {
				c.s.lg.Info("closing connection", "remote", c.remote, "reason", err)
			}
			c.cancel()
			return
		}
		r, err := c.dispatch(frame)
		if err != nil {
			c.s.release(held)
			c.s.lg.Warn("closing connection on bad request", "remote", c.remote, "err", err)
			c.cancel()
			return
		}
		r.held = held
		select {
		case c.out <- r:
		case <-c.ctx.Done():
			c.s.release(held)
			return
		}
		if r.closeAfter {
			return
		}
	}
}

// readFrame reads one size-prefixed request, once the server's in-flight
// budget has room for it, and returns it with the budget it holds.
func (c *conn) readFrame(br *bufio.Reader) ([]byte, int64, error) {
	c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.IdleTimeout))
	var size [4]byte
	if _, err := io.ReadFull(br, size[:]); err != nil {
		return nil, 0, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 8 {
		return nil, 0, fmt.Errorf("protocol: frame of %d bytes is too short for a request header", n)
	}
	if n > c.s.cfg.MaxRequestBytes {
		c.s.m.rejected.WithLabelValues("oversize").Inc()
		return nil, 0, fmt.Errorf("protocol: request of %d bytes exceeds --max-request-bytes %d", n, c.s.cfg.MaxRequestBytes)
	}
	held := min(int64(n), c.s.cfg.MaxInflightBytes)
	if held <= unbudgetedFrame {
		held = 0
	} else if !c.s.inflight.TryAcquire(held) {
		c.s.m.inflightWaits.Inc()
		if err := c.s.inflight.Acquire(c.ctx, held); err != nil {
			return nil, 0, err
		}
	}
	c.s.m.inflightBytes.Add(float64(held))
	frame := make([]byte, n)
	if _, err := io.ReadFull(br, frame); err != nil {
		c.s.release(held)
		return nil, 0, fmt.Errorf("protocol: truncated request (%d bytes announced): %w", n, err)
	}
	c.s.m.bytesIn.Add(float64(n + 4))
	return frame, held, nil
}

// dispatch decodes a frame and runs its handler. A panic in decoding or in
// a handler is a bug: it is logged with its stack and closes only this
// connection.
func (c *conn) dispatch(frame []byte) (r *request, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.s.lg.Error("panic while handling request", "remote", c.remote, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("protocol: internal error: %v", p)
		}
	}()
	return c.handleFrame(frame)
}

// handleFrame decodes one request frame (everything after the size prefix)
// and runs its handler. It does not recover panics: dispatch does that for
// the live connection, and the fuzz test calls handleFrame directly so a
// panic fails it.
func (c *conn) handleFrame(frame []byte) (*request, error) {
	r, err := c.decode(frame)
	if err != nil || r.resp != nil {
		return r, err
	}
	start := time.Now()
	resp, err := apis[r.key].handle(r)
	if err != nil {
		return nil, err
	}
	r.resp = resp
	r.started = start
	return r, nil
}

// writeLoop answers requests in order, running each one's wait first. It
// flushes before any wait (an answer must never sit in the buffer while the
// next request waits for its fsync or long poll) and whenever no further
// answer is queued. An answer that holds record batches by reference (a
// fetch) is written with one writev after what is buffered.
func (c *conn) writeLoop() {
	bw := bufio.NewWriterSize(c.nc, 64<<10)
	var buf []byte
	for r := range c.out {
		if r.wait != nil && bw.Buffered() > 0 {
			if err := bw.Flush(); err != nil {
				c.fail(err)
				return
			}
		}
		out, frame, err := c.answer(buf[:0], r)
		c.s.release(r.held)
		c.s.m.observe(r)
		if err != nil {
			bw.Flush() // what came before is still answered
			c.fail(err)
			return
		}
		if r.noResponse {
			continue
		}
		buf = out
		c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if err := c.write(bw, out, frame); err != nil {
			c.fail(err)
			return
		}
		if len(c.out) == 0 {
			if err := bw.Flush(); err != nil {
				c.fail(err)
				return
			}
		}
	}
	bw.Flush()
}

// write sends one answer: enc through bw, or, when the answer is held as
// frame (see encodeResponse), frame with one writev after flushing bw.
func (c *conn) write(bw *bufio.Writer, enc []byte, frame net.Buffers) error {
	if frame == nil {
		c.s.m.bytesOut.Add(float64(len(enc)))
		_, err := bw.Write(enc)
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	n, err := frame.WriteTo(c.nc)
	c.s.m.bytesOut.Add(float64(n))
	return err
}

// answer runs r's wait and encodes its response into buf (nothing for a
// request Kafka does not answer). An error ends the connection: an
// unanswered request that failed (an acks=0 produce, see
// request.closeAfter), or a panic, which is a bug and, as in dispatch, is
// logged with its stack and closes only this connection: the writer must
// not take the whole broker down.
func (c *conn) answer(buf []byte, r *request) (_ []byte, _ net.Buffers, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.s.lg.Error("panic while answering request", "remote", c.remote, "api", kmsg.NameForKey(r.key),
				"panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("protocol: internal error: %v", p)
		}
	}()
	if r.wait != nil {
		r.wait()
	}
	if !r.noResponse {
		buf, frame := encodeResponse(buf, r)
		return buf, frame, nil
	}
	if r.closeAfter || len(r.errs) > 0 {
		return buf, nil, fmt.Errorf("protocol: unanswered %s failed: %s", kmsg.NameForKey(r.key), errCodeNames(r.errs))
	}
	return buf, nil, nil
}

// fail ends the connection after a write error, draining the queue so the
// reader never blocks.
func (c *conn) fail(err error) {
	if c.ctx.Err() == nil {
		c.s.lg.Info("closing connection", "remote", c.remote, "reason", err)
	}
	c.cancel()
	c.nc.Close()
	for r := range c.out {
		c.answer(nil, r) // runs its wait: appends already made must still settle
		c.s.release(r.held)
	}
}

// encodeResponse frames r's response into buf and returns it. An answer
// with record batches (a fetch that found data) is returned as frame too:
// the buffers that make up the whole frame, in order, some of them in buf,
// the others the batches themselves (see encodeFetchFrame). frame is nil
// when buf holds the whole frame.
func encodeResponse(buf []byte, r *request) (_ []byte, frame net.Buffers) {
	if len(r.records) > 0 {
		return encodeFetchFrame(buf, r)
	}
	return appendResponse(buf, r), nil
}

// appendResponse appends r's response to buf, framed: size, correlation
// id, the response header's tagged fields when flexible (never for
// ApiVersions, whose response header is always v0), then the body.
func appendResponse(buf []byte, r *request) []byte {
	buf = append(buf, 0, 0, 0, 0)
	buf = binary.BigEndian.AppendUint32(buf, uint32(r.corrID))
	if r.resp.IsFlexible() && r.resp.Key() != int16(kmsg.ApiVersions) {
		buf = append(buf, 0)
	}
	buf = r.resp.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	return buf
}
