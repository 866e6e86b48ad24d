//go:build interop

package main

// Differential tests against Apache Kafka itself: one scripted sequence of
// requests goes to a Sediment broker and to a reference Apache Kafka 4.4
// broker, each at a pinned version, and the answers are compared field by
// field. The only differences allowed are the ones listed in
// kafkadiff_allowed_test.go (for people: interop/DIFFERENCES.md).
//
// Requests go out on a plain connection of our own (kafkadiff_wire_test.go)
// rather than through kgo, which would pick its own version and shard or
// answer some requests itself; what the brokers say is what is compared.

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sediment-io/sediment/interop/jvm"
)

// refKafka is the Apache Kafka broker the differential tests of one test
// binary share: it takes about 10 s and a JVM to start.
var refKafka struct {
	once sync.Once
	k    *jvm.Kafka
	err  error
}

// referenceKafka returns the shared reference broker, starting it on first
// use; it stops after the last test of the binary (afterTests).
func referenceKafka(t *testing.T) *jvm.Kafka {
	t.Helper()
	cp := javaClasspath(t)
	refKafka.once.Do(func() {
		dir, err := os.MkdirTemp("", "sediment-kafkadiff-")
		if err != nil {
			refKafka.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		// The one-node defaults of StartKafka and nothing else: Kafka's
		// defaults are what Sediment's mirror.
		k, err := jvm.StartKafka(ctx, cp, jvm.KafkaOptions{Dir: dir, Heap: "512m", StartTimeout: 3 * time.Minute})
		afterTests = append(afterTests, func() {
			if k != nil {
				k.Close()
			}
			os.RemoveAll(dir)
		})
		refKafka.k, refKafka.err = k, err
	})
	if refKafka.err != nil {
		t.Fatalf("reference Apache Kafka: %v", refKafka.err)
	}
	return refKafka.k
}

// diffSide is one of the two brokers of a run, with the state the script
// carries from one of its answers to the next request to it (ids that each
// broker hands out in its own way).
type diffSide struct {
	name  string // "sediment" or "kafka"
	addr  string
	wire  *wireConn
	wire2 *wireConn // for a request that waits while the script goes on

	members       map[string]string // the script's member name -> this broker's member id
	producerID    int64
	producerEpoch int16
}

// diffRun sends a test's script to both brokers and compares the answers.
type diffRun struct {
	t     *testing.T
	sides [2]*diffSide // sediment, kafka
	hits  map[*allowedDiff]bool
}

// newDiffRun starts a Sediment broker with flags beside the shared
// reference Kafka and connects to both.
func newDiffRun(t *testing.T, flags ...string) *diffRun {
	t.Helper()
	k := referenceKafka(t)
	tb := startTestBroker(t, "", flags...)
	d := &diffRun{t: t, hits: map[*allowedDiff]bool{}}
	for i, s := range []*diffSide{{name: "sediment", addr: tb.addr}, {name: "kafka", addr: k.Addr}} {
		for _, w := range []**wireConn{&s.wire, &s.wire2} {
			c, err := dialWire(s.addr)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			t.Cleanup(c.close)
			*w = c
		}
		s.members = map[string]string{}
		d.sides[i] = s
	}
	t.Cleanup(d.checkShown)
	return d
}

// exchange sends to each broker the request build makes for it, compares
// the two answers and returns them, Sediment's first.
func (d *diffRun) exchange(step string, build func(s *diffSide) kmsg.Request) [2]kmsg.Response {
	d.t.Helper()
	var resps [2]kmsg.Response
	for i, s := range d.sides {
		resp, err := s.wire.do(build(s))
		if err != nil {
			d.t.Fatalf("%s: %s: %v", step, s.name, err)
		}
		resps[i] = resp
	}
	d.compareNamed(step, resps)
	return resps
}

// join sends member's JoinGroup and remembers, before comparing, the
// member id each broker gave it.
func (d *diffRun) join(step, group, member, topic string) [2]kmsg.Response {
	d.t.Helper()
	var resps [2]kmsg.Response
	for i, s := range d.sides {
		resp, err := s.wire.do(s.joinReq(group, member, topic))
		if err != nil {
			d.t.Fatalf("%s: %s: %v", step, s.name, err)
		}
		s.learnMember(member, resp)
		resps[i] = resp
	}
	d.compareNamed(step, resps)
	return resps
}

// start sends each broker its request on the second connection and goes
// on; the returned function waits for both answers (a JoinGroup or a
// follower's SyncGroup, which wait for the rest of the group) and compares
// them.
func (d *diffRun) start(step string, build func(s *diffSide) kmsg.Request) func() [2]kmsg.Response {
	d.t.Helper()
	type answer struct {
		resp kmsg.Response
		err  error
	}
	var chans [2]chan answer
	for i, s := range d.sides {
		chans[i] = make(chan answer, 1)
		req := build(s)
		go func() {
			resp, err := s.wire2.do(req)
			chans[i] <- answer{resp, err}
		}()
	}
	return func() [2]kmsg.Response {
		d.t.Helper()
		var resps [2]kmsg.Response
		for i, s := range d.sides {
			a := <-chans[i] // bounded by the connection's 30 s deadline
			if a.err != nil {
				d.t.Fatalf("%s: %s: %v", step, s.name, a.err)
			}
			resps[i] = a.resp
		}
		d.compareNamed(step, resps)
		return resps
	}
}

// compareNamed compares the answers with every member id the script knows
// replaced by its name in the script: each broker draws its own ids, and
// which member is which is what must match.
func (d *diffRun) compareNamed(step string, resps [2]kmsg.Response) {
	d.t.Helper()
	for i, s := range d.sides {
		renameStrings(reflect.ValueOf(resps[i]), s.idNames())
	}
	d.compare(step, resps[0], resps[1])
}

// idNames maps this broker's member ids to the script's names.
func (s *diffSide) idNames() map[string]string {
	m := map[string]string{}
	for name, id := range s.members {
		m[id] = "<" + name + ">"
	}
	return m
}

// same sends one request, identical for both brokers.
func (d *diffRun) same(step string, req func() kmsg.Request) [2]kmsg.Response {
	d.t.Helper()
	return d.exchange(step, func(*diffSide) kmsg.Request { return req() })
}

// compare fails the test for every difference the allowed list does not
// excuse, naming the step and the field's path.
func (d *diffRun) compare(step string, sed, kafka kmsg.Response) {
	d.t.Helper()
	var unexplained []string
	for _, fd := range diffResponses(sed, kafka) {
		if a := findAllowed(step, fd); a != nil {
			d.hits[a] = true
			continue
		}
		unexplained = append(unexplained, fmt.Sprintf("%s: sediment %s, kafka %s", fd.path, fd.a, fd.b))
	}
	if len(unexplained) > 0 {
		d.t.Errorf("%s (key %d v%d): %d difference(s) from Apache Kafka not in the allowed list:\n  %s",
			step, sed.Key(), sed.GetVersion(), len(unexplained), strings.Join(unexplained, "\n  "))
	}
}

// checkShown fails the test when a difference listed as shown by this test
// no longer appears: it was fixed, and the list must say so.
func (d *diffRun) checkShown() {
	for i := range allowedDiffs {
		a := &allowedDiffs[i]
		if a.Test == d.t.Name() && !d.hits[a] && !d.t.Failed() {
			d.t.Errorf("allowed difference %q at %q (%s) is listed as shown by %s but did not appear: remove it from kafkadiff_allowed_test.go and interop/DIFFERENCES.md",
				a.Step, a.Path, a.Reason, a.Test)
		}
	}
}

// waitTopics waits, without comparing, until both brokers lead every
// partition of topics: Kafka's controller creates a topic asynchronously
// and its broker serves it a moment after CreateTopics answers.
func (d *diffRun) waitTopics(topics ...string) {
	d.t.Helper()
	for _, s := range d.sides {
		deadline := time.Now().Add(30 * time.Second)
		for !s.leadsAll(topics) {
			if time.Now().After(deadline) {
				d.t.Fatalf("%s: topics %v not ready after 30s", s.name, topics)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// leadsAll says whether Metadata shows every partition of topics led.
func (s *diffSide) leadsAll(topics []string) bool {
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	for _, name := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	r, err := s.wire.do(req)
	if err != nil {
		return false
	}
	for _, mt := range r.(*kmsg.MetadataResponse).Topics {
		if mt.ErrorCode != 0 || len(mt.Partitions) == 0 {
			return false
		}
		for _, p := range mt.Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				return false
			}
		}
	}
	return true
}

// diffTopic is a topic name unique to the test: the reference broker is
// shared by every test of the binary.
func diffTopic(t *testing.T, suffix string) string {
	name := strings.NewReplacer("/", "-", "_", "-").Replace(strings.TrimPrefix(t.Name(), "TestInteropDiff"))
	return strings.ToLower("diff-" + name + "-" + suffix)
}

// settle sends req to each broker, without comparing, until ready says
// the answer is the steady one: the reference broker loads its
// coordinators (groups, producer ids) in the background after start-up.
func (d *diffRun) settle(what string, req func(s *diffSide) kmsg.Request, ready func(kmsg.Response) bool) {
	d.t.Helper()
	for _, s := range d.sides {
		d.settleOn(s, what, req, ready)
	}
}

// settleOn is settle on one broker.
func (d *diffRun) settleOn(s *diffSide, what string, req func(s *diffSide) kmsg.Request, ready func(kmsg.Response) bool) {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := s.wire.do(req(s))
		if err == nil && ready(resp) {
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("%s: %s not ready after 60s (last error %v)", s.name, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
