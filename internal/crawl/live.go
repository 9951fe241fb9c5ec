package crawl

import (
	"context"
	"sync"

	"weft/internal/frontier"
)

// Live is what a running crawl can tell an operator at any moment: its
// counters so far, its frontier, and whether it is paused.
type Live struct {
	Summary
	Frontier frontier.Stats
	Paused   bool
}

// Live returns a snapshot of the crawl, from New on. It is safe to call
// from any goroutine.
func (c *Crawler) Live() Live {
	sum := c.summary()
	fs := c.front.Stats()
	sum.Queued = fs.Queued + fs.InFlight
	return Live{Summary: sum, Frontier: fs, Paused: c.pause.paused()}
}

// Pause stops the workers taking new leases; the fetches in flight finish,
// the queues and every host's clock are kept, and the recrawl scanner goes
// on. Pausing a paused crawl does nothing.
func (c *Crawler) Pause() { c.pause.set(true) }

// Resume lets the workers take leases again.
func (c *Crawler) Resume() { c.pause.set(false) }

// gate holds the workers while the crawl is paused.
type gate struct {
	mu   sync.Mutex
	shut bool
	open chan struct{} // closed when the gate opens; nil while it is open
}

func (g *gate) set(shut bool) {
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

func (g *gate) paused() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shut
}

// wait returns when the gate is open, or with ctx's error.
func (g *gate) wait(ctx context.Context) error {
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

// Discard releases what New opened, for a Crawler that will not Run.
func (c *Crawler) Discard() error { return c.close() }
