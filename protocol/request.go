package protocol

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// request is one decoded request on its way through a connection.
type request struct {
	c        *conn
	s        *Server
	key      int16
	version  int16
	corrID   int32
	clientID string
	kreq     kmsg.Request
	resp     kmsg.Response
	started  time.Time

	// wait, when set by a handler, runs on the writer before the response
	// is encoded: durability waits and fetch long polls.
	wait func()
	// noResponse is set for acks=0 produce, which Kafka never answers.
	noResponse bool
	// closeAfter ends the connection when this request's turn comes,
	// after everything before it was answered: Kafka's answer to an acks=0
	// produce that failed, so that the client notices and refreshes its
	// metadata. The reader reads nothing after it.
	closeAfter bool
	// errs counts the error codes the response carries, for metrics.
	errs map[int16]int
	// records are a fetch answer's record batches, by partition, which
	// encodeResponse writes from where they are instead of copying them.
	records []fetchRecords
	// held is the part of the server's in-flight budget this request's
	// frame holds until it is answered.
	held int64
}

// ctx is the connection's context: canceled when the client goes away.
func (r *request) ctx() context.Context { return r.c.ctx }

// code records an error code placed in the response and returns it.
func (r *request) code(code int16) int16 {
	if code != 0 {
		if r.errs == nil {
			r.errs = map[int16]int{}
		}
		r.errs[code]++
	}
	return code
}

// codeOf maps err to its Kafka code, records and returns it.
func (r *request) codeOf(err error) int16 { return r.code(errorCode(err)) }

// decode parses a request frame. Requests this broker cannot serve are
// answered without a handler where Kafka answers them (ApiVersions at an
// unknown version, any API whose response has a top-level error code) and
// otherwise fail, which closes the connection.
func (c *conn) decode(frame []byte) (*request, error) {
	rd := kbin.Reader{Src: frame}
	r := &request{c: c, s: c.s, key: rd.Int16(), version: rd.Int16(), corrID: rd.Int32(), started: time.Now()}
	if cid := rd.NullableString(); cid != nil {
		r.clientID = *cid
	}
	if err := rd.Complete(); err != nil {
		return nil, fmt.Errorf("protocol: malformed request header: %w", err)
	}
	a, served := apis[r.key]
	if r.key == int16(kmsg.ApiVersions) && (r.version < a.min || r.version > a.max) {
		r.resp = apiVersionsFallback(r)
		return r, nil
	}
	kreq := kmsg.RequestForKey(r.key)
	if kreq == nil {
		c.s.m.rejected.WithLabelValues("unknown_api").Inc()
		return nil, fmt.Errorf("protocol: unknown API key %d", r.key)
	}
	if r.version < 0 || r.version > kreq.MaxVersion() {
		c.s.m.rejected.WithLabelValues("unsupported_version").Inc()
		return nil, fmt.Errorf("protocol: %s v%d is not a version this broker can parse", kmsg.NameForKey(r.key), r.version)
	}
	kreq.SetVersion(r.version)
	if kreq.IsFlexible() {
		kmsg.SkipTags(&rd)
	}
	if err := kreq.ReadFrom(rd.Src); err != nil {
		c.s.m.rejected.WithLabelValues("malformed").Inc()
		return nil, fmt.Errorf("protocol: malformed %s v%d request: %w", kmsg.NameForKey(r.key), r.version, err)
	}
	r.kreq = kreq
	if !served || r.version < a.min || r.version > a.max {
		return r, r.unsupported(served)
	}
	return r, nil
}

// unsupported answers an API or version this broker does not serve with
// UNSUPPORTED_VERSION when the response has a top-level error code, and
// otherwise fails so the connection closes.
func (r *request) unsupported(served bool) error {
	r.c.s.m.rejected.WithLabelValues("unsupported_version").Inc()
	resp := r.kreq.ResponseKind()
	resp.SetVersion(r.version)
	if !setTopLevelError(resp, kerr.UnsupportedVersion.Code) {
		what := "not served"
		if served {
			what = fmt.Sprintf("served at v%d-v%d only", apis[r.key].min, apis[r.key].max)
		}
		return fmt.Errorf("protocol: %s v%d: API %s", kmsg.NameForKey(r.key), r.version, what)
	}
	r.code(kerr.UnsupportedVersion.Code)
	r.resp = resp
	r.c.s.lg.Info("unsupported request answered with UNSUPPORTED_VERSION",
		"remote", r.c.remote, "api", kmsg.NameForKey(r.key), "version", r.version)
	return nil
}

// setTopLevelError sets resp's top-level error code and reports whether the
// response carries one at its version. kmsg structs hold every version's
// fields (FetchResponse has ErrorCode, written only from v7), so the answer
// is encoded and decoded again to see whether the code survives the wire.
func setTopLevelError(resp kmsg.Response, code int16) bool {
	f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode")
	if !f.IsValid() || f.Kind() != reflect.Int16 {
		return false
	}
	f.SetInt(int64(code))
	probe := kmsg.ResponseForKey(resp.Key())
	probe.SetVersion(resp.GetVersion())
	if err := probe.ReadFrom(resp.AppendTo(nil)); err != nil {
		return false
	}
	return reflect.ValueOf(probe).Elem().FieldByName("ErrorCode").Int() == int64(code)
}
