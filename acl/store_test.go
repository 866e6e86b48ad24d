package acl_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/acl"
	"github.com/sediment-io/sediment/metadata"
	"github.com/sediment-io/sediment/metadata/etcdkv/etcdtest"
)

func onBothBackends(t *testing.T, body func(t *testing.T, kv metadata.KV)) {
	t.Run("bbolt", func(t *testing.T) {
		kv, err := metadata.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { kv.Close() })
		body(t, kv)
	})
	t.Run("etcd", func(t *testing.T) {
		endpoint, _ := etcdtest.Start(t)
		body(t, etcdtest.OpenKV(t, endpoint, "acl"))
	})
}

// syncBuffer is a log destination safe for the test to read.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSpace(s.b.String()), "\n")
}

// CreateAcls and DeleteAcls through the store: per-binding results with
// Kafka's codes, one audit line per change, and an authorizer loaded from
// what is stored deciding by it.
func TestStoreCreateDeleteAuthorize(t *testing.T) {
	onBothBackends(t, func(t *testing.T, kv metadata.KV) {
		ctx := context.Background()
		var logBuf syncBuffer
		s := acl.NewStore(metadata.NewStore(kv), acl.LogAudit(slog.New(slog.NewTextHandler(&logBuf, nil))))
		writeA := b(topic, "a", literal, "User:alice", "*", acl.OpWrite, allow)
		readG := b(group, "g", literal, "User:alice", "*", acl.OpRead, allow)
		denyB := b(topic, "b", prefix, "User:*", "*", acl.OpAll, deny)
		bad := b(topic, "", literal, "User:alice", "*", acl.OpRead, allow)
		errs := s.Create(ctx, "User:admin", []acl.Binding{writeA, bad, readG, denyB, writeA})
		for i, want := range []error{nil, kerr.InvalidRequest, nil, nil, nil} {
			if (want == nil) != (errs[i] == nil) || (want != nil && !errors.Is(errs[i], want)) {
				t.Fatalf("create result %d: %v, want %v", i, errs[i], want)
			}
		}
		if lines := logBuf.lines(); len(lines) != 3 || !strings.Contains(lines[0], "action=create") ||
			!strings.Contains(lines[0], "by=User:admin") {
			t.Fatalf("audit after create: %q", lines)
		}

		a, err := acl.NewAuthorizer(acl.Config{SuperUsers: []string{"User:admin"}})
		if err != nil {
			t.Fatal(err)
		}
		load := func() {
			t.Helper()
			bindings, rev, err := s.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			a.Replace(bindings, rev)
			if cur, err := s.Revision(ctx); err != nil || cur != rev {
				t.Fatalf("revision %d, loaded %d: %v", cur, rev, err)
			}
		}
		load()
		for _, c := range []check{
			{"alice", "10.0.0.1", acl.OpWrite, topic, "a", true},
			{"alice", "10.0.0.1", acl.OpDescribe, topic, "a", true},
			{"alice", "10.0.0.1", acl.OpRead, topic, "a", false},
			{"alice", "10.0.0.1", acl.OpRead, group, "g", true},
			{"alice", "10.0.0.1", acl.OpWrite, topic, "b1", false},
			{"alice", "10.0.0.1", acl.OpCreate, acl.ResourceCluster, acl.ClusterName, false},
			{"admin", "10.0.0.1", acl.OpWrite, topic, "b1", true},
		} {
			if got := a.Authorize("User:"+c.user, c.host, c.op, c.rt, c.name); got != c.want {
				t.Errorf("%s %s %s %q: %v, want %v", c.user, c.op, c.rt, c.name, got, c.want)
			}
		}
		if got := a.ACLs(acl.MatchAll); len(got) != 3 {
			t.Fatalf("described %v", got)
		}

		topics := acl.MatchAll
		topics.ResourceType = topic
		alices := acl.MatchAll
		alices.Principal = new(string)
		*alices.Principal = "User:alice"
		unknown := acl.MatchAll
		unknown.Operation = acl.OpUnknown
		if got, err := s.Describe(ctx, topics); err != nil || len(got) != 2 {
			t.Fatalf("describe topics: %v %v", got, err)
		}
		if _, err := s.Describe(ctx, unknown); !errors.Is(err, kerr.InvalidRequest) {
			t.Fatalf("describe with an unknown operation: %v", err)
		}
		res := s.Delete(ctx, "User:admin", []acl.Filter{topics, alices, unknown})
		if res[0].Err != nil || len(res[0].Deleted) != 2 || res[1].Err != nil || len(res[1].Deleted) != 2 ||
			!errors.Is(res[2].Err, kerr.InvalidRequest) {
			t.Fatalf("delete: %+v", res)
		}
		if lines := logBuf.lines(); len(lines) != 6 || !strings.Contains(lines[5], "action=delete") {
			t.Fatalf("audit after delete: %q", lines)
		}
		load()
		if got := a.ACLs(acl.MatchAll); len(got) != 0 {
			t.Fatalf("left %v", got)
		}
		if a.Authorize("User:alice", "10.0.0.1", acl.OpWrite, topic, "a") {
			t.Fatal("deleted ACL still allows")
		}
	})
}
