package crawl

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"weft/internal/canon"
	"weft/internal/fetch"
	"weft/internal/frontier"
	"weft/internal/robots"
)

// robotsCache holds each host's robots.txt policy, split by partition.
//
// Only the worker holding a host's lease fetches its robots.txt, so the fetch
// state of an entry (pending redirect, hops) has one writer at a time; the
// policy itself is read by every worker admitting links to the host, through
// an atomic pointer.
type robotsCache struct {
	hosts *hostMap[*robotsEntry]
	ttl   time.Duration
}

type robotsEntry struct {
	policy atomic.Pointer[robots.Policy]
	// Fetch state of the redirect chain, touched by one lease at a time:
	// the host's own, or (while waiting is set and the host is parked) the
	// lease of the host a hop crossed to.
	pending string // next URL of the chain on this host; "" means /robots.txt
	hops    int
	waiting atomic.Bool // a hop is queued on another host; this host is parked
	stored  bool        // the store was asked for an earlier run's answer
}

func newRobotsCache(partitions int, ttl time.Duration) *robotsCache {
	return &robotsCache{hosts: newHostMap[*robotsEntry](partitions), ttl: ttl}
}

// entry returns the host's entry, creating it.
func (c *robotsCache) entry(host string) *robotsEntry {
	return c.hosts.update(host, func(e *robotsEntry) *robotsEntry {
		if e == nil {
			e = &robotsEntry{}
		}
		return e
	})
}

// cached returns the host's policy if one is known and fresh, else nil.
func (c *robotsCache) cached(host string, now time.Time) *robots.Policy {
	e, ok := c.hosts.get(host)
	if !ok {
		return nil
	}
	if pol := e.policy.Load(); pol != nil && pol.Fresh(now, c.ttl) {
		return pol
	}
	return nil
}

// robotsMaxHops is RFC 9309's "at least five" redirects.
const robotsMaxHops = 5

// ensureRobots makes sure the leased host has a fresh robots.txt policy. It
// returns the policy, or nil and the result to complete the lease with when
// the lease was spent on robots.txt (the file, or one hop of its redirect
// chain). Each request of the chain is made under a lease of the host it goes
// to, so every one of them waits for that host's clock: a hop on the same
// host waits for the next lease of this host; a hop to another host is queued
// there (Item.RobotsFor) and this host is parked until it is done.
func (cr *Crawler) ensureRobots(ctx context.Context, l frontier.Lease, u canon.URL) (*robots.Policy, frontier.Result) {
	e := cr.robots.entry(l.Host)
	if e.policy.Load() == nil && e.pending == "" && !e.stored {
		// Not seen in this process: an earlier run may have fetched it.
		e.stored = true
		pol, err := cr.state.getRobots(l.Host, cr.token)
		if err != nil {
			cr.fail(fmt.Errorf("crawl: read the robots.txt of %s: %w", l.Host, err))
		}
		if pol != nil {
			e.policy.Store(pol)
		}
	}
	if pol := e.policy.Load(); pol != nil && pol.Fresh(time.Now(), cr.cfg.RobotsTTL) && e.pending == "" {
		return pol, frontier.Result{}
	}
	if e.waiting.Load() { // cannot happen while parked; never fetch twice
		return nil, frontier.Result{Retry: true, Park: true}
	}
	target := e.pending
	if target == "" {
		target = u.Scheme + "://" + u.Authority + "/robots.txt"
		e.hops = 0
	}
	res := cr.robotsStep(ctx, l.Host, e, target)
	// The URL goes back to the head of its host's queue either way.
	res.Retry = true
	if pol := e.policy.Load(); pol != nil && pol.Outcome == robots.DisallowAll && e.pending == "" && !res.Park {
		// Decided: nothing of this host will be requested. Its queue is
		// dropped at once, not one URL per gap (a 503 may have asked for
		// an hour).
		res.Drain = frontier.DrainStart
	}
	return nil, res
}

// robotsStep makes one request of host's robots.txt chain, to target, under
// the current lease (of target's host). It decides the policy, or records
// the next hop: on host itself (pending) or on another host (a RobotsFor
// item there, with host parked).
func (cr *Crawler) robotsStep(ctx context.Context, host string, e *robotsEntry, target string) frontier.Result {
	now := time.Now()
	cr.stats.robots.Add(1)
	resp, err := cr.fetcher.Get(ctx, target, nil)
	if err != nil {
		kind := fetch.KindOf(err)
		fetched, signal := errorSignal(kind)
		if kind == fetch.KindCanceled && ctx.Err() != nil {
			return frontier.Result{Fetched: true} // shutting down: decide nothing
		}
		cr.log.Info("robots.txt unreachable", "host", host, "url", target, "err", err)
		pol := robots.DisallowAllPolicy(0, kind.String()+": "+err.Error(), now)
		cr.decideRobots(host, e, pol, kind.String(), nil)
		return frontier.Result{Fetched: fetched, Signal: signal, Took: time.Since(now), SetCrawlDelay: true}
	}
	// Every answer tells the host's clock how the server is doing.
	signal, retryAfter := responseSignal(resp.StatusCode, resp.Header, time.Now())
	answered := frontier.Result{Fetched: true, Signal: signal, RetryAfter: retryAfter, Took: resp.Duration}
	cr.archive(resp)
	cr.stats.bytes.Add(int64(len(resp.Body)))
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Location != "" {
		e.hops++
		if e.hops > robotsMaxHops {
			cr.decideRobots(host, e, robots.NoRulesPolicy(resp.StatusCode, now), "", nil)
			return withCrawlDelay(answered, 0)
		}
		next, err := cr.canon.Parse(resp.Location)
		if err != nil {
			cr.decideRobots(host, e, robots.NoRulesPolicy(resp.StatusCode, now), "", nil)
			return withCrawlDelay(answered, 0)
		}
		cr.stats.robotsHops.Add(1) // a hop that will be followed
		if next.Authority == host {
			e.pending = resp.Location
			return answered
		}
		// The chain crosses to another host: that host's clock (and its
		// own robots.txt, unless the hop is to its /robots.txt) governs
		// the request. Park this host until the hop is done.
		if other := cr.robots.entry(next.Authority); other.waiting.Load() {
			// The other host is itself waiting on a hop: following could
			// close a cycle in which both wait forever.
			cr.decideRobots(host, e, robots.DisallowAllPolicy(resp.StatusCode, "robots.txt redirect cycle through "+next.Authority, now), "redirect-cycle", nil)
			return withCrawlDelay(answered, 0)
		}
		e.pending = ""
		e.waiting.Store(true)
		cr.front.Add(frontier.Item{URL: next.String, Fetch: resp.Location, Host: next.Authority, Priority: frontier.High, RobotsFor: host})
		answered.Park = true
		return answered
	}
	pol := robots.FromStatus(resp.StatusCode, resp.Decoded, cr.token, now)
	switch {
	case resp.DecodeErr != nil && !errors.Is(resp.DecodeErr, fetch.ErrDecodedTooLarge):
		// A body that could not be decoded whole may have lost its
		// Disallow lines: treat the file as unreachable.
		pol = robots.DisallowAllPolicy(resp.StatusCode, "undecodable body: "+resp.DecodeErr.Error(), now)
	case resp.Truncated != "" && resp.Truncated != fetch.TruncatedLength && pol.Outcome == robots.Rules:
		// Cut short by a timeout or a disconnect: same reason. A file cut
		// by the size cap is parsed (RFC 9309 allows a limit >= 500 KiB).
		pol = robots.DisallowAllPolicy(resp.StatusCode, "truncated: "+resp.Truncated, now)
	}
	cr.decideRobots(host, e, pol, statusReason(resp.StatusCode), resp.Decoded)
	return withCrawlDelay(answered, pol.CrawlDelay)
}

// withCrawlDelay sets the host's Crawl-delay in r.
func withCrawlDelay(r frontier.Result, d time.Duration) frontier.Result {
	r.SetCrawlDelay, r.CrawlDelay = true, d
	return r
}

// robotsHop is the lease of a host that another host's robots.txt chain
// redirected to. The request is for the other host's (the owner's)
// robots.txt, made under this host's clock; it needs this host's permission
// unless it asks for this host's own /robots.txt. pol is this host's policy,
// nil when the hop is to its /robots.txt and the policy is not known.
func (cr *Crawler) robotsHop(ctx context.Context, l frontier.Lease, u canon.URL, pol *robots.Policy) frontier.Result {
	owner := cr.robots.entry(l.RobotsFor)
	var res frontier.Result
	if pol != nil { // this host's clock keeps this host's Crawl-delay
		res.SetCrawlDelay, res.CrawlDelay = true, pol.CrawlDelay
	}
	if u.Path != "/robots.txt" && (pol == nil || !pol.Allowed(u.PathQuery())) {
		now := time.Now()
		cr.decideRobots(l.RobotsFor, owner, robots.DisallowAllPolicy(0, "robots.txt redirects to "+u.String+", which its host disallows", now), "redirect-disallowed", nil)
		cr.front.Unpark(l.RobotsFor)
		return res
	}
	owner.waiting.Store(false)
	step := cr.robotsStep(ctx, l.RobotsFor, owner, l.Fetch)
	if !step.Park {
		// Decided, or the next hop is on the owner's own host: either way
		// the owner's next lease goes on. (Park means the chain hopped to
		// yet another host and the owner, still parked, waits for that.)
		cr.front.Unpark(l.RobotsFor)
	}
	res.Fetched = step.Fetched
	return res
}

// decideRobots stores a host's policy, in memory and in the store (with
// body, the file it was parsed from, so that a restart parses it again
// rather than fetching it), and counts its outcome.
func (cr *Crawler) decideRobots(host string, e *robotsEntry, pol *robots.Policy, reason string, body []byte) {
	e.pending, e.hops = "", 0
	e.waiting.Store(false)
	e.policy.Store(pol)
	if pol.Outcome != robots.Rules {
		body = nil
	}
	if err := cr.state.putRobots(host, pol, body); err != nil {
		cr.fail(fmt.Errorf("crawl: record the robots.txt of %s: %w", host, err))
	}
	cr.stats.inc(cr.stats.robotsOutc, pol.Outcome.String(), 1)
	if pol.Outcome == robots.DisallowAll {
		cr.stats.inc(cr.stats.hostsDown, reason, 1)
		cr.log.Info("host not crawled: robots.txt unavailable", "host", host, "status", pol.Status, "err", pol.Err)
	}
}

func statusReason(code int) string {
	if code >= 500 {
		return "robots.txt " + statusClass(code)
	}
	if code == 429 {
		return "robots.txt 429"
	}
	return "robots.txt status " + statusClass(code)
}
