package crawl

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/crawllog"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/robotstxt"
	"github.com/weft-crawler/weft/internal/schedule"
)

// work leases URLs until the frontier drains or leasing stops. Every lease
// is completed, whatever happens to its fetch.
func (c *Crawler) work(ctx, leaseCtx context.Context) {
	bufs := &pageBuffers{votes: importance.NewVotes()}
	for {
		if err := c.pause.Wait(leaseCtx); err != nil {
			return
		}
		l, err := c.front.Next(leaseCtx)
		if err != nil {
			return
		}
		// Paused while waiting for the lease: it goes back unfetched, first
		// in its host's queue, the host's clock as it was.
		if c.pause.Shut() {
			c.front.Complete(l, frontier.Result{Retry: true})
			continue
		}
		until, ok := c.cluster.Claim(l.Host)
		if !ok {
			// The node no longer owns the host (its partition is about to
			// be held): the URL goes back unfetched, for the day it does
			// again, and the host waits a moment rather than come
			// straight back to the workers.
			c.front.Complete(l, frontier.Result{Retry: true, Hold: time.Second})
			continue
		}
		hctx, cancel := ctx, context.CancelFunc(func() {})
		if !until.IsZero() {
			hctx, cancel = context.WithDeadline(ctx, until)
		}
		p := newPageRun(l, c.state.NewBatch(), bufs)
		p.worker = fetchlog.WorkerOf(ctx)
		if v, ok := c.sched.VisitedElsewhere(l); ok {
			p.out = leaseOutcome{outcome: "elsewhere", status: v.Record.LastStatus, visit: v}
		} else {
			c.handle(hctx, p)
		}
		c.finish(p)
		p.release()
		cancel()
	}
}

// finish ends a lease: everything it changed goes to disk in one batch
// before the frontier hears of it (the links it found, its outcome, its
// host's clock). If the write fails the crawl stops, and the URL stays
// queued on disk.
func (c *Crawler) finish(p *pageRun) {
	c.commit(p)
	c.complete(p)
}

// endLease finishes a lease that fetched nothing through the pipeline (an
// external fetcher's, or one that expired), with the outcome given.
func (c *Crawler) endLease(l frontier.Lease, lo leaseOutcome) {
	c.finish(&pageRun{l: l, pb: c.state.NewBatch(), out: lo})
}

// commit moves the host's clock, stages the lease's end in its batch and
// writes the batch; once it is on disk, the page's events and the page
// go to their sinks and consumers, and a cluster hears of the clock and
// the fetch.
func (c *Crawler) commit(p *pageRun) {
	l, pb := p.l, p.pb
	lo := &p.out
	part := partition.Of(l.Host, c.cfg.Partitions)
	if c.failed.Load() {
		// The crawl is stopping on an error that may have cost this
		// lease something (a link not admitted, a record not
		// archived): keep its URL queued for the next run, with no
		// second entry of it (a second try, retryLater).
		lo.res.Retry = true
		pb.Items = slices.DeleteFunc(pb.Items, func(it frontier.Item) bool { return it.URL == l.URL })
	}
	// The host's clock goes to disk in the page's batch when a restart
	// would not assume as much, and the frontier installs the one written.
	lo.res = c.policies.Delay(l, lo.res)
	var durable bool
	lo.res, durable = c.front.Settle(l, lo.res, time.Now(), pb)
	clock := *lo.res.Clock
	if lo.res.Drain == frontier.DrainStart {
		// Its robots.txt disallows everything: the verdict holds at least
		// as long as the clock that the request which found it set.
		scheme, _, _ := strings.Cut(l.URL, "://")
		c.robots.HoldUntil(robotstxt.Origin(scheme, l.Host), clock.NextAt)
	}
	c.countClock(l, lo.res, clock)
	if c.cfg.Recrawl != nil && !lo.res.Retry && l.Seq != 0 && lo.outcome != judge.Requeued && lo.outcome != judge.HeldAgain {
		if lo.visit == nil {
			lo.visit = c.sched.KeepVisit(l)
		}
		c.recrawler.Done(l.URL)
	}
	rec := pb.Done(l, part, lo.res, lo.status, lo.outcome, lo.visit)
	outbox := c.out.Stage(pb.Batch, pb.Events)
	counted := c.countSeed(p)
	err := pb.Commit(c.seen, c.front)
	counted(err == nil)
	switch {
	case errors.Is(err, ErrStopping):
		// Nothing of the page is on disk: its URL stays queued there.
		c.log.Warn("crawl: a page not recorded, its process stopping; it is fetched again in the next run", "url", l.URL, "err", err)
		c.stoppedByHook.Store(true)
		c.stopLeasing()
		lo.res.Retry = true // queued, as on disk
		return
	case err != nil:
		c.fail(fmt.Errorf("crawl: record %s: %w", l.URL, err))
		return
	}
	if err := c.out.Deliver(pb.Events, outbox); err != nil {
		c.fail(err)
	}
	c.deliverPages(pb.Pages)
	if durable {
		c.cluster.Clocked(l.Host, clock)
	}
	if !lo.res.Retry && l.RobotsFor == "" && lo.res.Fetched && !pb.Queues(l.URL) {
		v := Visited{URL: l.URL, Record: rec}
		if lo.visit != nil {
			v.Importance = lo.visit.Importance
			if lo.visit.First.RecordID != "" {
				v.First = &lo.visit.First
			}
		}
		c.cluster.Fetched(v, l.Host)
	}
}

// complete forgets what the batch held pending (its payload digests and
// fingerprints, on disk now or never) and hands the lease back to the
// frontier with its result.
func (c *Crawler) complete(p *pageRun) {
	c.arch.Settle(&p.pb.Staging)
	if c.near != nil {
		c.near.Settle(p.pb.Sims)
	}
	c.front.Complete(p.l, p.out.res)
}

// leaseOutcome is what handling a lease did.
type leaseOutcome struct {
	res     frontier.Result
	status  int    // HTTP status of the page, 0 if none
	outcome string // "ok", "redirect", "error:<kind>", "robots", ...
	// visit is, in continuous mode, what the fetch taught about the URL
	// (validators, digest, change history, next crawl), for its record.
	visit *schedule.Visit
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
		c.flog.Hosts().Parked(l.Host, time.Now(), clock.NextAt)
		c.log.Warn("host parked after failures in a row", "host", l.Host, "errors", clock.Errors, "until", clock.NextAt.Format(time.RFC3339))
	}
	if clock.GaveUp && !l.Clock.GaveUp {
		c.judge.GiveUp(l.Host)
		c.stats.gaveUp.Add(l.Host)
		c.log.Warn("host given up after too many failures, or 429s in a row; its queued URLs are dropped", "host", l.Host, "errors", clock.Errors, "429s_in_a_row", clock.Throttles)
	}
}

// handle routes a lease: to its host's robots.txt, to a drain, to a
// refusal, or down the page pipeline (runPage), and leaves in p.out how the host's clock should move. A panic
// while handling one URL (a parser bug on hostile input) fails that URL,
// is counted and logged, and the crawl goes on.
func (c *Crawler) handle(ctx context.Context, p *pageRun) {
	l := p.l
	defer func() {
		if r := recover(); r != nil {
			c.stats.errors.Add(1)
			c.stats.inc(c.stats.byError, "panic", 1)
			c.log.Error("panic while handling a URL", "url", l.URL, "host", l.Host, "err", fmt.Sprint(r), "stack", string(debug.Stack()))
			// What the page wrote to the WARC file is indexed. Assume the
			// request went out: better a longer gap than a burst. A
			// robots.txt hop must not leave its owner parked.
			c.stageCapture(p)
			p.out = leaseOutcome{res: frontier.Result{Fetched: true}, outcome: "error:panic"}
			if l.RobotsFor != "" {
				c.front.Unpark(robotstxt.Authority(l.RobotsFor))
			}
		}
	}()
	if pol := c.route(ctx, p); pol != nil {
		c.runPage(ctx, p, pol)
	}
}

// route decides what a lease does before any request for its page: it
// returns the robots.txt rules that let the page be fetched, or nil with
// p.out set when the lease goes elsewhere (its host given up or draining,
// its robots.txt fetched, the URL refused, the page cap reached).
func (c *Crawler) route(ctx context.Context, p *pageRun) *robots.Policy {
	l := p.l
	if c.state.Stale(l) {
		// A second entry of a URL another entry of has gone with, fetched
		// or dropped (state.Batch.Requeue): dropped first, in every mode,
		// and counted as a copy gone (copiesQueued). An entry held past
		// its trap budget and released (state.Batch.Release) was no copy.
		c.judge.Count(judge.Requeued, 1)
		if l.Priority != judge.HeldPriority {
			c.stats.droppedCopies.Add(1)
		}
		p.out = leaseOutcome{outcome: judge.Requeued}
		return nil
	}
	if l.Mode == frontier.ModeGiveUp {
		// The host failed too often: drop the URL without a request. A
		// robots.txt hop owned by another host leaves it with no rules it
		// can read, which is "unreachable". (Given up in an earlier run:
		// from now its links are refused when found.)
		c.judge.GiveUp(l.Host)
		c.judge.Count(judge.GaveUp, 1)
		if l.RobotsFor != "" {
			c.robots.HopGivenUp(l)
		}
		p.out = leaseOutcome{outcome: judge.GaveUp}
		return nil
	}
	u, err := c.canon.Parse(l.URL)
	if err != nil { // cannot happen for a URL we canonicalised; never crash on it
		c.log.Error("queued URL does not parse", "url", l.URL, "err", err)
		if l.RobotsFor != "" {
			c.front.Unpark(robotstxt.Authority(l.RobotsFor))
		}
		p.out = leaseOutcome{outcome: judge.Invalid}
		return nil
	}
	p.u = u
	switch l.Mode {
	case frontier.ModeFindGroup:
		p.out = leaseOutcome{res: groupOf(ctx, c.fetcher, c.cfg.IPGroup, u.Host)}
		return nil
	case frontier.ModeDrain:
		// The host drains without its clock: its URLs are dropped, never
		// requested. If its robots.txt is no longer known to forbid this
		// one (the answer expired, or it is a hop to the host's own
		// robots.txt), the host goes back to its clock.
		pol := c.robots.Cached(robotstxt.Origin(u.Scheme, l.Host), time.Now())
		switch {
		case pol == nil || pol.Allowed(u.PathQuery()) || (l.RobotsFor != "" && u.Path == "/robots.txt"):
			p.out = leaseOutcome{res: frontier.Result{Retry: true, Drain: frontier.DrainStop}}
		case l.RobotsFor != "": // another host's robots.txt hop, disallowed here
			p.out = leaseOutcome{res: c.robots.Hop(ctx, l, u, pol)}
		default:
			why := judge.RobotsRefusal(pol)
			c.judge.Count(why, 1)
			c.precluded(p, why)
			p.out = leaseOutcome{res: frontier.Result{Drain: frontier.DrainStart}, outcome: why}
		}
		return nil
	}
	if why, su := c.judge.Dropped(l, u); why != "" {
		switch why {
		case judge.InertParam:
			// The same page as the URL without the parameter, which is
			// queued instead, unless known already.
			c.admit(p.pb, judge.Candidate{URL: su, Depth: l.Depth, Hops: l.Hops, Priority: l.Priority, Rank: l.Rank, Via: l.Via,
				Seed: l.Seed, Path: l.Path})
		case judge.HeldCopies, judge.HeldBarren:
			// Held, not dropped, if never fetched: a wall's fall releases it.
			switch it, held := p.pb.Hold(l); {
			case held && it.URL == "": // another entry of it is held: a copy gone
				c.judge.Count(judge.Requeued, 1)
				c.stats.droppedCopies.Add(1)
				p.out = leaseOutcome{outcome: judge.Requeued}
				return nil
			case held:
				c.judge.Hold(it, u, why)
				p.out = leaseOutcome{outcome: judge.HeldAgain}
				return nil
			}
		}
		c.judge.Count(why, 1)
		p.out = leaseOutcome{outcome: why}
		return nil
	}
	if l.Sitemap {
		switch left, enough := c.pagesEnough(); {
		case left <= 0:
			// The cap is reached and a page lease will find so: the
			// crawl ends, the sitemap left queued for the next run.
			c.capReached.Store(true)
			c.stopLeasing()
			p.out = leaseOutcome{res: frontier.Result{Retry: true}}
			return nil
		case enough && !l.Last:
			// A sitemap lists pages, and the crawl has found as many as
			// its page cap leaves it to fetch: asked for now, it would
			// cost its bytes (an index can list hundreds of 50,000-URL
			// files) for pages never fetched. It waits, unrequested,
			// until nothing else is left to lease (frontier.Result.Later),
			// and stays queued for the next run if the cap ends this one
			// first.
			c.stats.sitemapsLater.Add(1)
			p.out = leaseOutcome{res: frontier.Result{Retry: true, Later: true}}
			return nil
		}
	}
	if l.RobotsFor != "" && u.Path == "/robots.txt" {
		// Another host's robots.txt redirected to this host's robots.txt,
		// which needs no permission from this host's rules.
		p.out = leaseOutcome{res: c.robots.Hop(ctx, l, u, c.robots.Cached(robotstxt.Origin(u.Scheme, l.Host), time.Now()))}
		return nil
	}
	if l.Requisite && c.rend != nil {
		if lo, ok := c.renderedAlready(l, u); ok {
			p.out = lo
			return nil
		}
	}
	pol, spent := c.robots.Ensure(ctx, l, u)
	if pol == nil {
		p.out = leaseOutcome{res: spent} // the lease went to robots.txt; the URL is retried
		if spent.SetCrawlDelay && spent.Drain == 0 {
			// The lease fetched the host's robots.txt, which allows it:
			// its sitemaps are queued like any URL.
			c.findSitemaps(p)
			c.judgeLinks(p)
		}
		return nil
	}
	if l.RobotsFor != "" {
		p.out = leaseOutcome{res: c.robots.Hop(ctx, l, u, pol)}
		return nil
	}
	res := frontier.Result{SetCrawlDelay: true, CrawlDelay: pol.CrawlDelay}
	switch {
	case !pol.Allowed(u.PathQuery()):
		why := judge.RobotsRefusal(pol)
		c.judge.Count(why, 1)
		c.precluded(p, why)
		if pol.Outcome == robots.DisallowAll {
			// Nothing queued for the host will be requested: drop the
			// rest at once rather than one per gap.
			res.Drain = frontier.DrainStart
		}
		p.out = leaseOutcome{res: res, outcome: why}
	case !c.cfg.Policies.For(u.Authority, u.Host).Allowed(u.PathQuery()):
		// Queued before the policy said so (an earlier run, or a change
		// while the crawl runs): dropped now, unrequested.
		c.judge.Count(judge.Policy, 1)
		p.out = leaseOutcome{res: res, outcome: judge.Policy}
	case c.overRequisiteBudget(l):
		// Dropped rather than kept queued: the frontier would hand it
		// out again at once, and the pages go on.
		c.judge.Count(judge.RequisiteBudget, 1)
		p.out = leaseOutcome{res: res, outcome: judge.RequisiteBudget}
	case c.overSeedBudget(p):
		// Dropped, not kept queued: the seed's other URLs go the same
		// way, and the crawl ends when only they were left.
		c.judge.Count(judge.SeedBudget, 1)
		p.out = leaseOutcome{res: res, outcome: judge.SeedBudget}
	case c.overPageBudget(l):
		c.capReached.Store(true)
		c.stopLeasing()
		res.Retry = true // not fetched: it stays queued for a later run
		p.out = leaseOutcome{res: res}
	default:
		return pol
	}
	return nil
}

// precluded writes the crawl log's line of a lease that robots.txt kept
// from being requested, as Heritrix logs one: -9998 for its rules, -61
// for a robots.txt that could not be had (judge.Unreachable).
func (c *Crawler) precluded(p *pageRun, why string) {
	status := crawllog.RobotsPrecluded
	if why == judge.Unreachable {
		status = crawllog.RobotsPrereqFailed
	}
	l := p.l
	c.flog.Precluded(fetchlog.Record{URL: l.URL, Host: l.Host, Depth: l.Depth, Hops: l.Hops, Via: l.Via, Path: l.Path, Worker: p.worker}, status)
}

// notPage reports whether l is a request for something other than a
// page: a requisite or a sitemap, which MaxRequisites counts instead of
// MaxPages.
func notPage(l frontier.Lease) bool { return l.Requisite || l.Sitemap }

// overPageBudget counts l against MaxPages if it is a page, and reports
// whether it is one past it.
func (c *Crawler) overPageBudget(l frontier.Lease) bool {
	return !notPage(l) && c.cfg.MaxPages > 0 && c.pagesStarted.Add(1) > c.cfg.MaxPages
}

// pagesEnough returns, in a crawl that ends at a page cap, the pages the
// cap leaves it to fetch, and whether it has queued as many:
// frontier.Stats.Pages (not the sitemaps, requisites and held URLs), and
// after a restart every entry on disk that the frontier has not read
// back yet, which may be pages. A sitemap put off wrongly is only put
// off: it is leased once nothing else is left. Without a cap, or in a
// continuous crawl, whose cap is no end, left is 1 and enough false.
func (c *Crawler) pagesEnough() (left int64, enough bool) {
	if c.cfg.Recrawl != nil || c.cfg.MaxPages <= 0 {
		return 1, false
	}
	if left = c.cfg.MaxPages - c.pagesStarted.Load(); left <= 0 {
		return left, true // the cap is reached: nothing to count
	}
	fs := c.front.Stats()
	pages := int64(fs.Pages)
	if stored, ok := c.state.DB.Queued(); ok {
		pages += max(stored-int64(fs.Queued+fs.InFlight+fs.Surplus), 0)
	}
	return left, pages >= left
}

// overRequisiteBudget counts l against MaxRequisites if it is not a page,
// and reports whether it is one past it.
func (c *Crawler) overRequisiteBudget(l frontier.Lease) bool {
	return notPage(l) && c.cfg.MaxRequisites > 0 && c.requisitesStarted.Add(1) > c.cfg.MaxRequisites
}
