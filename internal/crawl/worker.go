package crawl

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/store"
)

// work leases URLs until the frontier drains or leasing stops. Every lease
// is completed, whatever happens to its fetch.
func (c *Crawler) work(ctx, leaseCtx context.Context) {
	for {
		if err := c.pause.wait(leaseCtx); err != nil {
			return
		}
		l, err := c.front.Next(leaseCtx)
		if err != nil {
			return
		}
		// Paused while waiting for the lease: it goes back unfetched, first
		// in its host's queue, the host's clock as it was.
		if c.pause.paused() {
			c.front.Complete(l, frontier.Result{Retry: true})
			continue
		}
		hctx, cancel := ctx, context.CancelFunc(func() {})
		if c.cfg.Cluster != nil {
			until, ok := c.cfg.Cluster.Claim(l.Host)
			if !ok {
				// The node no longer owns the host (its partition is
				// about to be held): the URL goes back unfetched, for the
				// day it does again, and the host waits a moment rather
				// than come straight back to the workers.
				c.front.Complete(l, frontier.Result{Retry: true, Hold: time.Second})
				continue
			}
			hctx, cancel = context.WithDeadline(ctx, until)
		}
		pb := c.state.newBatch()
		if r, ok := c.sched.visitedElsewhere(l); ok {
			c.finish(l, c.sched.elsewhere(l, r), pb)
		} else {
			c.finish(l, c.handle(hctx, l, pb), pb)
		}
		cancel()
	}
}

// finish ends a lease: everything it changed goes to disk in one batch
// before the frontier hears of it (the links it found, its outcome, its
// host's clock). If the write fails the crawl stops, and the URL stays
// queued on disk.
func (c *Crawler) finish(l frontier.Lease, lo leaseOutcome, pb *pageBatch) {
	part := partition.Of(l.Host, c.cfg.Partitions)
	if c.failed.Load() {
		// The crawl is stopping on an error that may have cost this
		// lease something (a link not admitted, a record not
		// archived): keep its URL queued for the next run.
		lo.res.Retry = true
	}
	lo.res = c.policies.delay(l, lo.res)
	// The host's new clock is computed here, from the lease's, so that
	// the one the frontier installs is the one on disk.
	now := time.Now()
	clock := c.front.Advance(l.Clock, lo.res, now)
	if lo.clock != nil {
		clock = *lo.clock
	}
	lo.res.Clock = &clock
	if lo.res.Drain == frontier.DrainStart {
		// Its robots.txt disallows everything: the verdict holds at least
		// as long as the clock that the request which found it set.
		scheme, _, _ := strings.Cut(l.URL, "://")
		c.robots.holdUntil(originKey(scheme, l.Host), clock.NextAt)
	}
	c.countClock(l, lo.res, clock)
	var keep *frontier.Clock // written only when a restart would not assume as much
	if c.front.Durable(l.Clock, clock, now) {
		keep = &clock
	}
	if c.cfg.Recrawl != nil && !lo.res.Retry && l.Seq != 0 {
		if lo.visit == nil {
			lo.visit = c.sched.keepVisit(l)
		}
		c.recrawler.out.done(l.URL)
	}
	rec := pb.done(l, part, lo.res, lo.status, lo.outcome, keep, lo.visit)
	outbox := c.out.stage(pb.b, pb.events)
	if err := pb.commit(c.seen, c.front); errors.Is(err, ErrStopping) {
		// Nothing of the page is on disk: its URL stays queued there.
		c.log.Warn("crawl: a page not recorded, its process stopping; it is fetched again in the next run", "url", l.URL, "err", err)
		c.stoppedByHook.Store(true)
		c.stopLeasing()
		lo.res.Retry = true // queued, as on disk
	} else if err != nil {
		c.fail(fmt.Errorf("crawl: record %s: %w", l.URL, err))
	} else {
		c.out.emit(pb.events, outbox)
		c.deliverPages(pb.pages)
		if c.cfg.Cluster != nil && keep != nil {
			c.cfg.Cluster.Clocked(l.Host, *keep)
		}
		if c.cfg.Cluster != nil && !lo.res.Retry && l.RobotsFor == "" && lo.res.Fetched && !requeued(pb, l.URL) {
			v := Visited{URL: l.URL, Record: rec}
			if lo.visit != nil {
				v.Importance = lo.visit.importance
				if lo.visit.first.RecordID != "" {
					v.First = &lo.visit.first
				}
			}
			c.cfg.Cluster.Fetched(v, l.Host)
		}
	}
	c.arch.settle(pb)
	if c.near != nil {
		c.near.settle(pb.sims)
	}
	c.front.Complete(l, lo.res)
}

// leaseOutcome is what handling a lease did.
type leaseOutcome struct {
	res     frontier.Result
	status  int    // HTTP status of the page, 0 if none
	outcome string // "ok", "redirect", "error:<kind>", "robots", ...
	// visit is, in continuous mode, what the fetch taught about the URL
	// (validators, digest, change history, next crawl), for its record.
	visit *visit
	// page is an HTML page fetched whole, for the renderer to consider
	// (set only when rendering is on).
	page *renderable
	// clock, when set, is the host's clock after more requests than the
	// lease's own (a render's, under the lease), each advanced by its
	// answer: the lease leaves it rather than its own advanced by res.
	clock *frontier.Clock
}

// countClock counts what a lease's result did to its host's clock.
func (c *Crawler) countClock(l frontier.Lease, res frontier.Result, clock frontier.Clock) {
	if !res.Fetched {
		return
	}
	switch res.Signal {
	case frontier.Throttled:
		c.stats.throttled.Add(1)
	case frontier.Unavailable:
		c.stats.unavailable.Add(1)
	case frontier.Strained:
		c.stats.strained.Add(1)
	}
	if clock.Parks > l.Clock.Parks {
		c.stats.parks.Add(1)
		c.flog.hosts.Parked(l.Host, time.Now(), clock.NextAt)
		c.log.Warn("host parked after failures in a row", "host", l.Host, "errors", clock.Errors, "until", clock.NextAt.Format(time.RFC3339))
	}
	if clock.GaveUp && !l.Clock.GaveUp {
		c.admit.gaveUp.update(l.Host, func(bool) bool { return true })
		c.stats.gaveUp.add(l.Host)
		c.log.Warn("host given up after too many failures, or 429s in a row; its queued URLs are dropped", "host", l.Host, "errors", clock.Errors, "429s_in_a_row", clock.Throttles)
	}
}

// handle does one lease's request (robots.txt or the page) and returns how
// the host's clock should move. A panic while handling one URL (a parser
// bug on hostile input) fails that URL, is counted and logged, and the
// crawl goes on.
func (c *Crawler) handle(ctx context.Context, l frontier.Lease, pb *pageBatch) (lo leaseOutcome) {
	defer func() {
		if r := recover(); r != nil {
			c.stats.errors.Add(1)
			c.stats.inc(c.stats.byError, "panic", 1)
			c.log.Error("panic while handling a URL", "url", l.URL, "host", l.Host, "err", fmt.Sprint(r), "stack", string(debug.Stack()))
			// Assume the request went out: better a longer gap than a
			// burst. A robots.txt hop must not leave its owner parked.
			lo = leaseOutcome{res: frontier.Result{Fetched: true}, outcome: "error:panic"}
			if l.RobotsFor != "" {
				c.front.Unpark(originHost(l.RobotsFor))
			}
		}
	}()
	if l.Mode == frontier.ModeGiveUp {
		// The host failed too often: drop the URL without a request. A
		// robots.txt hop owned by another host leaves it with no rules it
		// can read, which is "unreachable". (Given up in an earlier run:
		// from now its links are refused when found.)
		c.admit.gaveUp.update(l.Host, func(bool) bool { return true })
		c.stats.reject(RejectGaveUp)
		if l.RobotsFor != "" {
			owner := c.robots.entry(l.RobotsFor)
			c.robots.decide(l.RobotsFor, owner, robots.DisallowAllPolicy(0, "robots.txt redirects to "+l.Host+", which was given up", time.Now()), "redirect-gave-up", nil, true)
			c.front.Unpark(originHost(l.RobotsFor))
		}
		return leaseOutcome{outcome: RejectGaveUp}
	}
	u, err := c.canon.Parse(l.URL)
	if err != nil { // cannot happen for a URL we canonicalised; never crash on it
		c.log.Error("queued URL does not parse", "url", l.URL, "err", err)
		if l.RobotsFor != "" {
			c.front.Unpark(originHost(l.RobotsFor))
		}
		return leaseOutcome{outcome: RejectInvalid}
	}
	switch l.Mode {
	case frontier.ModeFindGroup:
		return leaseOutcome{res: groupOf(ctx, c.fetcher, c.cfg.IPGroup, u.Host)}
	case frontier.ModeDrain:
		// The host drains without its clock: its URLs are dropped, never
		// requested. If its robots.txt is no longer known to forbid this
		// one (the answer expired, or it is a hop to the host's own
		// robots.txt), the host goes back to its clock.
		pol := c.robots.cached(originKey(u.Scheme, l.Host), time.Now())
		if pol == nil || pol.Allowed(u.PathQuery()) || (l.RobotsFor != "" && u.Path == "/robots.txt") {
			return leaseOutcome{res: frontier.Result{Retry: true, Drain: frontier.DrainStop}}
		}
		if l.RobotsFor != "" { // another host's robots.txt hop, disallowed here
			return leaseOutcome{res: c.robots.hop(ctx, l, u, pol)}
		}
		why := robotsRefusal(pol)
		c.stats.reject(why)
		return leaseOutcome{res: frontier.Result{Drain: frontier.DrainStart}, outcome: why}
	}
	if l.RobotsFor != "" && u.Path == "/robots.txt" {
		// Another host's robots.txt redirected to this host's robots.txt,
		// which needs no permission from this host's rules.
		return leaseOutcome{res: c.robots.hop(ctx, l, u, c.robots.cached(originKey(u.Scheme, l.Host), time.Now()))}
	}
	if l.Requisite && c.rend != nil {
		if lo, ok := c.renderedAlready(l, u); ok {
			return lo
		}
	}
	pol, spent := c.robots.ensure(ctx, l, u)
	if pol == nil {
		if spent.SetCrawlDelay && spent.Drain == 0 {
			// The lease fetched the host's robots.txt, which allows it:
			// its sitemaps are queued like any URL.
			c.admit.admitSitemaps(pb, l, u)
		}
		return leaseOutcome{res: spent} // the lease went to robots.txt; the URL is retried
	}
	if l.RobotsFor != "" {
		return leaseOutcome{res: c.robots.hop(ctx, l, u, pol)}
	}
	res := frontier.Result{SetCrawlDelay: true, CrawlDelay: pol.CrawlDelay}
	if !pol.Allowed(u.PathQuery()) {
		why := robotsRefusal(pol)
		c.stats.reject(why)
		if pol.Outcome == robots.DisallowAll {
			// Nothing queued for the host will be requested: drop the
			// rest at once rather than one per gap.
			res.Drain = frontier.DrainStart
		}
		return leaseOutcome{res: res, outcome: why}
	}
	if !c.cfg.Policies.For(u.Authority, u.Host).Allowed(u.PathQuery()) {
		// Queued before the policy said so (an earlier run, or a change
		// while the crawl runs): dropped now, unrequested.
		c.stats.reject(RejectPolicy)
		return leaseOutcome{res: res, outcome: RejectPolicy}
	}
	if max := c.cfg.MaxPages; max > 0 && c.pagesStarted.Add(1) > max {
		c.capReached.Store(true)
		c.stopLeasing()
		res.Retry = true // not fetched: it stays queued for a later run
		return leaseOutcome{res: res}
	}
	lo = c.fetchPage(ctx, l, u, pb)
	lo.res.SetCrawlDelay, lo.res.CrawlDelay = true, pol.CrawlDelay
	if lo.page != nil {
		c.renderPage(ctx, l, u, pol, &lo, pb)
	}
	return lo
}

// fetchPage fetches, archives and parses one page and admits its links.
// Its result arms the host's clock only if a request reached the host (not
// when it was refused or never resolved), and retries the URL if the fetch
// was cut by shutdown (it stays queued for the next run).
func (c *Crawler) fetchPage(ctx context.Context, l frontier.Lease, u canon.URL, pb *pageBatch) leaseOutcome {
	target := l.URL
	if l.Fetch != "" {
		target = l.Fetch
	}
	start := time.Now()
	if !l.Added.IsZero() {
		c.stats.queueDelay.observe(start.Sub(l.Added))
	}
	var prev store.URLRecord
	var first store.DigestRecord
	var hdr http.Header
	if c.cfg.Recrawl != nil {
		prev, first, hdr = c.previousVisit(l)
	}
	c.traps.fetched(l.Host)
	resp, err := c.fetcher.Get(ctx, target, hdr)
	if err != nil {
		kind := fetch.KindOf(err)
		if kind == fetch.KindCanceled && ctx.Err() != nil {
			// Cut by shutdown: not the host's fault, not counted, and not
			// done: the URL stays queued.
			return leaseOutcome{res: frontier.Result{Fetched: true, Retry: true}}
		}
		c.stats.failed(l.Host, kind.String())
		c.log.Info("fetch failed", "url", l.URL, "host", l.Host, "err", err)
		c.flog.write(fetchRecord{Time: time.Now(), URL: l.URL, Host: l.Host, Depth: l.Depth, Hops: l.Hops, Via: l.Via, Outcome: "error:" + kind.String(), Error: err.Error()})
		return leaseOutcome{res: errorResult(err, time.Since(start)), outcome: "error:" + kind.String()}
	}
	c.stats.pages.Add(1)
	c.stats.bytes.Add(int64(len(resp.Body)))
	c.stats.inc(c.stats.byClass, statusClass(resp.StatusCode), 1)
	c.stats.fetchTime.observe(resp.Duration)
	if l.Priority == frontier.High {
		c.stats.lastHigh.Store(resp.Start.UnixNano())
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		c.stats.hosts.update(l.Host, func(v store.HostState) store.HostState {
			if resp.StatusCode == http.StatusTooManyRequests {
				v.Throttled++
			} else {
				v.ServerErrors++
			}
			return v
		})
	}
	if resp.Refused {
		c.stats.incType(c.stats.refusedTypes, mimeType(resp.Header.Get("Content-Type")))
		c.log.Info("body refused by the media policy", "url", l.URL, "host", l.Host, "content_type", resp.Header.Get("Content-Type"))
	} else if resp.Truncated != "" {
		c.stats.truncated.Add(1)
		c.log.Info("body truncated", "url", l.URL, "host", l.Host, "reason", resp.Truncated, "bytes", len(resp.Body))
	}
	if resp.DecodeErr != nil {
		if errors.Is(resp.DecodeErr, fetch.ErrDecodedTooLarge) {
			c.stats.overDecode.Add(1)
		} else {
			c.stats.badCoding.Add(1)
		}
		c.log.Info("body not decoded whole", "url", l.URL, "host", l.Host, "err", resp.DecodeErr)
	}
	var cp capture
	notModified := resp.StatusCode == http.StatusNotModified && hdr != nil
	if notModified {
		cp = c.arch.archiveNotModified(resp, prev, first, &u)
	} else {
		cp = c.arch.archive(resp, pb, &u)
		if err := c.aliases.learn(u, resp, cp); err != nil {
			c.fail(err)
		}
	}
	// Its line of the capture index is staged whatever happens next, a
	// panic while reading it included (handle recovers it and the batch
	// commits): the record is in the WARC file already. Reading may add to
	// the line (its SimHash), so it is staged last.
	defer func() { c.arch.index(cp, pb) }()
	loc := cp.loc
	sum := sha256.Sum256(resp.Decoded)
	rec := fetchRecord{
		Time: resp.Start, URL: l.URL, Host: l.Host, Status: resp.StatusCode, Bytes: len(resp.Body),
		DurationMS: resp.Duration.Milliseconds(), Depth: l.Depth, Hops: l.Hops, Via: l.Via,
		ContentType: resp.Header.Get("Content-Type"), SHA256: hex.EncodeToString(sum[:]),
		Truncated: resp.Truncated, WARCFile: loc.File, WARCOffset: loc.Offset, Outcome: "ok",
	}

	// The handler of the response's media type, if any, reads it.
	mt := mediaType(resp)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 && !resp.Refused {
		c.stats.incType(c.stats.archivedTypes, mt)
		if l.Requisite {
			c.stats.requisitesArchived.Add(1)
		}
	}
	handler := c.handlers.For(mt)
	// The page goes to the consumers as it was read, if it was.
	var read bool
	var links []string
	var page *renderable
	defer func() { c.stagePage(pb, l, resp, mt, cp, read, links) }()
	switch {
	case notModified:
		// Unchanged since the last visit, which was parsed then.
		rec.Outcome = "not-modified"
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		rec.Outcome = "redirect"
		if resp.Location != "" {
			rec.Location = resp.Location
			c.admit.admitRedirect(pb, l, resp.Location)
		}
	case cp.skipLinks(l.Depth):
		// The payload is an earlier capture's, whose links were followed
		// then: they are not extracted again (Mercator's "content seen").
		rec.Outcome = "revisit"
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && handler != nil:
		// A page's links count toward their targets' in-links once: at
		// the first fetch that reads it whole (none has left a payload
		// digest). A page always cut short never counts.
		first := c.inlinks != nil && prev.Digest == ([sha1.Size]byte{}) && resp.Truncated == ""
		outlinks, followed := c.readAndAdmit(pb, l, u, resp, handler, mt, &rec, &cp, first)
		read, links = true, outlinks
		c.arch.archiveOutlinks(resp, cp.loc.RecordID, l, outlinks)
		if followed {
			c.arch.followed(pb, cp, l.Depth, len(outlinks) == 0)
			if c.rend != nil && mt == "text/html" && !l.Requisite && resp.Truncated == "" && !cp.revisit {
				page = &renderable{resp: resp, recordID: cp.loc.RecordID, outlinks: outlinks}
			}
		}
		if cp.revisit {
			rec.Outcome = "revisit"
		}
	}
	c.flog.write(rec)
	signal, retryAfter := answerSignal(resp, time.Now())
	res := frontier.Result{Fetched: true, Signal: signal, RetryAfter: retryAfter, Took: resp.Duration, Cause: answerCause(resp, signal)}
	if signal == frontier.Throttled || signal == frontier.Unavailable {
		// The server asked to come back later: the URL stays queued,
		// first on its host, for when the host's clock allows. A 503 counts
		// toward giving the host up, and so do 429s in a row over
		// MaxBackoff, so that a storm of either does not last for ever.
		res.Retry = true
	}
	lo := leaseOutcome{res: res, status: resp.StatusCode, outcome: rec.Outcome}
	if !res.Retry {
		lo.page = page
	}
	switch {
	case res.Retry:
	case c.cfg.Recrawl != nil:
		lo.visit = c.sched.learn(l, prev, resp, cp, notModified)
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.Truncated == "":
		// A crawl that ends keeps what a later recrawl of its directory
		// asks with, conditionally: whichever command fetched a page
		// first, the next visit sends its validators.
		lo.visit = &visit{once: true, rec: store.URLRecord{LastFetch: resp.Start, Digest: cp.digest,
			ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}}
	}
	return lo
}

// mediaType is the media type of a response: its Content-Type's, or what
// its body sniffs as when it has none.
func mediaType(resp *fetch.Response) string {
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = http.DetectContentType(resp.Decoded)
	}
	return mimeType(ct)
}
