package mem_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sediment-io/sediment/storage/objectstore"
	"github.com/sediment-io/sediment/storage/objectstore/mem"
)

var errBoom = errors.New("boom")

func put(ctx context.Context, s *mem.Store, key string) error {
	_, err := s.Put(ctx, key, []byte(key), objectstore.Condition{})
	return err
}

func TestFailNextCountsDown(t *testing.T) {
	s := mem.New()
	s.FailNext(mem.OpPut, 2, errBoom)
	for i := range 2 {
		if err := put(t.Context(), s, "k"); !errors.Is(err, errBoom) {
			t.Fatalf("put #%d = %v, want errBoom", i+1, err)
		}
	}
	if _, err := s.Get(t.Context(), "k"); !objectstore.IsNotExist(err) {
		t.Fatalf("Get after failed puts = %v, want IsNotExist: a failed put stores nothing", err)
	}
	if err := put(t.Context(), s, "k"); err != nil {
		t.Fatalf("put #3: %v", err)
	}
	if got := s.Count(mem.OpPut); got != 3 {
		t.Errorf("Count(OpPut) = %d, want 3", got)
	}
	if got := s.Count(mem.OpAny); got != 4 {
		t.Errorf("Count(OpAny) = %d, want 4", got)
	}
}

func TestFailNextAnyAndDefaultError(t *testing.T) {
	s := mem.New()
	s.FailNext(mem.OpAny, 1, nil)
	if _, err := s.Stat(t.Context(), "k"); !errors.Is(err, mem.ErrInjected) {
		t.Fatalf("Stat = %v, want ErrInjected", err)
	}
	if _, err := s.Stat(t.Context(), "k"); !objectstore.IsNotExist(err) {
		t.Fatalf("second Stat = %v, want IsNotExist", err)
	}
}

func TestHangReleasedByCancel(t *testing.T) {
	s := mem.New()
	s.Hang(mem.OpGet)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := s.Get(ctx, "k")
		done <- err
	}()
	if err := put(t.Context(), s, "k"); err != nil {
		t.Fatalf("put while gets hang: %v", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("hung Get = %v, want context.Canceled", err)
	}
}

func TestUnhangReleasesCalls(t *testing.T) {
	s := mem.New()
	if err := put(t.Context(), s, "k"); err != nil {
		t.Fatal(err)
	}
	s.Hang(mem.OpAny)
	done := make(chan error, 1)
	go func() {
		_, err := s.Get(t.Context(), "k")
		done <- err
	}()
	for s.Count(mem.OpGet) == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Unhang()
	if err := <-done; err != nil {
		t.Fatalf("Get released by Unhang: %v", err)
	}
}

func TestSetDown(t *testing.T) {
	s := mem.New()
	s.SetDown(true)
	if err := put(t.Context(), s, "k"); !errors.Is(err, mem.ErrDown) {
		t.Fatalf("put while down = %v, want ErrDown", err)
	}
	if err := s.List(t.Context(), "", "", func(objectstore.Info) bool { return true }); !errors.Is(err, mem.ErrDown) {
		t.Fatalf("List while down = %v, want ErrDown", err)
	}
	s.SetDown(false)
	if err := put(t.Context(), s, "k"); err != nil {
		t.Fatalf("put after recovery: %v", err)
	}
}

func TestLatencyRespectsContext(t *testing.T) {
	s := mem.New()
	s.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := s.Stat(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow Stat = %v, want DeadlineExceeded", err)
	}
}

func TestOnPut(t *testing.T) {
	s := mem.New()
	var seen []string
	s.OnPut(func(key string) { seen = append(seen, key) })
	if err := put(t.Context(), s, "a"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Put(t.Context(), "a", nil, objectstore.Condition{IfAbsent: true})
	if !objectstore.IsPrecondition(err) {
		t.Fatalf("second IfAbsent put = %v, want IsPrecondition", err)
	}
	if len(seen) != 1 || seen[0] != "a" {
		t.Errorf("OnPut saw %q, want only the successful put of a", seen)
	}
}

func TestClosed(t *testing.T) {
	s := mem.New()
	s.Close()
	if err := put(t.Context(), s, "k"); !errors.Is(err, mem.ErrClosed) {
		t.Fatalf("put after Close = %v, want ErrClosed", err)
	}
}
