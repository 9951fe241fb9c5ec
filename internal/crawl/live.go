package crawl

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/state"
	"github.com/weft-crawler/weft/internal/store"
)

// Live is what a running crawl can tell an operator at any moment: its
// counters so far, its frontier, and whether it is paused.
type Live struct {
	Summary
	Frontier frontier.Stats
	Paused   bool
	// Outcomes counts the page fetches by outcome, as the fetch log says
	// ("ok", "redirect", "revisit", "not-modified", "external",
	// "error:KIND", ...).
	Outcomes map[string]int64
	// Stored counts the URLs in the durable queues (front queues and
	// hosts' tails, the leases out included): the store's count, exact
	// from the first moment of a restart, where Frontier.Queued counts
	// an earlier run's URLs only as they are read back. Nil while the
	// state of an older weft, kept without a count, is being counted.
	Stored *int64
}

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

func (c *Crawler) setRunning(on bool) {
	c.liveMu.Lock()
	c.running = on
	c.liveMu.Unlock()
	if on {
		c.readyOnce.Do(func() { close(c.ready) })
	}
}

// Ready is closed once Run takes work (Offer, Adopt, AddSeeds): its store
// is open and its seeds are in.
func (c *Crawler) Ready() <-chan struct{} { return c.ready }

// Done is closed once the crawl has stopped taking work for good: Run has
// ended, or the Crawler was discarded. It may close without Ready having.
func (c *Crawler) Done() <-chan struct{} { return c.done }

// Discard releases what New opened, for a Crawler that will not Run.
func (c *Crawler) Discard() error {
	c.liveMu.Lock()
	c.closed = true
	c.liveMu.Unlock()
	c.doneOnce.Do(func() { close(c.done) })
	return c.close(0) // a crawl that never ran: its backlog of uploads waits for the next start
}

// maxURLScan bounds the records one URLs call reads looking for a status.
const maxURLScan = 100_000

// Offered is a URL handed to the node that owns its host.
type Offered = state.Offered

// Partitions is the crawl's partition count: the one its state was
// created with, whatever Config said.
func (c *Crawler) Partitions() int { return c.cfg.Partitions }

// Verdict is what became of a URL offered as a seed.
type Verdict struct {
	URL    string // canonical when it parsed, else as given
	Reason string // "" when accepted; else a Reject* reason
	// Err says more of a judge.Invalid or judge.Filter, when there is
	// more to say: a *SeedError (wrapping the canonicaliser's *canon.Error
	// or ErrNotHTTP), or the filter's *scope.FilterError.
	Err error
}

// ErrNotHTTP is what a Verdict's Err wraps for a URL whose scheme is not
// http or https.
var ErrNotHTTP = errors.New("only http and https URLs are crawled")

// ErrNotRunning is returned by AddSeeds once the crawl has stopped.
var ErrNotRunning = errors.New("crawl: not running")

// ErrStopping is what Cluster.Forward wraps when it gives up because its
// process is stopping.
var ErrStopping = errors.New("stopping")

// HostStatus is what the crawl knows of one host now.
type HostStatus struct {
	Host string
	// Known: the frontier, the robots.txt cache or the host cap knows it.
	Known    bool
	Frontier frontier.HostInfo
	// Gap is the least time between two requests to it now:
	// max(--delay, Crawl-delay, backoff).
	Gap time.Duration
	// Robots is the robots.txt answer its https URLs are judged by now,
	// else its http URLs' (each scheme has its own file), nil if there is
	// none (never fetched, expired, or failing and retried).
	Robots *robots.Policy
	// Accepted counts the URLs accepted for it this run (the host cap's
	// count).
	Accepted int64
}

// frontierUp reports whether the frontier answers questions: its Run has
// started (once it returned, it answers from its last snapshot).
func (c *Crawler) frontierUp() bool {
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	return c.frontUp
}

// Fetch is one line of the fetch log, as the operator API shows it.
type Fetch = fetchlog.Record

// Page is what the crawl holds of one URL: its record and its captures
// in the capture index, newest first (at most maxPageCaptures).
type Page struct {
	Record   store.URLRecord
	Captures []store.CaptureRecord
}

const maxPageCaptures = 20

// ErrUnknownURL is returned by Page for a URL the crawl has no record of.
var ErrUnknownURL = errors.New("crawl: no such URL")
