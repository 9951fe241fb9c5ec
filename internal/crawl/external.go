package crawl

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/answer"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/live"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/robotstxt"
)

// External fetchers (the operator API's /v1/frontier/lease and
// /v1/frontier/complete): a process outside weft asks for URLs, fetches
// them, and says what it got. Politeness still comes from the frontier:
// a URL is handed out as a lease on its host, the host is busy until the
// lease is completed or expires, and its clock is armed from the
// completion, as for weft's own workers.

// ErrUnknownLease is returned for a lease that is not out: never handed
// out, expired, or completed with another URL.
var ErrUnknownLease = errors.New("crawl: no such lease out")

// externals holds the leases out to external fetchers, and remembers the
// last ones completed so that a completion sent twice is answered alike.
// It is safe for concurrent use.
//
// It decides which leases can go out (externalizable) by the robots.txt
// cache and the operators' policies it holds.
type externals struct {
	canon    *canon.Canonicalizer
	robots   *robotstxt.Cache
	policies *policy.Set
	log      *slog.Logger

	mu   sync.Mutex
	out  map[string]extLease
	done map[string]string // recently completed lease ID -> URL, for idempotent completion
	ring []string          // the order they were completed in, at most keep
	keep int               // completions remembered; zero means extDoneKept
}

type extLease struct {
	l       frontier.Lease
	expires time.Time
}

const extDoneKept = 10000

// hand records l as out to an external fetcher until now+ttl, under a new
// random ID.
func (x *externals) hand(l frontier.Lease, now time.Time, ttl time.Duration) live.Lease {
	id := make([]byte, 16)
	rand.Read(id)
	e := live.Lease{ID: hex.EncodeToString(id), URL: l.URL, Host: l.Host, Depth: l.Depth, Expires: now.Add(ttl)}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.out == nil {
		x.out = map[string]extLease{}
	}
	x.out[e.ID] = extLease{l: l, expires: e.Expires}
	return e
}

// complete ends lease id, which must be of url, and returns its frontier
// lease. A lease completed with url already gives ok false and no error;
// any other, ErrUnknownLease.
func (x *externals) complete(id, url string) (l frontier.Lease, ok bool, err error) {
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
	if len(x.ring) > cmp.Or(x.keep, extDoneKept) {
		delete(x.done, x.ring[0])
		x.ring = x.ring[1:]
	}
	return e.l, true, nil
}

// expire takes out and returns the leases whose time is up at now.
func (x *externals) expire(now time.Time) []frontier.Lease {
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

// externalizable reports whether a lease can be handed to a plain fetcher:
// a page whose host's robots.txt is known and allows it, under no policy
// that forbids it. The frontier's other leases (a robots.txt fetch or hop,
// a host being drained or given up, a group lookup, a variant to request
// as written) are weft's own business.
func (x *externals) externalizable(l frontier.Lease) bool {
	if !l.Requests() || l.RobotsFor != "" || l.Fetch != "" {
		return false
	}
	u, err := x.canon.Parse(l.URL)
	if err != nil || u.Path == "/robots.txt" {
		return false
	}
	pol := x.robots.Cached(robotstxt.Origin(u.Scheme, l.Host), time.Now())
	return pol != nil && pol.Allowed(u.PathQuery()) && x.policies.For(u.Authority, u.Host).Allowed(u.PathQuery())
}

// LeaseExternal hands out up to n URLs to an external fetcher, each for
// ttl, waiting at most wait for the first. Leases the frontier gives that
// only weft can serve (robots.txt first, a drained host) are served on
// the way, as a worker would. It hands out nothing while the crawl is
// paused.
func (c *Crawler) LeaseExternal(ctx context.Context, n int, ttl, wait time.Duration) ([]live.Lease, error) {
	ph := c.life.Hold()
	defer c.life.Release()
	if !ph.Running {
		return nil, ErrNotRunning
	}
	var out []live.Lease
	deadline := time.Now().Add(wait)
	for len(out) < n && !c.pause.Shut() {
		d := deadline
		if len(out) > 0 {
			d = time.Now().Add(10 * time.Millisecond) // only what is ready now
		}
		nctx, cancel := context.WithDeadline(ctx, d)
		l, err := c.front.Next(nctx)
		cancel()
		if err != nil {
			break
		}
		if !c.ext.externalizable(l) {
			p := &pageRun{l: l, pb: c.state.NewBatch()}
			c.handle(ctx, p)
			c.finish(p)
			continue
		}
		if c.overRequisiteBudget(l) {
			c.judge.Count(judge.RequisiteBudget, 1)
			c.endLease(l, leaseOutcome{outcome: judge.RequisiteBudget})
			continue
		}
		if c.overPageBudget(l) {
			// The page cap counts external fetches as weft's own.
			c.capReached.Store(true)
			c.stopLeasing()
			c.endLease(l, leaseOutcome{res: frontier.Result{Retry: true}})
			break
		}
		out = append(out, c.ext.hand(l, time.Now(), ttl))
	}
	return out, nil
}

// CompleteExternal ends an external lease with what its fetcher got: the
// HTTP status (0 when the request got no response) and the hash of the
// content. The host's clock is armed from now, as after weft's own fetch;
// a 429 or 503 backs the host off and keeps the URL queued. Completing a
// lease twice with the same URL does nothing the second time.
func (c *Crawler) CompleteExternal(id, url string, status int, fetchedAt time.Time, contentHash string) error {
	ph := c.life.Hold()
	defer c.life.Release()
	if ph.Closed {
		return ErrNotRunning
	}
	l, ok, err := c.ext.complete(id, url)
	if !ok {
		return err // nil for a lease completed already with url
	}
	c.judge.Fetched(l.Host)
	lo := leaseOutcome{status: status, outcome: "external"}
	rec := fetchlog.Record{Time: fetchedAt, URL: l.URL, Host: l.Host, Status: status, Depth: l.Depth, Via: l.Via, SHA256: contentHash, Outcome: "external", Path: l.Path}
	if status == 0 {
		c.stats.errors.Add(1)
		c.stats.inc(c.stats.byError, "external", 1)
		lo.outcome, rec.Outcome = "error:external", "error:external"
		lo.res = frontier.Result{Fetched: true, Signal: frontier.Failed}
	} else {
		c.stats.answered(l)
		c.stats.inc(c.stats.byClass, answer.Class(status), 1)
		signal, retryAfter := answer.StatusSignal(status, http.Header{}, time.Now())
		lo.res = frontier.Result{Fetched: true, Signal: signal, RetryAfter: retryAfter}
		lo.res.Retry = signal == frontier.Throttled || signal == frontier.Unavailable
	}
	c.flog.Write(rec)
	c.endLease(l, lo)
	return nil
}

// expireAll gives back the external leases whose time is up, to end, as if
// their fetchers had fetched and asked for a retry: the host's clock is
// armed, in case the request did go out, and the URL is leased again after
// the gap.
func (x *externals) expireAll(now time.Time, end func(frontier.Lease, leaseOutcome)) {
	for _, l := range x.expire(now) {
		x.log.Info("external lease expired", "url", l.URL, "host", l.Host)
		end(l, leaseOutcome{res: frontier.Result{Fetched: true, Retry: true}, outcome: "external-expired"})
	}
}

// sweep expires external leases every tick until ctx is done, ending each
// with end (which completes a lease as a worker does).
func (x *externals) sweep(ctx context.Context, tick time.Duration, end func(frontier.Lease, leaseOutcome)) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			x.expireAll(now, end)
		}
	}
}
