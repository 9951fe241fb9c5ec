package robotstxt

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/robots"
)

// Cache holds the robots.txt history and verdict of each origin (scheme
// and authority: see Origin), split by partition.
//
// Only the worker holding a host's lease fetches its robots.txt, so the
// history and fetch state of an entry (pending redirect, hops) have one
// writer at a time; the verdict is read by every worker admitting links to
// the host, through an atomic pointer.
type Cache struct {
	hosts *hostmap.Map[*entry]
	retry robots.Retry
	// runStart, set in a crawl that ends, is when it started: a robots.txt
	// that became unreachable since (its last attempt failed) holds the
	// host disallowed until the crawl ends, rather than until its retry,
	// which may come before the host's clock allows the request (a 503
	// with an hour's Retry-After): a verdict that expired first would let
	// the host's late links in, to wait out that clock and hold the crawl.
	runStart time.Time
	// maxDelay, if positive, is the longest Crawl-delay the crawl waits:
	// a host asking for more is refused (robots.DelayRefusedPolicy).
	maxDelay time.Duration
}

// endOfRun is the until of a verdict that holds to the end of the crawl.
var endOfRun = time.Unix(1<<40, 0)

type entry struct {
	verdict atomic.Pointer[verdict]
	hist    robots.History // what the fetches said; the lease holder's
	// Fetch state of the redirect chain, touched by one lease at a time:
	// the host's own, or (while waiting is set and the host is parked) the
	// lease of the host a hop crossed to.
	pending string // next URL of the chain on this host; "" means /robots.txt
	hops    int
	next    logged      // what the log line of the chain's next request says of it, once it has redirected
	waiting atomic.Bool // a hop is queued on another host; this host is parked
	chain   atomic.Bool // pending is set: the entry is in use, not evicted
	stored  bool        // the store was asked for an earlier run's history
}

// verdict is robots.History.Verdict's answer: judge the host's URLs by
// pol until until; with no pol, fetch the file at until (now if zero).
type verdict struct {
	pol   *robots.Policy
	until time.Time
}

// CacheConfig is how a Cache keeps and judges the origins' files.
type CacheConfig struct {
	// Partitions and Bound: at most Bound origins' entries are kept in
	// memory (0: no bound), over Partitions locks, least recently used
	// evicted first. An evicted entry is only forgotten: its history,
	// with the raw body of its last good file, is in the store (decide
	// writes it), and the next lease of the host reads it back and parses
	// the file again (Ensure). An entry half way through a redirect chain
	// is in use and stays.
	Partitions, Bound int
	Retry             robots.Retry
	// RunStart is when a crawl that ends started (zero for one that never
	// ends): a robots.txt found unreachable since holds its host
	// disallowed to the crawl's end.
	RunStart time.Time
	// MaxCrawlDelay, if positive, is the longest Crawl-delay the crawl
	// waits between two requests to a host: a host whose file asks for
	// more is not crawled (robots.DelayRefusedPolicy). Zero honours any.
	MaxCrawlDelay time.Duration
}

// NewCache returns an empty cache kept and judged as cfg says.
func NewCache(cfg CacheConfig) *Cache {
	return &Cache{hosts: hostmap.NewBounded[*entry](cfg.Partitions, cfg.Bound, nil), retry: cfg.Retry, runStart: cfg.RunStart,
		maxDelay: cfg.MaxCrawlDelay}
}

// Pinned says the entry is half way through a redirect chain: it stays
// in memory until the chain ends (hostmap.Pinned).
func (e *entry) Pinned() bool { return e.chain.Load() || e.waiting.Load() }

// Origin names the robots.txt a URL is judged by, scheme://authority:
// a file applies to the scheme, host and port it is served from (Google's
// documentation says so; RFC 9309 puts it at the top of its "service"), so
// http://a.test/ and https://a.test/ each have their own. Everything else
// of a host, its politeness clock first, is keyed by authority alone: the
// two schemes are one server.
func Origin(scheme, authority string) string { return scheme + "://" + authority }

// splitOrigin returns the scheme and authority of an Origin.
func splitOrigin(origin string) (scheme, authority string) {
	scheme, authority, _ = strings.Cut(origin, "://")
	return scheme, authority
}

// Authority is the authority (the frontier's host) of an Origin.
func Authority(origin string) string {
	_, a := splitOrigin(origin)
	return a
}

// Schemes are the schemes whose robots.txt the crawl fetches.
var Schemes = [...]string{"https", "http"}

// entry returns the origin's entry, creating it.
func (c *Cache) entry(origin string) *entry {
	return c.hosts.Update(origin, func(e *entry) *entry {
		if e == nil {
			e = &entry{}
		}
		return e
	})
}

// Cached returns the policy the origin's URLs are judged by at now, or nil
// if there is none (never fetched, expired, or being retried after a
// failure).
func (c *Cache) Cached(origin string, now time.Time) *robots.Policy {
	e, ok := c.hosts.Get(origin)
	if !ok {
		return nil
	}
	if v := e.verdict.Load(); v != nil && v.pol != nil && now.Before(v.until) {
		return v.pol
	}
	return nil
}

// CachedHost is Cached for the https URLs of authority, else for its http
// ones: what an operator asking about a host most likely means.
func (c *Cache) CachedHost(authority string, now time.Time) *robots.Policy {
	for _, s := range Schemes {
		if pol := c.Cached(Origin(s, authority), now); pol != nil {
			return pol
		}
	}
	return nil
}

// History returns what the fetches of origin's robots.txt said, if the
// origin is in memory. It is the lease holder's: read it only when no
// lease of the host is out (the crawl's end).
func (c *Cache) History(origin string) (robots.History, bool) {
	e, ok := c.hosts.Get(origin)
	if !ok {
		return robots.History{}, false
	}
	return e.hist, true
}

// Len is the number of origins in memory.
func (c *Cache) Len() int { return c.hosts.Len() }

// parked reports whether authority waits for a robots.txt hop made on
// another host, for either of its schemes: the frontier then holds the
// host, every scheme of it.
func (c *Cache) parked(authority string) bool {
	for _, s := range Schemes {
		if e, ok := c.hosts.Get(Origin(s, authority)); ok && e.waiting.Load() {
			return true
		}
	}
	return false
}

// verdictOf sets e's verdict from its history at now. Only the lease holder
// calls it.
func (c *Cache) verdictOf(e *entry, now time.Time) *verdict {
	pol, until := e.hist.Verdict(now, c.retry)
	h := &e.hist
	if !c.runStart.IsZero() && h.Failures >= c.retry.Attempts && !h.LastFailure.Before(c.runStart) &&
		(pol != nil && pol.Outcome == robots.DisallowAll || pol == nil && c.retry.LastGood == 0) {
		// Unreachable, found so in this crawl, which ends: it is not
		// fetched again before the crawl does.
		if pol == nil {
			pol = robots.DisallowAllPolicy(h.Status, h.Err, h.LastFailure)
		}
		until = endOfRun
	}
	if pol != nil && c.maxDelay > 0 && pol.CrawlDelay > c.maxDelay && pol.Outcome != robots.DisallowAll {
		pol = robots.DelayRefusedPolicy(pol, c.maxDelay)
	}
	v := &verdict{pol: pol, until: until}
	e.verdict.Store(v)
	return v
}

// HoldUntil makes the verdict of origin that disallows everything hold
// until at least at, the host's clock after the fetch that decided it: a
// verdict that ended before the clock would let links in that can only
// wait for it (a continuous crawl, whose verdicts expire).
func (c *Cache) HoldUntil(origin string, at time.Time) {
	e, ok := c.hosts.Get(origin)
	if !ok {
		return
	}
	if v := e.verdict.Load(); v != nil && v.pol != nil && v.pol.Outcome == robots.DisallowAll && v.until.Before(at) {
		e.verdict.Store(&verdict{pol: v.pol, until: at})
	}
}
