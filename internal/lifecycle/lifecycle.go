// Package lifecycle holds where a crawl is in its life, for the goroutines
// that ask it for work or answers (its operator, its cluster, external
// fetchers), and the gate its workers wait at while an operator has paused
// it.
package lifecycle

import (
	"context"
	"errors"
	"sync"
)

// ErrNotRunning is returned for work or a question a crawl no longer
// takes, or does not take yet.
var ErrNotRunning = errors.New("lifecycle: the crawl is not running")

// Phase is where a crawl is in its life: it takes work while Running (from
// Run's seeds to its end), its frontier answers once FrontierUp (Run
// started it; once it returned, it answers from its last snapshot), and
// its store can be read until Closed.
type Phase struct {
	Running    bool
	Closed     bool
	FrontierUp bool
}

// State is a crawl's Phase, safe for concurrent use. A reader holds it
// (Hold) while it works, so that Set, which changes it, waits for the
// readers it would pull the ground from under. Its zero value is a crawl
// not yet running.
type State struct {
	mu sync.RWMutex
	p  Phase
}

// Hold returns the phase and keeps it so until Release: Set waits. A
// reader must not Hold again before it releases, nor call Set.
func (s *State) Hold() Phase {
	s.mu.RLock()
	return s.p
}

// Release ends a Hold.
func (s *State) Release() { s.mu.RUnlock() }

// Now returns the phase at this moment, holding it no longer.
func (s *State) Now() Phase {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.p
}

// Set changes the phase with f, once no reader holds it.
func (s *State) Set(f func(p *Phase)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.p)
}

// Gate holds workers while a crawl is paused. Its zero value is open.
type Gate struct {
	mu   sync.Mutex
	shut bool
	open chan struct{} // closed when the gate opens; nil while it is open
}

// Set shuts the gate (shut) or opens it. Setting it as it is does nothing.
func (g *Gate) Set(shut bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case shut && !g.shut:
		g.open = make(chan struct{})
	case !shut && g.shut:
		close(g.open)
		g.open = nil
	}
	g.shut = shut
}

// Shut reports whether the gate is shut: the crawl is paused.
func (g *Gate) Shut() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shut
}

// Wait returns when the gate is open, or with ctx's error.
func (g *Gate) Wait(ctx context.Context) error {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	if open == nil {
		return nil
	}
	select {
	case <-open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
