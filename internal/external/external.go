// Package external keeps the book of the URLs a crawl leases to fetchers
// outside weft (the operator API's /v1/frontier/lease and
// /v1/frontier/complete): which leases may go out, which are out and until
// when, and which were completed lately, so that a completion sent twice is
// answered alike. Politeness still comes from the frontier: a URL is
// handed out as a lease on its host, which stays busy until the lease is
// completed or expires; the crawl completes the frontier's lease.
package external

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/live"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/robotstxt"
)

// ErrUnknownLease is returned for a lease that is not out: never handed
// out, expired, or completed with another URL.
var ErrUnknownLease = errors.New("external: no such lease out")

// Leases holds the leases out to external fetchers, and remembers the
// last ones completed so that a completion sent twice is answered alike.
// It is safe for concurrent use.
//
// It decides which leases can go out (Externalizable) by the robots.txt
// cache and the operators' policies it holds.
type Leases struct {
	canon    *canon.Canonicalizer
	robots   *robotstxt.Cache
	policies *policy.Set
	log      *slog.Logger

	mu   sync.Mutex
	out  map[string]lease
	done map[string]string // recently completed lease ID -> URL, for idempotent completion
	ring []string          // the order they were completed in, at most keep
	keep int               // completions remembered; zero means doneKept
}

type lease struct {
	l       frontier.Lease
	expires time.Time
}

const doneKept = 10000

// New returns an empty book, which judges the leases that may go out by
// robots (a host's robots.txt must be cached) and policies.
func New(c *canon.Canonicalizer, robots *robotstxt.Cache, policies *policy.Set, log *slog.Logger) *Leases {
	return &Leases{canon: c, robots: robots, policies: policies, log: log}
}

// Hand records l as out to an external fetcher until now+ttl, under a new
// random ID.
func (x *Leases) Hand(l frontier.Lease, now time.Time, ttl time.Duration) live.Lease {
	id := make([]byte, 16)
	rand.Read(id)
	e := live.Lease{ID: hex.EncodeToString(id), URL: l.URL, Host: l.Host, Depth: l.Depth, Expires: now.Add(ttl)}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.out == nil {
		x.out = map[string]lease{}
	}
	x.out[e.ID] = lease{l: l, expires: e.Expires}
	return e
}

// Complete ends lease id, which must be of url, and returns its frontier
// lease. A lease completed with url already gives ok false and no error;
// any other, ErrUnknownLease.
func (x *Leases) Complete(id, url string) (l frontier.Lease, ok bool, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e, out := x.out[id]
	if !out || e.l.URL != url {
		if prev, done := x.done[id]; done && prev == url {
			return frontier.Lease{}, false, nil
		}
		return frontier.Lease{}, false, ErrUnknownLease
	}
	delete(x.out, id)
	if x.done == nil {
		x.done = map[string]string{}
	}
	x.done[id] = url
	x.ring = append(x.ring, id)
	if len(x.ring) > cmp.Or(x.keep, doneKept) {
		delete(x.done, x.ring[0])
		x.ring = x.ring[1:]
	}
	return e.l, true, nil
}

// Expire takes out and returns the leases whose time is up at now.
func (x *Leases) Expire(now time.Time) []frontier.Lease {
	x.mu.Lock()
	defer x.mu.Unlock()
	var gone []frontier.Lease
	for id, e := range x.out {
		if now.After(e.expires) {
			gone = append(gone, e.l)
			delete(x.out, id)
		}
	}
	return gone
}

// Externalizable reports whether a lease can be handed to a plain fetcher:
// a page whose host's robots.txt is known and allows it, under no policy
// that forbids it. The frontier's other leases (a robots.txt fetch or hop,
// a sitemap, whose listing weft reads and whose asking it times, a host
// being drained or given up, a group lookup, a variant to request as
// written) are weft's own business.
func (x *Leases) Externalizable(l frontier.Lease) bool {
	if !l.Requests() || l.RobotsFor != "" || l.Fetch != "" || l.Sitemap {
		return false
	}
	u, err := x.canon.Parse(l.URL)
	if err != nil || u.Path == "/robots.txt" {
		return false
	}
	pol := x.robots.Cached(robotstxt.Origin(u.Scheme, l.Host), time.Now())
	return pol != nil && pol.Allowed(u.PathQuery()) && x.policies.For(u.Authority, u.Host).Allowed(u.PathQuery())
}

// Sweep takes out the leases whose time is up every tick until ctx is
// done, and gives each to expired, which completes it as the crawl sees
// fit.
func (x *Leases) Sweep(ctx context.Context, tick time.Duration, expired func(frontier.Lease)) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			for _, l := range x.Expire(now) {
				x.log.Info("external lease expired", "url", l.URL, "host", l.Host)
				expired(l)
			}
		}
	}
}
