package crawl

import (
	"context"
	"net/http"
	"time"

	"github.com/weft-crawler/weft/internal/answer"
	"github.com/weft-crawler/weft/internal/external"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/live"
)

// External fetchers (the operator API's /v1/frontier/lease and
// /v1/frontier/complete): a process outside weft asks for URLs, fetches
// them, and says what it got. Package external keeps the book of the
// leases out; the host's clock is armed from the completion, as for
// weft's own workers.

// ErrUnknownLease is returned for a lease that is not out: never handed
// out, expired, or completed with another URL.
var ErrUnknownLease = external.ErrUnknownLease

// LeaseExternal hands out up to n URLs to an external fetcher, each for
// ttl, waiting at most wait for the first. Leases the frontier gives that
// only weft can serve (robots.txt first, a drained host) are served on
// the way, as a worker would. It hands out nothing while paused.
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
		if !c.ext.Externalizable(l) || c.droppedUnrequested(l) {
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
		out = append(out, c.ext.Hand(l, time.Now(), ttl))
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
	l, ok, err := c.ext.Complete(id, url)
	if !ok {
		return err // nil for a lease completed already with url
	}
	c.judge.Fetched(l.Host)
	lo := leaseOutcome{status: status, outcome: "external"}
	rec := fetchlog.Record{Time: fetchedAt, URL: l.URL, Host: l.Host, Status: status, Depth: l.Depth, Via: l.Via, ContentHash: contentHash, Outcome: "external", Path: l.Path}
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

// endExpired ends an external lease whose time is up as lost: the host's
// clock is armed, in case the request did go out, and the URL is leased
// again after the gap; the host's backoff and failures stand, as nothing
// was heard of it (frontier.Lost).
func (c *Crawler) endExpired(l frontier.Lease) {
	c.endLease(l, leaseOutcome{res: frontier.Result{Fetched: true, Retry: true, Signal: frontier.Lost}, outcome: "external-expired"})
}

// droppedUnrequested reports whether weft drops or holds l without a
// request for what it has learnt since its URL was queued
// (judge.Judge.Dropped): it does so itself rather than hand the URL out.
func (c *Crawler) droppedUnrequested(l frontier.Lease) bool {
	u, err := c.canon.Parse(l.URL)
	if err != nil {
		return false
	}
	why, _ := c.judge.Dropped(l, u)
	return why != ""
}
