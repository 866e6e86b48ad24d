package protocol

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawHeader builds a v1 request header (key, version, correlation id,
// client id) followed by body, framed with its size.
func rawHeader(key, version int16, corr int32, body ...byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = append(b, 0, 4, 't', 'e', 's', 't')
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func sizePrefix(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

// framed encodes req at its version, however our broker ranges stand.
func framed(req kmsg.Request, corr int32) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("test")).AppendRequest(nil, req, corr)
}

func withVersion[R kmsg.Request](req R, v int16) R {
	req.SetVersion(v)
	return req
}

// TestBadFramesCloseTheConnection: each frame closes its connection
// without an answer (after answering what came before it), and the broker
// goes on serving new connections.
func TestBadFramesCloseTheConnection(t *testing.T) {
	t.Parallel()
	const maxBytes = 64 << 10
	b := startBroker(t, withMaxRequestBytes(maxBytes))
	b.createTopic("t", 1, nil)
	alterLogDirs := kmsg.NewPtrAlterReplicaLogDirsRequest()
	alterLogDirs.Version = 1
	writeTxnMarkers := kmsg.NewPtrWriteTxnMarkersRequest()
	writeTxnMarkers.Version = 2
	txnOffsetCommit := kmsg.NewPtrTxnOffsetCommitRequest()
	txnOffsetCommit.Version = 5
	cases := []struct {
		name  string
		frame []byte
		// halfClose ends the client's side after the frame, for frames
		// that announce more bytes than they carry.
		halfClose bool
	}{
		{"over max request bytes", sizePrefix(maxBytes + 1), false},
		{"far over max request bytes", sizePrefix(1 << 30), false},
		{"negative size", sizePrefix(-1), false},
		{"size smaller than a header", append(sizePrefix(4), 0, 3, 0, 1), false},
		{"zero size", sizePrefix(0), false},
		{"truncated header", append(sizePrefix(10), 0, 3, 0, 1, 0, 0, 0, 1, 0, 50), false},
		{"truncated body", append(sizePrefix(100), rawHeader(3, 1, 1)[4:]...), true},
		{"client id length cut", append(sizePrefix(9), 0, 3, 0, 1, 0, 0, 0, 1, 0), false},
		{"unknown API key", rawHeader(999, 0, 1), false},
		{"negative API key", rawHeader(-1, 0, 1), false},
		{"version beyond what kmsg parses", rawHeader(3, 14, 1), false},
		{"negative version", rawHeader(3, -1, 1), false},
		{"malformed body", rawHeader(3, 1, 1, 0, 0, 0, 5, 0), false},
		{"unserved API without a top-level error", framed(alterLogDirs, 1), false},
		{"produce below v3 (no top-level error)", framed(withVersion(produceReq(9, 1, "t", 0, nil), 2), 1), false},
		{"list offsets v0 (no top-level error)", framed(withVersion(listOffsetsReq(1, "t", []int64{-1}), 0), 1), false},
		{"fetch v3 (no top-level error in v0-v6)", framed(withVersion(fetchReq(4, "t", [16]byte{}, 0, 0), 3), 1), false},
		{"write txn markers v2 (no top-level error)", framed(writeTxnMarkers, 1), false},
		{"txn offset commit v5 (no top-level error)", framed(txnOffsetCommit, 1), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := b.dial()
			c.t = t
			// A valid request first: it is answered before the close.
			md := metadataReq(1, false, "t")
			corr := c.send(md)
			c.write(tc.frame)
			if tc.halfClose {
				c.nc.(*net.TCPConn).CloseWrite()
			}
			c.recv(md, corr)
			c.expectClosed()
			b.checkServing()
		})
	}
}

// TestUnsupportedVersionAnswered: an API at a version outside our range (or
// an API we do not serve) whose response has a top-level error code at that
// version is answered with UNSUPPORTED_VERSION, and the connection stays
// open.
func TestUnsupportedVersionAnswered(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	c := b.dial()
	describeACLs := kmsg.NewPtrDescribeACLsRequest()
	describeACLs.Version = 1
	addPartitionsToTxn := kmsg.NewPtrAddPartitionsToTxnRequest()
	addPartitionsToTxn.Version = 5 // v0-v4 are served
	fetchV7 := withVersion(fetchReq(7, "t", [16]byte{}, 0, 0), 7)
	for _, req := range []kmsg.Request{describeACLs, addPartitionsToTxn} {
		resp := c.recv(req, c.send(req))
		var code int16
		switch resp := resp.(type) {
		case *kmsg.DescribeACLsResponse:
			code = resp.ErrorCode
		case *kmsg.AddPartitionsToTxnResponse:
			code = resp.ErrorCode
		}
		wantCode(t, kmsg.NameForKey(req.Key()), code, kerr.UnsupportedVersion.Code)
	}
	// Fetch v7 is served: a real answer.
	wantCode(t, "fetch v7", roundTrip[*kmsg.FetchResponse](c, fetchV7).ErrorCode, 0)
	b.checkServing()
}
