package crawl

import (
	"errors"
	"fmt"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/lifecycle"
	"github.com/weft-crawler/weft/internal/state"
)

// Live is what a running crawl can tell an operator at any moment: its
// counters so far, its frontier, and whether it is paused. Its
// Frontier.Queued counts URLs: the frontier's queue entries less the
// second entries of URLs queued again (Crawler.copiesQueued), as the
// progress line and the summary count them.
type Live struct {
	Summary
	Frontier frontier.Stats
	Paused   bool
	// Outcomes counts the page fetches by outcome, as the fetch log says
	// ("ok", "redirect", "revisit", "not-modified", "external",
	// "error:KIND", ...).
	Outcomes map[string]int64
	// Stored counts the entries in the durable queues (front queues and
	// hosts' tails, the leases out included; a URL queued again has two
	// until one is leased): the store's count, exact
	// from the first moment of a restart, where Frontier.Queued counts
	// an earlier run's URLs only as they are read back. Nil while the
	// state of an older weft, kept without a count, is being counted.
	Stored *int64
	// Recrawl is, in continuous mode with nothing queued or in flight,
	// what the crawl waits for: the next URL coming due again. Nil
	// otherwise, or while it is not known yet.
	Recrawl *RecrawlWait
}

// RecrawlWait is what a continuous crawl with nothing queued or in flight
// waits for: the next URL coming due again, at At.
type RecrawlWait struct {
	At   time.Time
	Text string // in words, as frontier.Wait.Text says what a host's clock makes it wait for
}

// Live returns a snapshot of the crawl, from New on. It is safe to call
// from any goroutine.
func (c *Crawler) Live() Live {
	sum := c.summary()
	var fs frontier.Stats
	if c.life.Now().FrontierUp {
		fs = c.front.Stats() // after its Run, the snapshot it left
	}
	fs.Queued = c.queuedURLs(fs)
	sum.Queued = fs.Queued + fs.InFlight
	sum.WARCFiles, sum.WARCBytes = c.warc.Files(), c.warc.Bytes()
	l := Live{Summary: sum, Frontier: fs, Paused: c.pause.Shut(), Outcomes: c.flog.ByOutcome()}
	if n, ok := c.state.DB.Queued(); ok {
		l.Stored = &n
	}
	l.Recrawl = c.recrawlWait(fs, time.Now())
	return l
}

// recrawlWait is, in continuous mode with nothing queued or in flight,
// what the crawl waits for at now: the next URL coming due again
// (schedule.Recrawler.NextDue), queued by the scan after that.
func (c *Crawler) recrawlWait(fs frontier.Stats, now time.Time) *RecrawlWait {
	if c.cfg.Recrawl == nil || fs.Queued > 0 || fs.InFlight > 0 {
		return nil
	}
	at, ok := c.recrawler.NextDue()
	if !ok {
		return nil
	}
	w := &RecrawlWait{At: at, Text: fmt.Sprintf("%v for the next recrawl (nothing queued)", frontier.RoundWait(at.Sub(now)))}
	if !at.After(now) {
		// Due by the index and not queued: a scan queues it once its
		// schedule allows (a missing sitemap's, say, which the index
		// keeps past its time while its back-off runs), looked at every
		// scan.
		w.Text = fmt.Sprintf("a URL due again by the recrawl index %v ago, not queued yet: its schedule holds it back; looked at every %v",
			frontier.RoundWait(now.Sub(at)), c.cfg.RecrawlScan)
	}
	return w
}

// Pause stops the workers taking new leases; the fetches in flight finish,
// the queues and every host's clock are kept, and the recrawl scanner goes
// on. Pausing a paused crawl does nothing. It is safe to call from any
// goroutine, as Resume is.
func (c *Crawler) Pause() { c.pause.Set(true) }

// Resume lets the workers take leases again.
func (c *Crawler) Resume() { c.pause.Set(false) }

// Recent returns the last fetches (at most 100), newest first.
func (c *Crawler) Recent() []Fetch { return c.flog.Last() }

// setRunning lets Run take work, once its seeds are in.
func (c *Crawler) setRunning() {
	c.life.Set(func(p *lifecycle.Phase) { p.Running = true })
	c.readyOnce.Do(func() { close(c.ready) })
}

// Ready is closed once Run takes work (Offer, Adopt, AddSeeds): its store
// is open and its seeds are in.
func (c *Crawler) Ready() <-chan struct{} { return c.ready }

// Done is closed once the crawl has stopped taking work for good: Run has
// ended, or the Crawler was discarded; nil in a Crawler New did not make.
// It may close without Ready having.
func (c *Crawler) Done() <-chan struct{} { return c.done }

// Discard releases what New opened, for a Crawler that will not Run.
func (c *Crawler) Discard() error {
	c.life.Set(func(p *lifecycle.Phase) { p.Closed = true })
	c.doneOnce.Do(func() { close(c.done) })
	return c.close(0) // a crawl that never ran: its backlog of uploads waits for the next start
}

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
// http or https (canon.ErrNotHTTP).
var ErrNotHTTP = canon.ErrNotHTTP

// SeedError is a seed ParseSeed refused (canon.SeedError).
type SeedError = canon.SeedError

// ErrNotRunning is returned by AddSeeds once the crawl has stopped.
var ErrNotRunning = lifecycle.ErrNotRunning

// ErrStopping is what Cluster.Forward wraps when it gives up because its
// process is stopping.
var ErrStopping = errors.New("stopping")

// Fetch is one line of the fetch log, as the operator API shows it.
type Fetch = fetchlog.Record
