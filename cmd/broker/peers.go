package main

import (
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// errNoPeers: the cluster lists no live broker to connect to;
// errPeersClosed: the broker is shutting down.
var (
	errNoPeers     = errors.New("no live broker to connect to")
	errPeersClosed = errors.New("the cluster client is closed")
)

// peerClient is a Kafka client of this broker's own cluster, connected at
// first use: the cluster membership, which lists the brokers, starts after
// the parts that use it. It speaks the protocol the brokers serve to
// clients, so it needs nothing they do not serve already, and it reaches
// an owner however ownership moves.
type peerClient struct {
	seeds func() []string // the live brokers' Kafka addresses
	id    string          // the client id, naming this broker and its use
	what  string          // the use, naming errors: "tables", "transactions"
	opts  []kgo.Opt       // beyond seeds and client id

	mu     sync.Mutex // guards cl and closed
	cl     *kgo.Client
	closed bool
}

// client returns the client, connecting it at first use.
func (p *peerClient) client() (*kgo.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("%s: %w", p.what, errPeersClosed)
	}
	if p.cl != nil {
		return p.cl, nil
	}
	seeds := p.seeds()
	if len(seeds) == 0 {
		return nil, fmt.Errorf("%s: %w", p.what, errNoPeers)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ClientID(p.id)}, p.opts...)...)
	if err != nil {
		return nil, fmt.Errorf("%s: cluster client: %w", p.what, err)
	}
	p.cl = cl
	return cl, nil
}

// close closes the client; later calls of client fail with errPeersClosed.
func (p *peerClient) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.cl != nil {
		p.cl.Close()
		p.cl = nil
	}
}
