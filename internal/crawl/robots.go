package crawl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-crawler/weft/internal/answer"
	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/robots"
)

// robotsCache holds the robots.txt history and verdict of each origin
// (scheme and authority: see originKey), split by partition.
//
// Only the worker holding a host's lease fetches its robots.txt, so the
// history and fetch state of an entry (pending redirect, hops) have one
// writer at a time; the verdict is read by every worker admitting links to
// the host, through an atomic pointer.
type robotsCache struct {
	hosts *hostmap.Map[*robotsEntry]
	retry robots.Retry
	// runStart, set in a crawl that ends, is when it started: a robots.txt
	// that became unreachable since (its last attempt failed) holds the
	// host disallowed until the crawl ends, rather than until its retry,
	// which may come before the host's clock allows the request (a 503
	// with an hour's Retry-After): a verdict that expired first would let
	// the host's late links in, to wait out that clock and hold the crawl.
	runStart time.Time
}

// endOfRun is the until of a verdict that holds to the end of the crawl.
var endOfRun = time.Unix(1<<40, 0)

type robotsEntry struct {
	verdict atomic.Pointer[robotsVerdict]
	hist    robots.History // what the fetches said; the lease holder's
	// Fetch state of the redirect chain, touched by one lease at a time:
	// the host's own, or (while waiting is set and the host is parked) the
	// lease of the host a hop crossed to.
	pending string // next URL of the chain on this host; "" means /robots.txt
	hops    int
	waiting atomic.Bool // a hop is queued on another host; this host is parked
	chain   atomic.Bool // pending is set: the entry is in use, not evicted
	stored  bool        // the store was asked for an earlier run's history
}

// robotsVerdict is robots.History.Verdict's answer: judge the host's URLs by
// pol until until; with no pol, fetch the file at until (now if zero).
type robotsVerdict struct {
	pol   *robots.Policy
	until time.Time
}

// newRobotsCache keeps at most bound origins' entries in memory (0: no
// bound), least recently used evicted first. An evicted entry is only
// forgotten: its history, with the raw body of its last good file, is in
// the store (decide writes it), and the next lease of the host reads it
// back and parses the file again (ensure). An entry half way through a
// redirect chain is in use and stays.
func newRobotsCache(partitions, bound int, retry robots.Retry) *robotsCache {
	return &robotsCache{hosts: hostmap.NewBounded[*robotsEntry](partitions, bound, nil), retry: retry}
}

// Pinned says the entry is half way through a redirect chain: it stays
// in memory until the chain ends (hostmap.Pinned).
func (e *robotsEntry) Pinned() bool { return e.chain.Load() || e.waiting.Load() }

// originKey names the robots.txt a URL is judged by, scheme://authority:
// a file applies to the scheme, host and port it is served from (Google's
// documentation says so; RFC 9309 puts it at the top of its "service"), so
// http://a.test/ and https://a.test/ each have their own. Everything else
// of a host, its politeness clock first, is keyed by authority alone: the
// two schemes are one server.
func originKey(scheme, authority string) string { return scheme + "://" + authority }

// splitOrigin returns the scheme and authority of an originKey.
func splitOrigin(origin string) (scheme, authority string) {
	scheme, authority, _ = strings.Cut(origin, "://")
	return scheme, authority
}

// originHost is the authority (the frontier's host) of an originKey.
func originHost(origin string) string {
	_, a := splitOrigin(origin)
	return a
}

// robotsSchemes are the schemes whose robots.txt the crawl fetches.
var robotsSchemes = [...]string{"https", "http"}

// entry returns the origin's entry, creating it.
func (c *robotsCache) entry(origin string) *robotsEntry {
	return c.hosts.Update(origin, func(e *robotsEntry) *robotsEntry {
		if e == nil {
			e = &robotsEntry{}
		}
		return e
	})
}

// cached returns the policy the origin's URLs are judged by at now, or nil
// if there is none (never fetched, expired, or being retried after a
// failure).
func (c *robotsCache) Cached(origin string, now time.Time) *robots.Policy {
	e, ok := c.hosts.Get(origin)
	if !ok {
		return nil
	}
	if v := e.verdict.Load(); v != nil && v.pol != nil && now.Before(v.until) {
		return v.pol
	}
	return nil
}

// cachedHost is cached for the https URLs of authority, else for its http
// ones: what an operator asking about a host most likely means.
func (c *robotsCache) cachedHost(authority string, now time.Time) *robots.Policy {
	for _, s := range robotsSchemes {
		if pol := c.Cached(originKey(s, authority), now); pol != nil {
			return pol
		}
	}
	return nil
}

// parked reports whether authority waits for a robots.txt hop made on
// another host, for either of its schemes: the frontier then holds the
// host, every scheme of it.
func (c *robotsCache) parked(authority string) bool {
	for _, s := range robotsSchemes {
		if e, ok := c.hosts.Get(originKey(s, authority)); ok && e.waiting.Load() {
			return true
		}
	}
	return false
}

// verdictOf sets e's verdict from its history at now. Only the lease holder
// calls it.
func (c *robotsCache) verdictOf(e *robotsEntry, now time.Time) *robotsVerdict {
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
	v := &robotsVerdict{pol: pol, until: until}
	e.verdict.Store(v)
	return v
}

// holdUntil makes the verdict of origin that disallows everything hold
// until at least at, the host's clock after the fetch that decided it: a
// verdict that ended before the clock would let links in that can only
// wait for it (a continuous crawl, whose verdicts expire).
func (c *robotsCache) holdUntil(origin string, at time.Time) {
	e, ok := c.hosts.Get(origin)
	if !ok {
		return
	}
	if v := e.verdict.Load(); v != nil && v.pol != nil && v.pol.Outcome == robots.DisallowAll && v.until.Before(at) {
		e.verdict.Store(&robotsVerdict{pol: v.pol, until: at})
	}
}

// robotsTxt fetches and judges the robots.txt of every origin: it owns
// the cache of their verdicts (embedded: its look-ups are the crawl's) and
// the fetch state machine of each, a chain of redirects with its hops to
// other hosts, and across a cluster to other nodes (hops.go). What it
// needs of the crawl it holds: the store of earlier runs' files, the
// fetcher and the frontier whose leases its requests are made under, the
// archive, the counters, the operators' policies and fail.
type robotsTxt struct {
	*robotsCache
	token    string // the product token the files are read for
	state    *durable
	fetcher  *fetch.Fetcher
	canon    *canon.Canonicalizer
	front    *frontier.Frontier
	arch     *archive.Archiver // every robots.txt response is archived
	stats    *counters
	flog     *fetchLog    // every robots.txt request has its line
	judge    *judge.Judge // counts the requests per host, for the trap report
	policies *policy.Set  // a hop to another host obeys that host's policy too
	cluster  Cluster      // nil for a single node
	log      *slog.Logger
	fail     func(error)

	// Robots.txt hops across the nodes of a cluster (hops.go): those this
	// node asked another to make, which Run waits for, and those it makes
	// for others, by the host whose robots.txt they are for.
	hopCtx    context.Context
	hopWG     sync.WaitGroup
	hopsAsked hopsAsked // hops this node makes for other nodes (HopFor)
}

// robotsMaxHops is RFC 9309's "at least five" redirects.
const robotsMaxHops = 5

// ensure makes sure the leased host has a robots.txt policy to judge
// by. It returns the policy, or nil and the result to complete the lease
// with when there is none: the lease was spent on robots.txt (the file, or
// one hop of its redirect chain), or the file failed and is retried later
// (the result holds the host until then; its URLs wait). Each request of
// the chain is made under a lease of the host it goes to, so every one of
// them waits for that host's clock: a hop on the same host waits for the
// next lease of this host; a hop to another host is queued there
// (Item.RobotsFor) and this host is parked until it is done.
func (r *robotsTxt) ensure(ctx context.Context, l frontier.Lease, u canon.URL) (*robots.Policy, frontier.Result) {
	origin := originKey(u.Scheme, l.Host)
	e := r.entry(origin)
	if !e.stored {
		// Not seen in this process: an earlier run may have fetched it.
		e.stored = true
		hist, err := r.state.getRobots(origin, r.token)
		if err != nil {
			r.fail(fmt.Errorf("crawl: read the robots.txt of %s: %w", origin, err))
		}
		e.hist = hist
		e.verdict.Store(nil)
	}
	if e.pending == "" {
		now := time.Now()
		v := e.verdict.Load()
		if v == nil || !now.Before(v.until) {
			v = r.verdictOf(e, now)
		}
		if v.pol != nil {
			return v.pol, frontier.Result{}
		}
		if v.until.After(now) {
			// The file failed and is retried at v.until; the URL waits.
			return nil, frontier.Result{Retry: true, Hold: v.until.Sub(now), HoldRetry: true, Cause: robotsCause(&e.hist)}
		}
	}
	if e.waiting.Load() { // cannot happen while parked; never fetch twice
		return nil, frontier.Result{Retry: true, Park: true}
	}
	target := e.pending
	if target == "" {
		target = u.Scheme + "://" + u.Authority + "/robots.txt"
		e.hops = 0
	}
	res := r.step(ctx, origin, e, target)
	// The URL goes back to the head of its host's queue either way.
	res.Retry = true
	if res.Park || e.pending != "" {
		// The chain goes on. (Park first: once the hop to another host is
		// queued, that host's lease owns e, and this one must not read it.)
		return nil, res
	}
	now := time.Now()
	if v := e.verdict.Load(); v != nil && now.Before(v.until) {
		switch {
		case v.pol == nil:
			// Failed: the file is fetched again at v.until.
			res.Hold, res.HoldRetry = v.until.Sub(now), true
			res.Cause = cmp.Or(res.Cause, robotsCause(&e.hist))
		case v.pol.Outcome == robots.DisallowAll:
			// Decided: nothing of this host will be requested. Its queue
			// is dropped at once, not one URL per gap (a 503 may have
			// asked for an hour).
			res.Drain = frontier.DrainStart
			res.SetCrawlDelay, res.CrawlDelay = true, 0
		default:
			res.SetCrawlDelay, res.CrawlDelay = true, v.pol.CrawlDelay
		}
	}
	return nil, res
}

// step makes one request of the robots.txt chain of host (an
// originKey), to target, under the current lease (of target's host). It
// decides the policy, or records the next hop: on host's own server
// (pending, whatever its scheme) or on another host (a RobotsFor item
// there, with host parked).
func (r *robotsTxt) step(ctx context.Context, host string, e *robotsEntry, target string) frontier.Result {
	start := time.Now()
	r.stats.robots.Add(1)
	r.judge.Fetched(originHost(host))
	resp, err := r.fetcher.Get(ctx, target, nil)
	now := time.Now() // the answer's time: its age, and a retry's wait, count from it
	if err != nil {
		kind := fetch.KindOf(err)
		if kind == fetch.KindCanceled && ctx.Err() != nil {
			return frontier.Result{Fetched: true} // shutting down: decide nothing
		}
		r.log.Info("robots.txt unreachable", "host", host, "url", target, "err", err)
		r.stats.failed(originHost(host), kind.String())
		r.flog.write(fetchRecord{Time: start, URL: target, Host: originHost(host), DurationMS: now.Sub(start).Milliseconds(),
			Outcome: "error:" + kind.String(), Error: err.Error(), Robots: robots.DisallowAll.String()})
		pol := robots.DisallowAllPolicy(0, kind.String()+": "+err.Error(), now)
		r.decide(host, e, pol, kind.String(), nil, kind == fetch.KindRefused || kind == fetch.KindBadURL)
		res := answer.Failed(err, now.Sub(start))
		res.Cause = "robots.txt " + res.Cause
		return res
	}
	// Every answer tells the host's clock how the server is doing.
	signal, retryAfter := answer.Signal(resp, time.Now())
	answered := frontier.Result{Fetched: true, Signal: signal, RetryAfter: retryAfter, Took: resp.Duration}
	if c := answer.Cause(resp, signal); c != "" {
		answered.Cause = "robots.txt " + c
	}
	r.archive(resp)
	r.stats.bytes.Add(int64(len(resp.Body)))
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Location != "" {
		r.logAnswer(host, resp, "redirect")
		e.hops++
		if e.hops > robotsMaxHops {
			r.decide(host, e, robots.NoRulesPolicy(resp.StatusCode, now), "", nil, false)
			return answered
		}
		next, err := r.canon.Parse(resp.Location)
		if err != nil {
			r.decide(host, e, robots.NoRulesPolicy(resp.StatusCode, now), "", nil, false)
			return answered
		}
		r.stats.robotsHops.Add(1) // a hop that will be followed
		if next.Authority == originHost(host) {
			e.pending = resp.Location
			e.chain.Store(true)
			// Made for another node (HopFor): the chain goes on on its
			// host, there.
			r.hopsAsked.answer(host, RobotsAnswer{Pending: resp.Location, Hops: e.hops})
			return answered
		}
		// The chain crosses to another host: that host's clock (and its
		// own robots.txt, unless the hop is to its /robots.txt) governs
		// the request. Park this host until the hop is done.
		if r.parked(next.Authority) {
			// The other host is itself waiting on a hop: following could
			// close a cycle in which both wait forever.
			r.decide(host, e, robots.DisallowAllPolicy(resp.StatusCode, "robots.txt redirect cycle through "+next.Authority, now), "redirect-cycle", nil, false)
			return answered
		}
		e.pending = ""
		e.waiting.Store(true)
		e.chain.Store(false)
		answered.Park = true
		if r.cluster != nil {
			// In a cluster the other host's owner makes the hop, even
			// when it is this node: ownership may move before the hop's
			// turn comes, and the owner's answer comes back either way.
			r.remoteHop(host, e, resp.Location, next.Authority)
			return answered
		}
		r.front.Add(frontier.Item{URL: next.String, Fetch: resp.Location, Host: next.Authority, Priority: frontier.High, RobotsFor: host})
		return answered
	}
	pol := robots.FromStatus(resp.StatusCode, resp.Decoded, r.token, now)
	if resp.StatusCode < 300 && len(resp.Decoded) > robots.MaxBytes {
		r.stats.robotsCut.Add(1)
	}
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
	r.decide(host, e, pol, statusReason(resp.StatusCode), resp.Decoded, false)
	r.logAnswer(host, resp, pol.Outcome.String())
	return answered
}

// logAnswer writes the fetch log's line of a robots.txt request that got
// an answer: its outcome "robots", and what it made of the host.
func (r *robotsTxt) logAnswer(host string, resp *fetch.Response, outcome string) {
	r.flog.write(fetchRecord{Time: resp.Start, URL: resp.URL, Host: originHost(host), Status: resp.StatusCode, Bytes: len(resp.Body),
		DurationMS: resp.Duration.Milliseconds(), Outcome: "robots", Location: resp.Location, Robots: outcome,
		ContentType: resp.Header.Get("Content-Type"), Truncated: resp.Truncated})
}

// archive writes a robots.txt response to the archive, with its line in
// the capture index; one that cannot be written stops the crawl.
func (r *robotsTxt) archive(resp *fetch.Response) {
	cp, err := r.arch.Archive(resp, nil, nil)
	if err == nil {
		err = r.arch.Index(cp, nil)
	}
	if err != nil {
		r.fail(fmt.Errorf("crawl: %w", err))
	}
}

// hop is the lease of a host that another host's robots.txt chain
// redirected to. The request is for the other host's (the owner's, an
// originKey in l.RobotsFor) robots.txt, made under this host's clock; it
// needs this host's permission unless it asks for this host's own
// /robots.txt. pol is this host's policy for the hop's scheme, nil when
// the hop is to its /robots.txt and the policy is not known.
func (r *robotsTxt) hop(ctx context.Context, l frontier.Lease, u canon.URL, pol *robots.Policy) frontier.Result {
	owner := r.entry(l.RobotsFor)
	var res frontier.Result
	if pol != nil { // this host's clock keeps this host's Crawl-delay
		res.SetCrawlDelay, res.CrawlDelay = true, pol.CrawlDelay
	}
	if u.Path != "/robots.txt" && (pol == nil || !pol.Allowed(u.PathQuery()) || !r.policies.For(u.Authority, u.Host).Allowed(u.PathQuery())) {
		// The hop's own host (or the operator's policy for it) forbids it.
		now := time.Now()
		r.decide(l.RobotsFor, owner, robots.DisallowAllPolicy(0, "robots.txt redirects to "+u.String+", which its host disallows", now), "redirect-disallowed", nil, false)
		r.front.Unpark(originHost(l.RobotsFor))
		return res
	}
	owner.waiting.Store(false)
	step := r.step(ctx, l.RobotsFor, owner, l.Fetch)
	if !step.Park {
		// Decided, or the next hop is on the owner's own host: either way
		// the owner's next lease goes on. (Park means the chain hopped to
		// yet another host and the owner, still parked, waits for that.)
		r.front.Unpark(originHost(l.RobotsFor))
	}
	res.Fetched = step.Fetched
	return res
}

// decide adds the outcome of a robots.txt fetch to the history of host
// (an originKey), in memory and in the store (with body, the file a Rules
// policy was parsed from, so that a restart parses it again rather than
// fetching it), judges the host anew, and counts and logs what that means. A final failure is one
// that no retry can mend (the crawler itself refuses the host's address): it
// counts as all attempts spent.
func (r *robotsTxt) decide(host string, e *robotsEntry, pol *robots.Policy, reason string, body []byte, final bool) {
	e.pending, e.hops = "", 0
	e.chain.Store(false)
	e.waiting.Store(false)
	e.stored = true
	ans := RobotsAnswer{Outcome: pol.Outcome, Status: pol.Status, Err: pol.Err, FetchedAt: pol.FetchedAt, Reason: reason, Final: final}
	if pol.Outcome == robots.Rules {
		ans.Body = body[:min(len(body), robots.MaxBytes+1)] // all a parse reads, and whether there was more
	}
	defer r.hopsAsked.answer(host, ans) // once the entry is all decided: the asker may be this crawl
	before := e.hist.Failures
	e.hist.Record(pol)
	if final && pol.Outcome == robots.DisallowAll {
		e.hist.Failures = max(e.hist.Failures, r.retry.Attempts)
	}
	var err error
	if pol.Outcome == robots.DisallowAll {
		err = r.state.putRobotsFailure(host, &e.hist)
	} else {
		if pol.Outcome != robots.Rules {
			body = nil
		}
		err = r.state.putRobots(host, pol, body)
	}
	if err != nil {
		r.fail(fmt.Errorf("crawl: record the robots.txt of %s: %w", host, err))
	}
	r.stats.inc(r.stats.robotsOutc, pol.Outcome.String(), 1)
	v := r.verdictOf(e, pol.FetchedAt)
	if pol.Outcome != robots.DisallowAll {
		return
	}
	attempt := e.hist.Failures
	switch {
	case v.pol == nil:
		r.stats.robotsRetries.Add(1)
		r.log.Info("robots.txt failed; the host waits and it is fetched again", "host", host, "status", pol.Status, "err", pol.Err,
			"attempt", attempt, "of", r.retry.Attempts, "retry_in", v.until.Sub(pol.FetchedAt).Round(time.Millisecond))
	case v.pol.Outcome == robots.DisallowAll:
		if before < r.retry.Attempts { // this failure made it unreachable
			r.stats.inc(r.stats.hostsDown, reason, 1)
			r.stats.down.add(HostCause{Host: host, Cause: reason, Err: strings.TrimPrefix(pol.Err, reason+": ")})
		}
		retry := any(v.until.Sub(pol.FetchedAt).Round(time.Millisecond))
		if v.until.Equal(endOfRun) {
			retry = "not in this crawl"
		}
		r.log.Info("host not crawled: robots.txt unreachable", "host", host, "status", pol.Status, "err", pol.Err,
			"attempts", attempt, "retry_in", retry)
	case v.pol == e.hist.Good:
		r.stats.robotsLastGood.Add(1)
		r.log.Info("robots.txt unreachable; using the last good copy", "host", host, "status", pol.Status, "err", pol.Err,
			"fetched_at", v.pol.FetchedAt, "attempts", attempt)
	default:
		r.stats.robotsLastGood.Add(1)
		r.log.Info("robots.txt unreachable for the whole last-good window; crawling as if it were absent", "host", host,
			"failing_since", e.hist.FailingSince, "attempts", attempt)
	}
}

// robotsCause is what the last failed fetch of a robots.txt got, in the
// words of a host's wait (frontier.Result.Cause): "robots.txt 503",
// "robots.txt timeout".
func robotsCause(h *robots.History) string {
	if h.Status != 0 {
		return "robots.txt " + strconv.Itoa(h.Status)
	}
	kind, _, _ := strings.Cut(h.Err, ":")
	return "robots.txt " + cmp.Or(kind, "failed")
}

func statusReason(code int) string {
	if code >= 500 {
		return "robots.txt " + answer.Class(code)
	}
	if code == 429 {
		return "robots.txt 429"
	}
	return "robots.txt status " + answer.Class(code)
}
