package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestPanicWhileAnsweringClosesOnlyThatConnection: a panic in a request's
// wait (the writer's side of a handler: long polls, durability waits) is a
// bug that must close its own connection, not crash the broker.
func TestPanicWhileAnsweringClosesOnlyThatConnection(t *testing.T) {
	t.Parallel()
	b := startBroker(t)
	bystander := b.dial()
	c := b.dial()
	apiv := kmsg.NewPtrApiVersionsRequest()
	roundTrip[*kmsg.ApiVersionsResponse](c, apiv) // the connection is registered now
	var victim *conn
	b.srv.mu.Lock()
	for sc := range b.srv.conns {
		if sc.remote == c.nc.LocalAddr().String() {
			victim = sc
		}
	}
	b.srv.mu.Unlock()
	if victim == nil {
		t.Fatal("connection not found")
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	victim.out <- &request{c: victim, s: b.srv, key: int16(kmsg.ApiVersions), resp: resp,
		wait: func() { panic("injected") }}
	c.expectClosed()
	roundTrip[*kmsg.ApiVersionsResponse](bystander, apiv)
	b.checkServing()
}
