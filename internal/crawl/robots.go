package crawl

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"weft/internal/canon"
	"weft/internal/fetch"
	"weft/internal/partition"
	"weft/internal/robots"
)

// robotsCache holds each host's robots.txt policy, split by partition.
//
// Only the worker holding a host's lease fetches its robots.txt, so the fetch
// state of an entry (pending redirect, hops) has one writer at a time; the
// policy itself is read by every worker admitting links to the host, through
// an atomic pointer.
type robotsCache struct {
	parts []robotsPart
	ttl   time.Duration
}

type robotsPart struct {
	mu    sync.Mutex
	hosts map[string]*robotsEntry
}

type robotsEntry struct {
	policy atomic.Pointer[robots.Policy]
	// Fetch state, touched only under the host's lease.
	pending string // next URL of a redirect chain; "" means /robots.txt
	hops    int
}

func newRobotsCache(partitions int, ttl time.Duration) *robotsCache {
	c := &robotsCache{parts: make([]robotsPart, partitions), ttl: ttl}
	for i := range c.parts {
		c.parts[i].hosts = map[string]*robotsEntry{}
	}
	return c
}

// entry returns the host's entry, creating it.
func (c *robotsCache) entry(host string) *robotsEntry {
	p := &c.parts[partition.Of(host, len(c.parts))]
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.hosts[host]
	if e == nil {
		e = &robotsEntry{}
		p.hosts[host] = e
	}
	return e
}

// cached returns the host's policy if one is known and fresh, else nil.
func (c *robotsCache) cached(host string, now time.Time) *robots.Policy {
	p := &c.parts[partition.Of(host, len(c.parts))]
	p.mu.Lock()
	e := p.hosts[host]
	p.mu.Unlock()
	if e == nil {
		return nil
	}
	if pol := e.policy.Load(); pol != nil && pol.Fresh(now, c.ttl) {
		return pol
	}
	return nil
}

// fetchRobots makes one request of the host's robots.txt fetch: the file
// itself or the next hop of its redirect chain. Each hop is one request, so
// each is made under its own lease, after the host's delay, like any other
// request to the host. It returns the policy once it is decided, else nil
// (a redirect to follow on the next lease).
//
// RFC 9309: 2xx is parsed; 4xx means no rules; 5xx and network errors mean
// disallow all; redirects are followed up to five hops, after which the file
// is treated as unavailable (no rules). A hop to another host is made under
// this host's lease: the chain belongs to this host's robots.txt.
func (cr *Crawler) fetchRobots(ctx context.Context, u canon.URL, e *robotsEntry) *robots.Policy {
	target := e.pending
	if target == "" {
		target = u.Scheme + "://" + u.Authority + "/robots.txt"
	}
	now := time.Now()
	cr.stats.robots.Add(1)
	resp, err := cr.fetcher.Get(ctx, target, nil)
	var pol *robots.Policy
	switch {
	case err != nil:
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return nil // shutting down: decide nothing
		}
		kind := fetch.KindOf(err)
		cr.log.Info("robots.txt unreachable", "host", u.Authority, "url", target, "err", err)
		pol = robots.DisallowAllPolicy(0, kind.String()+": "+err.Error(), now)
	default:
		cr.archive(resp)
		cr.stats.bytes.Add(int64(len(resp.Body)))
		if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Location != "" {
			e.hops++
			if e.hops <= robotsMaxHops {
				e.pending = resp.Location
				cr.stats.inc(cr.stats.robotsOutc, "redirect-hop", 1)
				return nil
			}
		}
		pol = robots.FromStatus(resp.StatusCode, resp.Decoded, cr.token, now)
		if resp.Truncated != "" && resp.Truncated != "length" && pol.Outcome == robots.Rules {
			// A robots.txt cut short by a timeout could have lost its
			// Disallow lines: treat it as unreachable. One cut by the size
			// cap is parsed (RFC 9309 allows a limit of at least 500 KiB).
			pol = robots.DisallowAllPolicy(resp.StatusCode, "truncated: "+resp.Truncated, now)
		}
	}
	e.pending, e.hops = "", 0
	e.policy.Store(pol)
	cr.stats.inc(cr.stats.robotsOutc, pol.Outcome.String(), 1)
	if pol.Outcome == robots.DisallowAll {
		cr.stats.hostsDown.Add(1)
		cr.log.Info("host not crawled: robots.txt unavailable", "host", u.Authority, "status", pol.Status, "err", pol.Err)
	}
	return pol
}

// robotsMaxHops is RFC 9309's "at least five" redirects.
const robotsMaxHops = 5
