package main

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// owners tracks, from the members' callbacks, which member owns which
// partition.
type owners struct {
	topic string
	mu    sync.Mutex // guards owner
	owner map[int32]string
}

func newOwners(topic string) *owners { return &owners{topic: topic, owner: map[int32]string{}} }

func (o *owners) callbacks(name string) []kgo.Opt {
	return []kgo.Opt{
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			o.mu.Lock()
			defer o.mu.Unlock()
			for _, p := range m[o.topic] {
				o.owner[p] = name
			}
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { o.drop(name, m[o.topic]) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { o.drop(name, m[o.topic]) }),
	}
}

func (o *owners) drop(name string, parts []int32) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, p := range parts {
		if o.owner[p] == name {
			delete(o.owner, p)
		}
	}
}

// settled says whether all partitions are owned, only by members in live,
// and every member of live owns at least one.
func (o *owners) settled(partitions int, live map[string]bool) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.owner) != partitions {
		return false
	}
	has := map[string]bool{}
	for _, m := range o.owner {
		if !live[m] {
			return false
		}
		has[m] = true
	}
	return len(has) == len(live)
}

// waitSettled polls settled every millisecond, up to limit; it returns
// when it first held.
func (o *owners) waitSettled(partitions int, live map[string]bool, limit time.Duration) (time.Time, bool) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if o.settled(partitions, live) {
			return time.Now(), true
		}
		time.Sleep(time.Millisecond)
	}
	return time.Time{}, false
}

// member is a group member polling in the background.
type member struct {
	cl   *kgo.Client
	done chan struct{}
}

func startMember(b *broker, group, topic, name string, o *owners, opts ...kgo.Opt) *member {
	base := []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID(name),
		kgo.HeartbeatInterval(100 * time.Millisecond), kgo.FetchMaxWait(500 * time.Millisecond)}
	m := &member{cl: b.client(append(append(base, o.callbacks(name)...), opts...)...), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for !m.cl.PollFetches(context.Background()).IsClientClosed() {
		}
	}()
	return m
}

func (m *member) close() {
	m.cl.Close()
	<-m.done
}

// closeAll closes members in parallel.
func closeAll(ms []*member) {
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.close()
		}()
	}
	wg.Wait()
}

// cutter dials connections it can cut all at once, later dials failing:
// a member that dies without a word.
type cutter struct {
	mu    sync.Mutex // guards conns and cut
	conns []net.Conn
	cut   bool
}

func (c *cutter) dial(ctx context.Context, network, host string) (net.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return nil, net.ErrClosed
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, host)
	if err == nil {
		c.conns = append(c.conns, conn)
	}
	return conn, err
}

func (c *cutter) cutAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	for _, conn := range c.conns {
		conn.Close()
	}
}
