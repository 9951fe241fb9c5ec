package lifecycle

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestStateSetWaitsForHolders: a reader holding the state keeps it as it
// read it: no writer gets in until it releases, and then Set's change is
// what the next reader sees.
func TestStateSetWaitsForHolders(t *testing.T) {
	var s State
	if p := s.Now(); p != (Phase{}) {
		t.Fatalf("zero State: %+v, want a crawl not yet running", p)
	}
	s.Set(func(p *Phase) { p.Running = true })
	ph := s.Hold()
	if !ph.Running {
		t.Fatalf("held phase %+v, want running", ph)
	}
	if s.mu.TryLock() {
		t.Fatal("a writer got in while a reader held the state")
	}
	s.Release()
	done := make(chan struct{})
	go func() {
		s.Set(func(p *Phase) { p.Running, p.Closed = false, true })
		close(done)
	}()
	<-done
	if p := s.Now(); p.Running || !p.Closed {
		t.Fatalf("after Set: %+v, want closed and not running", p)
	}
}

// TestGate: an open gate lets Wait through; a shut one holds it until it
// opens, or until the waiter's context ends; shutting it twice, or
// opening it twice, changes nothing.
func TestGate(t *testing.T) {
	var g Gate
	if g.Shut() || g.Wait(t.Context()) != nil {
		t.Fatal("the zero Gate is not open")
	}
	g.Set(true)
	g.Set(true)
	if !g.Shut() {
		t.Fatal("Set(true) did not shut the gate")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := g.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a shut gate with a cancelled context: %v", err)
	}
	waited := make(chan error)
	go func() { waited <- g.Wait(t.Context()) }()
	select {
	case err := <-waited:
		t.Fatalf("Wait returned %v through a shut gate", err)
	default:
	}
	g.Set(false)
	if err := <-waited; err != nil {
		t.Fatalf("Wait after the gate opened: %v", err)
	}
	g.Set(false)
	if g.Shut() || g.Wait(t.Context()) != nil {
		t.Fatal("opening an open gate shut it")
	}
}
