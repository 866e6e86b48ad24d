package config

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"
)

func init() {
	RegisterBroker(
		Def{Name: "test.retention.ms", Type: Long, Default: "1000", Min: -1},
		Def{Name: "test.flag", Type: Boolean, Default: "false"},
		Def{Name: "test.fixed", Type: Short, Default: "1", Min: 1, ReadOnly: true},
	)
	RegisterTopic(
		Def{Name: "test.topic.retention.ms", Type: Long, Default: "5", BrokerName: "test.retention.ms", Min: -1},
		Def{Name: "test.policy", Type: List, Default: "delete", Enum: []string{"delete", "compact"}},
		Def{Name: "test.syntax", Type: String, Default: "", Check: func(v string) error {
			if strings.Contains(v, "!") {
				return errors.New("no exclamation marks")
			}
			return nil
		}},
	)
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name, value, wantErr string
	}{
		{"test.topic.retention.ms", "-1", ""},
		{"test.topic.retention.ms", "-2", "below the minimum -1"},
		{"test.topic.retention.ms", "x", "not an integer"},
		{"test.policy", "compact,delete", ""},
		{"test.policy", "compact,gone", "not one of delete, compact"},
		{"test.syntax", "hi!", "no exclamation marks"},
		{"test.unknown", "1", "unknown config test.unknown"},
	} {
		err := ValidateTopic(map[string]string{tc.name: tc.value})
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%s=%s: %v", tc.name, tc.value, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s=%s: got %v, want ErrInvalid with %q", tc.name, tc.value, err, tc.wantErr)
		}
		if err != nil && tc.name != "test.unknown" && !strings.Contains(err.Error(), tc.name) {
			t.Errorf("error %q does not name the config", err)
		}
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("registering a name twice did not panic")
		}
	}()
	RegisterBroker(Def{Name: "test.flag", Type: Boolean, Default: "false"})
}

func TestResolveOrder(t *testing.T) {
	d, _ := TopicDef("test.topic.retention.ms")
	for _, tc := range []struct {
		own, broker map[string]string
		want        string
		src         Source
	}{
		{nil, nil, "1000", SourceDefault}, // the broker config's default wins over the topic def's
		{nil, map[string]string{"test.retention.ms": "7"}, "7", SourceDynamicBroker},
		{map[string]string{"test.topic.retention.ms": "9"}, map[string]string{"test.retention.ms": "7"}, "9", SourceTopic},
	} {
		if v, src := ResolveTopic(d, tc.own, tc.broker); v != tc.want || src != tc.src {
			t.Errorf("ResolveTopic(%v, %v) = %s, %d; want %s, %d", tc.own, tc.broker, v, src, tc.want, tc.src)
		}
	}
}

func TestValuesTyped(t *testing.T) {
	v := Topic(map[string]string{"test.topic.retention.ms": "250"}, map[string]string{"test.flag": "true"})
	if got := v.Millis("test.topic.retention.ms"); got != 250*time.Millisecond {
		t.Errorf("Millis = %v", got)
	}
	b := Broker(map[string]string{"test.flag": "true", "test.retention.ms": "not a number"})
	if !b.Bool("test.flag") {
		t.Error("Bool(test.flag) = false")
	}
	// A stored value that no longer validates reads as the default.
	if got := b.Int("test.retention.ms"); got != 1000 {
		t.Errorf("Int of a bad stored value = %d, want the default 1000", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("reading an unregistered name did not panic")
		}
	}()
	b.Int("test.nope")
}

// fakeStore is a BrokerStore in memory whose writes can be held and can
// lose their compare-and-swap to a write made "elsewhere".
type fakeStore struct {
	mu      sync.Mutex
	cfg     map[string]string
	version int64
	hold    chan struct{} // when set, SetBrokerConfig waits for it
	entered chan struct{}
	racer   map[string]string // written by "another broker" before the next CAS
}

var errConflict = errors.New("conflict")

func (s *fakeStore) BrokerConfig(context.Context) (map[string]string, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.cfg), s.version, nil
}

func (s *fakeStore) SetBrokerConfig(_ context.Context, cfg map[string]string, version int64) error {
	if s.hold != nil {
		s.entered <- struct{}{}
		<-s.hold
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.racer != nil {
		s.cfg, s.racer = s.racer, nil
		s.version++
	}
	if version != s.version {
		return errConflict
	}
	s.cfg = maps.Clone(cfg)
	s.version++
	return nil
}

func isConflict(err error) bool { return errors.Is(err, errConflict) }

func set(kv ...string) Edit {
	return func(cur map[string]string) (map[string]string, error) {
		if cur == nil {
			cur = map[string]string{}
		}
		for i := 0; i < len(kv); i += 2 {
			cur[kv[i]] = kv[i+1]
		}
		return cur, nil
	}
}

func TestDynamicSet(t *testing.T) {
	ctx := context.Background()
	st := &fakeStore{}
	d, err := NewDynamic(ctx, st, isConflict)
	if err != nil {
		t.Fatal(err)
	}
	var seen []map[string]string
	d.OnChange(func(m map[string]string) { seen = append(seen, m) })

	if err := d.Set(ctx, set("test.flag", "maybe"), false); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad value: %v", err)
	}
	if err := d.Set(ctx, set("test.fixed", "2"), false); !errors.Is(err, ErrInvalid) {
		t.Fatalf("read-only config: %v", err)
	}
	if err := d.Set(ctx, set("test.flag", "true"), true); err != nil || d.Values().Bool("test.flag") {
		t.Fatalf("validateOnly changed something: %v", err)
	}
	if err := d.Set(ctx, set("test.flag", "true"), false); err != nil {
		t.Fatal(err)
	}
	if !d.Values().Bool("test.flag") || len(seen) != 1 || seen[0]["test.flag"] != "true" {
		t.Fatalf("after Set: flag %v, OnChange saw %v", d.Values().Bool("test.flag"), seen)
	}

	// Another broker changed the configs since we loaded them: the edit is
	// applied on top of its change, not over it.
	st.racer = map[string]string{"test.flag": "true", "test.retention.ms": "42"}
	if err := d.Set(ctx, set("test.flag", "false"), false); err != nil {
		t.Fatal(err)
	}
	got := d.Map()
	if got["test.retention.ms"] != "42" || got["test.flag"] != "false" {
		t.Fatalf("after a lost compare-and-swap: %v", got)
	}
}

// TestDynamicReadersDoNotWaitForWrites holds a Set inside the store's I/O
// and reads meanwhile: readers load a snapshot and never take the writer's
// lock.
func TestDynamicReadersDoNotWaitForWrites(t *testing.T) {
	ctx := context.Background()
	st := &fakeStore{hold: make(chan struct{}), entered: make(chan struct{})}
	d, err := NewDynamic(ctx, st, isConflict)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- d.Set(ctx, set("test.flag", "true"), false) }()
	<-st.entered
	if d.Values().Bool("test.flag") || len(d.Map()) != 0 { // would hang if readers took the lock
		t.Fatal("a write in flight is visible before it committed")
	}
	close(st.hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !d.Values().Bool("test.flag") {
		t.Fatal("the write is not visible after it committed")
	}
}
