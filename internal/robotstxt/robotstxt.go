// Package robotstxt fetches and judges each origin's robots.txt under the
// hosts' leases: the verdict of every origin (Cache), read by whoever
// admits a URL, and the fetch of each file, a chain of redirects whose
// every request waits for the clock of the host it goes to, across hosts
// and, in a cluster, across nodes. Parsing a file and its retry history
// are package robots'.
package robotstxt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/answer"
	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/crawllog"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/report"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/store"
)

// Getter makes one bounded GET (fetch.Fetcher's Get): no response is an
// error that fetch.KindOf classifies.
type Getter interface {
	Get(ctx context.Context, rawURL string, header http.Header) (*fetch.Response, error)
}

// Frontier is where a hop to another host is queued, under that host's
// clock (frontier.Item.RobotsFor), and where the host whose chain it is
// waits parked until the hop is done.
type Frontier interface {
	Add(items ...frontier.Item)
	// Unpark lets the parked host be leased again.
	Unpark(host string)
}

// Archiver writes a response to the archive and its line to the capture
// index (archive.Archiver; robots.txt has no staging or page URL).
type Archiver interface {
	Archive(resp *fetch.Response, st *archive.Staging, u *canon.URL) (archive.Capture, error)
	Index(cp archive.Capture, st *archive.Staging) error
}

// FetchLog takes the fetch log's line of each robots.txt request
// (fetchlog.Log).
type FetchLog interface {
	Write(fetchlog.Record)
}

// Requests counts the requests made to each host, robots.txt's with the
// pages' (judge.Judge.Fetched): the trap report weighs a host's URLs
// against them.
type Requests interface {
	Fetched(host string)
}

// Policies are the operators' policies (policy.Set): a hop to another
// host obeys that host's policy too.
type Policies interface {
	For(authority, host string) *policy.Policy
}

// Cluster asks the owner of a host of another partition to make a hop
// there (crawl.Cluster's RobotsHop): it returns that node's Files.HopFor
// answer.
type Cluster interface {
	RobotsHop(ctx context.Context, forHost, target, targetHost string, hops int) (Answer, error)
}

// Config is what Files needs of the crawl. Every field is required but
// Cluster.
type Config struct {
	Cache *Cache // the verdicts, which Files decides
	Token string // the product token the files are read for
	// DB keeps each origin's history and its last good file, for the
	// next run; Partitions is the crawl's partition count.
	DB         *store.DB
	Partitions int
	Fetcher    Getter
	Canon      *canon.Canonicalizer
	Frontier   Frontier
	Archive    Archiver // every robots.txt response is archived
	FetchLog   FetchLog // every robots.txt request has its line
	Requests   Requests
	Policies   Policies
	// Cluster, on a crawl spread over several nodes, asks the owner of a
	// hop's host to make it; nil for a crawl on one node, which queues
	// the hop on its own frontier.
	Cluster Cluster
	Log     *slog.Logger
	// Fail stops the crawl: a response that cannot be archived, or an
	// answer that cannot be read from or recorded in the store.
	Fail func(error)
}

// Files fetches and judges the robots.txt of every origin: it owns the
// cache of their verdicts (embedded: its look-ups are the crawl's) and the
// fetch state machine of each, a chain of redirects with its hops to other
// hosts, and across a cluster to other nodes (hops.go). It counts what
// the fetches did (Counts).
type Files struct {
	*Cache
	token    string
	kept     kept
	parts    int
	fetcher  Getter
	canon    *canon.Canonicalizer
	front    Frontier
	arch     Archiver
	flog     FetchLog
	requests Requests
	policies Policies
	log      *slog.Logger
	fail     func(error)
	counts   *counts

	// Robots.txt hops to other hosts (hops.go): where they are made (this
	// node's frontier, or their host's owner), the context those asked of
	// other nodes wait under, and those this node makes for others, by the
	// host whose robots.txt they are for.
	hops      hopper
	hopCtx    context.Context
	hopsAsked hopsAsked // hops this node makes for other nodes (HopFor)
}

// New returns the Files of cfg. Begin it before the first lease.
func New(cfg Config) *Files {
	var hops hopper = hopHere{}
	if cfg.Cluster != nil { // the one place that asks: hopper says the rest
		hops = &byOwner{cluster: cfg.Cluster}
	}
	return &Files{
		Cache: cfg.Cache, token: cfg.Token, kept: kept{db: cfg.DB, parts: cfg.Partitions}, parts: cfg.Partitions,
		fetcher: cfg.Fetcher, canon: cfg.Canon, front: cfg.Frontier, arch: cfg.Archive, flog: cfg.FetchLog,
		requests: cfg.Requests, policies: cfg.Policies, log: cfg.Log, fail: cfg.Fail, counts: newCounts(), hops: hops,
	}
}

// Counts returns what the robots.txt fetches did so far, from any
// goroutine.
func (r *Files) Counts() Counts { return r.counts.snapshot() }

// maxHops is RFC 9309's "at least five" redirects.
const maxHops = 5

// Ensure makes sure the leased host has a robots.txt policy to judge
// by. It returns the policy, or nil and the result to complete the lease
// with when there is none: the lease was spent on robots.txt (the file, or
// one hop of its redirect chain), or the file failed and is retried later
// (the result holds the host until then; its URLs wait). Each request of
// the chain is made under a lease of the host it goes to, so every one of
// them waits for that host's clock: a hop on the same host waits for the
// next lease of this host; a hop to another host is queued there
// (Item.RobotsFor) and this host is parked until it is done.
func (r *Files) Ensure(ctx context.Context, l frontier.Lease, u canon.URL) (*robots.Policy, frontier.Result) {
	origin := Origin(u.Scheme, l.Host)
	e := r.entry(origin)
	if !e.stored {
		// Not seen in this process: an earlier run may have fetched it.
		e.stored = true
		hist, err := r.kept.get(origin, r.token)
		if err != nil {
			r.fail(fmt.Errorf("robotstxt: read the robots.txt of %s: %w", origin, err))
		}
		e.hist = hist
		e.verdict.Store(nil)
	}
	if e.pending == "" {
		now := time.Now()
		v := e.verdict.Load()
		if v == nil || !now.Before(v.until) {
			v = r.verdictOf(e, now)
			r.delayRefused(origin, v) // judged by a file an earlier run kept, say
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
	res := r.step(ctx, origin, e, target, l)
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

// step makes one request of the robots.txt chain of host (an Origin), to
// target, under the current lease by (of target's host). It decides the
// policy, or records the next hop: on host's own server (pending,
// whatever its scheme) or on another host (a RobotsFor item there, with
// host parked).
func (r *Files) step(ctx context.Context, host string, e *entry, target string, by frontier.Lease) frontier.Result {
	lg := loggedAs(ctx, by)
	if e.hops > 0 {
		lg.via, lg.path = e.next.via, e.next.path
	}
	start := time.Now()
	r.counts.fetches.Add(1)
	r.requests.Fetched(Authority(host))
	resp, err := r.fetcher.Get(ctx, target, nil)
	now := time.Now() // the answer's time: its age, and a retry's wait, count from it
	if err != nil {
		kind := fetch.KindOf(err)
		if kind == fetch.KindCanceled && ctx.Err() != nil {
			return frontier.Result{Fetched: true} // shutting down: decide nothing
		}
		r.log.Info("robots.txt unreachable", "host", host, "url", target, "err", err)
		r.counts.fail(Authority(host), kind.String())
		r.flog.Write(fetchlog.Record{Time: start, URL: target, Host: Authority(host), DurationMS: now.Sub(start).Milliseconds(),
			Outcome: "error:" + kind.String(), Error: err.Error(), Robots: robots.DisallowAll.String(),
			Via: lg.via, Path: lg.path, Worker: lg.worker, Unsent: fetch.Unsent(err)})
		pol := robots.DisallowAllPolicy(0, kind.String()+": "+err.Error(), now)
		// Final when no retry can mend it: the guard refuses the address,
		// the URL cannot be asked, or the name does not exist.
		r.decide(host, e, pol, kind.String(), nil, kind == fetch.KindRefused || kind == fetch.KindBadURL || fetch.NoSuchHost(err))
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
	lg.sha1 = r.archive(resp)
	r.counts.bytes.Add(int64(len(resp.Body)))
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Location != "" {
		r.logAnswer(host, resp, "redirect", lg)
		e.hops++
		e.next = logged{via: resp.URL, path: crawllog.Extend(lg.path, crawllog.Redirect)}
		if e.hops > maxHops {
			r.decide(host, e, robots.NoRulesPolicy(resp.StatusCode, now), "", nil, false)
			return answered
		}
		next, err := r.canon.Parse(resp.Location)
		if err != nil {
			r.decide(host, e, robots.NoRulesPolicy(resp.StatusCode, now), "", nil, false)
			return answered
		}
		r.counts.hops.Add(1) // a hop that will be followed
		if next.Authority == Authority(host) {
			e.pending = resp.Location
			e.chain.Store(true)
			// Made for another node (HopFor): the chain goes on on its
			// host, there.
			r.hopsAsked.answer(host, Answer{Pending: resp.Location, Hops: e.hops})
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
		r.hops.hop(r, host, e, resp.Location, next)
		return answered
	}
	pol := robots.FromStatus(resp.StatusCode, resp.Decoded, r.token, now)
	if resp.StatusCode < 300 && len(resp.Decoded) > robots.MaxBytes {
		r.counts.cut.Add(1)
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
	r.logAnswer(host, resp, pol.Outcome.String(), lg)
	return answered
}

// logged is what a robots.txt request's line of the fetch log says of
// how it came to be made, as Heritrix logs a prerequisite: the URL that
// needed it (via) and that URL's discovery path and P, or after a
// redirect of the chain the URL that redirected and its path and R; the
// worker that made it; and once archived, its payload's digest.
type logged struct {
	via, path, sha1 string
	worker          int
}

// loggedAs is what the line of the first request of a chain made under
// the lease by says of it.
func loggedAs(ctx context.Context, by frontier.Lease) logged {
	return logged{via: by.URL, path: crawllog.Extend(by.Path, crawllog.Prerequisite), worker: fetchlog.WorkerOf(ctx)}
}

// logAnswer writes the fetch log's line of a robots.txt request that got
// an answer: its outcome "robots", and what it made of the host.
func (r *Files) logAnswer(host string, resp *fetch.Response, outcome string, lg logged) {
	r.flog.Write(fetchlog.Record{Time: resp.Start, URL: resp.URL, Host: Authority(host), Status: resp.StatusCode, Bytes: len(resp.Body),
		DurationMS: resp.Duration.Milliseconds(), Outcome: "robots", Location: resp.Location, Robots: outcome,
		ContentType: resp.Header.Get("Content-Type"), Truncated: resp.Truncated,
		Via: lg.via, Path: lg.path, Worker: lg.worker, SHA1: lg.sha1})
}

// archive writes a robots.txt response to the archive, with its line in
// the capture index, and returns its payload digest as the WARC record
// has it; one that cannot be written stops the crawl.
func (r *Files) archive(resp *fetch.Response) string {
	cp, err := r.arch.Archive(resp, nil, nil)
	if err == nil {
		err = r.arch.Index(cp, nil)
	}
	if err != nil {
		r.fail(fmt.Errorf("robotstxt: %w", err))
	}
	return archive.DigestString(cp.Digest)
}

// Hop is the lease of a host that another host's robots.txt chain
// redirected to. The request is for the other host's (the owner's, an
// Origin in l.RobotsFor) robots.txt, made under this host's clock; it
// needs this host's permission unless it asks for this host's own
// /robots.txt. pol is this host's policy for the hop's scheme, nil when
// the hop is to its /robots.txt and the policy is not known.
func (r *Files) Hop(ctx context.Context, l frontier.Lease, u canon.URL, pol *robots.Policy) frontier.Result {
	owner := r.entry(l.RobotsFor)
	var res frontier.Result
	if pol != nil { // this host's clock keeps this host's Crawl-delay
		res.SetCrawlDelay, res.CrawlDelay = true, pol.CrawlDelay
	}
	if u.Path != "/robots.txt" && (pol == nil || !pol.Allowed(u.PathQuery()) || !r.policies.For(u.Authority, u.Host).Allowed(u.PathQuery())) {
		// The hop's own host (or the operator's policy for it) forbids it.
		now := time.Now()
		r.decide(l.RobotsFor, owner, robots.DisallowAllPolicy(0, "robots.txt redirects to "+u.String+", which its host disallows", now), "redirect-disallowed", nil, false)
		r.front.Unpark(Authority(l.RobotsFor))
		return res
	}
	owner.waiting.Store(false)
	step := r.step(ctx, l.RobotsFor, owner, l.Fetch, l)
	if !step.Park {
		// Decided, or the next hop is on the owner's own host: either way
		// the owner's next lease goes on. (Park means the chain hopped to
		// yet another host and the owner, still parked, waits for that.)
		r.front.Unpark(Authority(l.RobotsFor))
	}
	res.Fetched = step.Fetched
	return res
}

// HopGivenUp ends the robots.txt chain that hopped to l's host, a host
// given up: the chain's owner (l.RobotsFor) is left with no rules it can
// read, which is "unreachable", and no retry can mend it.
func (r *Files) HopGivenUp(l frontier.Lease) {
	r.decide(l.RobotsFor, r.entry(l.RobotsFor), robots.DisallowAllPolicy(0, "robots.txt redirects to "+l.Host+", which was given up", time.Now()), "redirect-gave-up", nil, true)
	r.front.Unpark(Authority(l.RobotsFor))
}

// decide adds the outcome of a robots.txt fetch to the history of host
// (an Origin), in memory and in the store (with body, the file a Rules
// policy was parsed from, so that a restart parses it again rather than
// fetching it), judges the host anew, and counts and logs what that
// means. A final failure is one that no retry can mend (the crawler
// itself refuses the host's address, the name does not exist): it counts
// as all attempts spent.
func (r *Files) decide(host string, e *entry, pol *robots.Policy, reason string, body []byte, final bool) {
	e.pending, e.hops = "", 0
	e.chain.Store(false)
	e.waiting.Store(false)
	e.stored = true
	ans := Answer{Outcome: pol.Outcome, Status: pol.Status, Err: pol.Err, FetchedAt: pol.FetchedAt, Reason: reason, Final: final}
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
		err = r.kept.putFailure(host, &e.hist)
	} else {
		if pol.Outcome != robots.Rules {
			body = nil
		}
		err = r.kept.put(host, pol, body)
	}
	if err != nil {
		r.fail(fmt.Errorf("robotstxt: record the robots.txt of %s: %w", host, err))
	}
	r.counts.outcome(pol.Outcome.String())
	v := r.verdictOf(e, pol.FetchedAt)
	if pol.Outcome != robots.DisallowAll {
		r.delayRefused(host, v)
		return
	}
	attempt := e.hist.Failures
	switch {
	case v.pol == nil:
		r.counts.retries.Add(1)
		r.log.Info("robots.txt failed; the host waits and it is fetched again", "host", host, "status", pol.Status, "err", pol.Err,
			"attempt", attempt, "of", r.retry.Attempts, "retry_in", v.until.Sub(pol.FetchedAt).Round(time.Millisecond))
	case v.pol.Outcome == robots.DisallowAll:
		if before < r.retry.Attempts { // this failure made it unreachable
			r.counts.down(report.HostCause{Host: host, Cause: reason, Err: strings.TrimPrefix(pol.Err, reason+": ")})
		}
		retry := any(v.until.Sub(pol.FetchedAt).Round(time.Millisecond))
		if v.until.Equal(endOfRun) {
			retry = "not in this crawl"
		}
		r.log.Info("host not crawled: robots.txt unreachable", "host", host, "status", pol.Status, "err", pol.Err,
			"attempts", attempt, "retry_in", retry)
	case v.pol == e.hist.Good:
		r.counts.lastGood.Add(1)
		r.log.Info("robots.txt unreachable; using the last good copy", "host", host, "status", pol.Status, "err", pol.Err,
			"fetched_at", v.pol.FetchedAt, "attempts", attempt)
	default:
		r.counts.lastGood.Add(1)
		r.log.Info("robots.txt unreachable for the whole last-good window; crawling as if it were absent", "host", host,
			"failing_since", e.hist.FailingSince, "attempts", attempt)
	}
}

// delayRefused counts and logs, once in the crawl, a host (an Origin) not
// crawled because its robots.txt asks for a longer Crawl-delay than the
// crawl waits (robots.DelayRefusedPolicy), whichever fetch or run found
// it so.
func (r *Files) delayRefused(host string, v *verdict) {
	if v.pol == nil || !v.pol.DelayRefused || !r.counts.downOnce(report.HostCause{Host: host, Cause: CauseCrawlDelay, Err: v.pol.Err}) {
		return
	}
	r.log.Info("host not crawled: its robots.txt asks for a longer Crawl-delay than the crawl waits (--max-crawl-delay)", "host", host,
		"why", v.pol.Err)
}

// CauseCrawlDelay is the cause a host not crawled for its Crawl-delay is
// counted under (Counts.HostsDown), as judge.CrawlDelay names its URLs'
// refusals.
const CauseCrawlDelay = "crawl-delay"

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

// statusReason is the hosts-down reason of a robots.txt that answered
// code and made its host unreachable: "robots.txt 5xx", "robots.txt 429".
func statusReason(code int) string {
	if code >= 500 {
		return "robots.txt " + answer.Class(code)
	}
	if code == 429 {
		return "robots.txt 429"
	}
	return "robots.txt status " + answer.Class(code)
}
