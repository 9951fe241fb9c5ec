package crawl

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/answer"
	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/crawllog"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/render"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/state"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/warc"
)

// The rendering modes (RenderConfig.Mode): package render's.
const (
	RenderNever  = render.Never
	RenderAuto   = render.Auto
	RenderAlways = render.Always
)

// RenderConfig turns on rendering in headless Chromium (render.TierConfig).
type RenderConfig = render.TierConfig

// renderable is a fetched page rendering may read: its response, the
// record ID of its capture and the links the static parse found.
type renderable struct {
	resp     *fetch.Response
	recordID string
}

// What a render leaves beside the page's response: its settled DOM and,
// with Screenshot, a PNG of the viewport. Each is a resource record whose
// WARC-Target-URI is urn:<what>:<the page's URL>, as Browsertrix names its
// screenshots (urn:view:) and extracted text (urn:text:), and whose
// WARC-Concurrent-To is the response's record ID. The page's URL itself
// names only its response: an index keyed by URL (warcio's cdx-index, a
// replay engine that indexes the WARC itself) would list a record
// targeted at it as one more capture of the page, with no status, and
// could serve the DOM, scripts and all, in its place.
const (
	domURN  = "urn:dom:"
	viewURN = "urn:view:"
)

// resourceWriter is the archive's way to write resource records; an
// archive.Writer without it keeps no DOM.
type resourceWriter interface {
	WriteResource(warc.Resource) (warc.Location, error)
}

// renderPage renders a page the read stage found the renderer wants, and
// admits the links its settled DOM has that the static parse did not, into
// the lease's batch. The lease is still held: its host is asked nothing
// but under it, and a crash before the batch commits leaves the URL
// queued. The clock the lease leaves counts from the end of the last
// request, with the worst signal and the longest time of its requests.
func (c *Crawler) renderPage(ctx context.Context, p *pageRun, pol *robots.Policy) {
	l, lo, in := p.l, &p.out, p.render
	p.render = nil
	end := in.resp.Start.Add(in.resp.Duration)
	pf := &pageFetcher{c: c, l: l, pol: pol, page: in.resp, pb: p.pb,
		clock: c.front.Advance(l.Clock, c.policies.Delay(l, lo.res), end), serverFree: end.Add(c.cfg.IPGap)}
	res, err := c.rend.Pool.Render(ctx, in.resp.URL, pf)
	c.rend.Requests.Add(int64(res.Requests))
	c.rend.Refused.Add(int64(res.Refused))
	if pf.own > 0 {
		// The host's clock is the one the page's requests left, each
		// advanced by its own answer (a Retry-After, a backoff for each
		// 503), not the lease's advanced once.
		lo.res.Clock = &pf.clock
		lo.res.Took = max(lo.res.Took, pf.took)
		lo.res.Signal = lo.res.Signal.Worse(pf.signal)
	}
	if err != nil {
		c.rend.Fallbacks.Add(1)
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			// The node's claim on the host ran out (Cluster.Claim).
			c.log.Info("render cut short: the host is no longer this node's; the page keeps its static links", "url", l.URL)
		case ctx.Err() != nil:
			// Cut by shutdown, once --grace ran out: not the page's
			// fault, and nothing learnt of its host.
			c.log.Info("render cut short: the crawl is stopping; the page keeps its static links", "url", l.URL)
		case errors.Is(err, render.ErrBusy):
			c.log.Info("render skipped: no browser came free within --render-timeout; the page keeps its static links", "url", l.URL)
		default:
			c.log.Info("render failed: the page keeps its static links", "url", l.URL, "err", err)
			c.rend.Learn(l.Host, 0) // a render that fails finds nothing
		}
		return
	}
	c.rend.Pages.Add(1)
	static := make(map[string]bool, len(p.links))
	for _, o := range p.links {
		static[o] = true
	}
	// The DOM's links, as the static parse's: rel=nofollow ones left out
	// (by the browser's reading), at most MaxLinksPerPage of them all,
	// each judged by admission. Only those admitted are new: a link out
	// of scope or seen already is no reason to render the host again.
	found, room := 0, cmp.Or(c.cfg.MaxLinksPerPage, DefaultMaxLinksPerPage)-len(p.links)
	for _, link := range res.Links {
		if room <= 0 {
			break
		}
		lu, err := c.canon.Parse(link)
		if err != nil || static[lu.String] || (lu.Scheme != "http" && lu.Scheme != "https") {
			continue
		}
		static[lu.String] = true
		room--
		if c.admit(p.pb, judge.Candidate{URL: lu, Depth: l.Depth + 1, Priority: frontier.Normal, Via: l.URL, As: judge.AsPageLink, Page: p.alias,
			Seed: l.Seed, Path: crawllog.Extend(l.Path, crawllog.Link)}) == "" {
			found++
		}
	}
	c.rend.NewLinks.Add(int64(found))
	c.rend.Learn(l.Host, found)
	if rw, ok := c.warc.(resourceWriter); ok {
		now := time.Now()
		if limit := c.cfg.Fetch.MaxBodyBytes; limit > 0 && int64(len(res.DOM)) > limit {
			c.log.Info("render: the rendered DOM is over --max-body: not archived", "url", l.URL, "bytes", len(res.DOM))
		} else if _, err := rw.WriteResource(warc.Resource{Type: "resource", URL: domURN + in.resp.URL, Date: now, RefersTo: in.recordID, ContentType: "text/html; charset=utf-8", Block: res.DOM}); err != nil {
			c.fail(fmt.Errorf("crawl: archive the rendered DOM of %s: %w", l.URL, err))
		}
		if res.Screenshot != nil {
			if _, err := rw.WriteResource(warc.Resource{Type: "resource", URL: viewURN + in.resp.URL, Date: now, RefersTo: in.recordID, ContentType: "image/png", Block: res.Screenshot}); err != nil {
				c.fail(fmt.Errorf("crawl: archive the screenshot of %s: %w", l.URL, err))
			}
		}
	}
}

// errRefused is a browser request weft will not make.
type errRefused struct{ why string }

func (e errRefused) Error() string { return "render: request refused: " + e.why }

// pageFetcher makes a rendering page's requests through the crawl's fetch
// path (render.Fetcher).
type pageFetcher struct {
	c    *Crawler
	l    frontier.Lease
	pol  *robots.Policy // the lease's host's robots.txt
	page *fetch.Response

	pbMu sync.Mutex
	pb   *state.Batch

	// ownMu keeps one request at a time to the lease's server: to its
	// host, under the lease, and to the server's other hosts under leases
	// borrowed beside it (frontier.Lease.SameServer).
	ownMu      sync.Mutex
	serverFree time.Time // when the next of those may start: the last one's end and the server's gap
	clock      frontier.Clock
	own        int // requests to the lease's host
	took       time.Duration
	signal     frontier.Signal
}

// serverDone records, holding ownMu, that a request to the lease's server
// ended with res, leaving its host's clock: the server's next request
// waits its gap, and after strain (a timeout, a reset: the server may
// still be working) the strained host's backoff too, as the frontier
// holds a server group.
func (f *pageFetcher) serverDone(res frontier.Result, clock frontier.Clock) {
	now := time.Now()
	f.serverFree = now.Add(f.c.cfg.IPGap)
	if res.Signal == frontier.Strained {
		f.serverFree = later(f.serverFree, now.Add(clock.Backoff))
	}
}

// waitServer waits, holding ownMu, until the lease's server may be asked
// again.
func (f *pageFetcher) waitServer(ctx context.Context, until time.Time) error {
	until = later(until, f.serverFree)
	if wait := time.Until(until); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Fetch answers the page's own document from the lease's response, and
// makes every other request under its host's clock.
func (f *pageFetcher) Fetch(ctx context.Context, r render.Request) (*render.Response, error) {
	if r.Main {
		return &render.Response{Status: f.page.StatusCode, Header: f.page.Header, Body: f.page.Decoded}, nil
	}
	if r.Method != http.MethodGet {
		return nil, errRefused{"weft asks with GET only, not " + r.Method}
	}
	u, err := f.c.canon.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, errRefused{"not an http(s) URL: " + r.URL}
	}
	if err := f.c.fetcher.Permits(u.Host); err != nil {
		return nil, errRefused{err.Error()}
	}
	if !f.c.cfg.Policies.For(u.Authority, u.Host).Allowed(u.PathQuery()) {
		return nil, errRefused{"the operator's policy disallows " + u.String}
	}
	if resp, ok, err := f.recalled(u); ok {
		return resp, err
	}
	if u.Authority == f.l.Host {
		return f.ownHost(ctx, u, r.Type)
	}
	return f.otherHost(ctx, u, r.Type)
}

// recalled answers a request for a URL the crawl has fetched (a page, a
// requisite, another render's request) from its capture: no request, and
// no wait for its host. ok is false when there is none to answer from (or
// it cannot be read back): the URL is then fetched.
func (f *pageFetcher) recalled(u canon.URL) (resp *render.Response, ok bool, err error) {
	c := f.c
	if c.replay == nil {
		return nil, false, nil
	}
	rec, ok, err := c.lastCapture(u, time.Time{})
	if err != nil {
		c.log.Warn("render: the capture index could not be read: the request is fetched", "url", u.String, "err", err)
		return nil, false, nil
	}
	if !ok {
		return nil, false, nil
	}
	resp, err = c.recall(rec)
	if _, refused := err.(errRefused); err != nil && !refused {
		c.log.Warn("render: a capture could not be read back: the request is fetched", "url", u.String, "err", err)
		return nil, false, nil
	}
	c.rend.Recalled.Add(1)
	return resp, true, err
}

// ownHost makes a request to the lease's host, under the lease: one at a
// time, each after the gap the host's clock asks from the one before.
func (f *pageFetcher) ownHost(ctx context.Context, u canon.URL, typ string) (*render.Response, error) {
	if !f.pol.Allowed(u.PathQuery()) {
		return nil, errRefused{"robots.txt disallows " + u.String}
	}
	f.ownMu.Lock()
	defer f.ownMu.Unlock()
	if err := f.waitServer(ctx, f.clock.NextAt); err != nil {
		return nil, err
	}
	if resp, ok, err := f.recalled(u); ok {
		// Fetched while this request waited its turn (the browser asked
		// for it twice at once): answered from that capture.
		return resp, err
	}
	resp, res, err := f.get(ctx, u, typ)
	res.SetCrawlDelay, res.CrawlDelay = true, f.pol.CrawlDelay
	res = f.c.policies.Delay(f.l, res) // an operator's longer delay, as finish applies it
	if res.Fetched {
		f.clock = f.c.front.Advance(f.clock, res, time.Now())
		f.serverDone(res, f.clock)
		f.own++
		f.took = max(f.took, res.Took)
		f.signal = f.signal.Worse(res.Signal)
	}
	return resp, err
}

// otherHost makes a request to another host under a lease borrowed from
// the frontier, which gives it when that host's clock allows, after its
// robots.txt is known (fetched under such a lease too).
func (f *pageFetcher) otherHost(ctx context.Context, u canon.URL, typ string) (*render.Response, error) {
	if !f.c.cluster.Owns(u.Authority) {
		// Its clock is another node's: asking here could overlap that
		// node's requests.
		return nil, errRefused{u.Authority + " is another node's host"}
	}
	for {
		bl, err := f.c.front.Borrow(ctx, u.Authority, u.String, f.l)
		if err != nil {
			return nil, err
		}
		switch bl.Mode {
		case frontier.ModeGiveUp, frontier.ModeDrain:
			f.c.front.Complete(bl, frontier.Result{})
			return nil, errRefused{u.Authority + " is given up, or robots.txt disallows it all"}
		case frontier.ModeFindGroup:
			f.c.front.Complete(bl, groupOf(ctx, f.c.fetcher, f.c.cfg.IPGroup, u.Host))
			continue
		}
		if bl.SameServer {
			// The lease's server: one request at a time with the page's
			// own, and the server's gap between them.
			f.ownMu.Lock()
			if err := f.waitServer(ctx, time.Time{}); err != nil {
				f.ownMu.Unlock()
				f.completeBorrowed(bl, frontier.Result{})
				return nil, err
			}
		}
		if resp, ok, err := f.recalled(u); ok {
			// Fetched while this request waited for the host (by the
			// requisite's own lease, or another render): answered from
			// that capture, and the borrowed lease given back unused.
			f.completeBorrowed(bl, frontier.Result{})
			if bl.SameServer {
				f.ownMu.Unlock()
			}
			return resp, err
		}
		resp, res, again, err := f.borrowed(ctx, bl, u, typ)
		clock := f.completeBorrowed(bl, res)
		if bl.SameServer {
			if res.Fetched {
				f.serverDone(res, clock)
			}
			f.ownMu.Unlock()
		}
		if again {
			continue // robots.txt known now (or its chain goes on): ask again
		}
		return resp, err
	}
}

// borrowed makes the request of a borrowed lease: the host's robots.txt
// first if it is not known yet (again is then set: borrow once more for
// the URL), or the URL.
func (f *pageFetcher) borrowed(ctx context.Context, bl frontier.Lease, u canon.URL, typ string) (resp *render.Response, res frontier.Result, again bool, err error) {
	pol, spent := f.c.robots.Ensure(ctx, bl, u)
	if pol == nil {
		if spent.Hold > 0 || spent.Drain == frontier.DrainStart {
			return nil, spent, false, errRefused{"robots.txt of " + u.Authority + " failed, or disallows it all"}
		}
		if ctx.Err() != nil {
			return nil, spent, false, ctx.Err()
		}
		return nil, spent, true, nil
	}
	if !pol.Allowed(u.PathQuery()) {
		return nil, frontier.Result{SetCrawlDelay: true, CrawlDelay: pol.CrawlDelay}, false, errRefused{"robots.txt disallows " + u.String}
	}
	resp, res, err = f.get(ctx, u, typ)
	res.SetCrawlDelay, res.CrawlDelay = true, pol.CrawlDelay
	return resp, res, false, err
}

// completeBorrowed completes a borrowed lease as a worker's is completed:
// the host's new clock is computed from the lease's, counted, written to
// the store before the frontier hears of it when a restart would not
// assume as much (a backoff, a Retry-After, a park), and announced to the
// cluster. It is written in a batch of its own, not the page's, which
// commits later: by then a worker's lease on the host may have written a
// newer clock.
func (f *pageFetcher) completeBorrowed(bl frontier.Lease, res frontier.Result) frontier.Clock {
	c := f.c
	hb := c.state.NewBatch()
	res, durable := c.front.Settle(bl, c.policies.Delay(bl, res), time.Now(), hb)
	clock := *res.Clock
	c.countClock(bl, res, clock)
	if durable {
		switch err := hb.Commit(c.seen, c.front); {
		case errors.Is(err, ErrStopping):
		case err != nil:
			c.fail(fmt.Errorf("crawl: record the clock of %s: %w", bl.Host, err))
		default:
			c.cluster.Clocked(bl.Host, clock)
		}
	} else {
		hb.Batch.Close()
	}
	c.front.Complete(bl, res)
	return clock
}

// get makes one request, archives its exchange with the page's batch, and
// returns the answer for the browser, refused if a cap cut it. typ is
// what the page asked for it as (render.Request.Type).
func (f *pageFetcher) get(ctx context.Context, u canon.URL, typ string) (*render.Response, frontier.Result, error) {
	c := f.c
	c.judge.Fetched(u.Authority)
	start := time.Now()
	resp, err := c.fetcher.Get(ctx, u.String, nil)
	// Whatever the page's browser asks for is embedded in the page.
	path := crawllog.Extend(f.l.Path, crawllog.Embed)
	if err != nil {
		kind := fetch.KindOf(err)
		fetched, signal := answer.ErrorSignal(kind)
		c.log.Info("render: a page's request failed", "page", f.l.URL, "url", u.String, "err", err)
		c.flog.Write(fetchlog.Record{Time: start, DurationMS: time.Since(start).Milliseconds(), URL: u.String, Host: u.Authority, Depth: f.l.Depth + 1, Via: f.l.URL,
			Outcome: "error:" + kind.String(), Error: err.Error(), Path: path, Worker: fetchlog.WorkerOf(ctx), Unsent: fetch.Unsent(err)})
		return nil, frontier.Result{Fetched: fetched, Signal: signal}, err
	}
	signal, retryAfter := answer.Signal(resp, time.Now())
	res := frontier.Result{Fetched: true, Signal: signal, RetryAfter: retryAfter, Took: resp.Duration}
	f.pbMu.Lock()
	cp := c.archiveResp(resp, f.pb, &u)
	c.index(cp, f.pb)
	f.pbMu.Unlock()
	// In the fetch log as the page's requisite, asked by its browser.
	c.flog.Write(fetchlog.Record{Time: resp.Start, URL: u.String, Host: u.Authority, Status: resp.StatusCode, Bytes: len(resp.Body),
		DurationMS: resp.Duration.Milliseconds(), Depth: f.l.Depth + 1, Via: f.l.URL, ContentType: resp.Header.Get("Content-Type"),
		Truncated: resp.Truncated, WARCFile: cp.Loc.File, WARCOffset: cp.Loc.Offset, Outcome: outcomeRendered,
		Path: path, Worker: fetchlog.WorkerOf(ctx), SHA1: archive.DigestString(cp.Digest), RevisitOf: revisitOf(cp)})
	if resp.Truncated != "" || resp.Refused || resp.DecodeErr != nil {
		return nil, res, errRefused{fmt.Sprintf("%s cut or refused by a cap (%s)", u.String, cmp.Or(resp.Truncated, "media policy or decoding"))}
	}
	if requisiteType(typ) && recallable(cp.Rec, time.Time{}) {
		f.fetchedRequisite(u, resp)
	}
	return &render.Response{Status: resp.StatusCode, Header: resp.Header, Body: resp.Decoded}, res, nil
}

// outcomeRendered is the outcome of a request a render made (in the fetch
// log), and of a requisite's lease done without one, a render having
// fetched its URL.
const outcomeRendered = "rendered"

// requisiteType reports whether a page asks for a URL of type (as CDP
// names it) as a requisite, one --requisites would fetch: not a frame's
// document, which is a page to crawl, nor the data a script asks for.
func requisiteType(typ string) bool {
	switch typ {
	case "Stylesheet", "Script", "Image", "Font", "Media", "TextTrack", "Manifest", "Other":
		return true
	}
	return false
}

// fetchedRequisite records that the render fetched u, a requisite, whole,
// in the page's batch: the URL is done if the page queued it (its lease
// would fetch it again), else seen, so that no page's requisite list
// queues it; and a style sheet's own requisites are queued, as its lease
// would have queued them.
func (f *pageFetcher) fetchedRequisite(u canon.URL, resp *fetch.Response) {
	c := f.c
	f.pbMu.Lock()
	defer f.pbMu.Unlock()
	pb := f.pb
	rec := store.URLRecord{URL: u.String, Depth: f.l.Depth + 1, Status: store.URLDone,
		LastFetch: resp.Start, LastStatus: resp.StatusCode, LastOutcome: outcomeRendered}
	if i := slices.IndexFunc(pb.Items, func(it frontier.Item) bool { return it.URL == u.String && it.Requisite }); i >= 0 {
		// Queued by this page a moment ago, its batch not committed.
		it := pb.Items[i]
		pb.Items = slices.Delete(pb.Items, i, i+1)
		rec.Depth, rec.Priority = it.Depth, uint8(it.Priority)
		pb.Batch.PutURL(uint16(partition.Of(it.Host, c.cfg.Partitions)), it.Host, seen.KeyOf(it.URL), rec)
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			c.stats.requisitesArchived.Add(1)
		}
	} else if c.cluster.Owns(u.Authority) {
		_, err := c.seen.Add(u.Authority, u.String, func(part int, k seen.Key) (bool, error) {
			pb.Batch.PutURL(uint16(part), u.Authority, k, rec)
			pb.Pending = append(pb.Pending, seen.Pending{Partition: part, Key: k})
			return true, nil
		})
		if err != nil {
			c.fail(fmt.Errorf("crawl: record %s, which a render fetched: %w", u.String, err))
		}
	}
	if c.cfg.NoRequisites || mediaType(resp) != "text/css" {
		return
	}
	base, err := c.canon.NewBase(u.String)
	if err != nil {
		return
	}
	as := judge.AsSheetRequisite
	if c.scope.Within(u) {
		as = judge.AsRequisite
	}
	sheet := content.Requisites{}.Read(content.Doc{URL: u.String, MediaType: "text/css", Header: resp.Header, Body: resp.Decoded,
		Embeds: true, MaxLinks: c.cfg.MaxLinksPerPage})
	for _, src := range sheet.Embeds {
		eu, err := base.Resolve(src)
		if err != nil {
			c.judge.Count(judge.Invalid, 1)
			continue
		}
		c.stats.requisitesFound.Add(1)
		if c.admit(pb, judge.Candidate{URL: eu, Depth: f.l.Depth + 2, Priority: frontier.Normal, Via: u.String, As: as,
			Seed: f.l.Seed, Path: crawllog.Extend(crawllog.Extend(f.l.Path, crawllog.Embed), crawllog.Embed)}) == "" {
			c.stats.requisitesQueued.Add(1)
		}
	}
}

// renderedAlready reports, for a requisite's lease, whether a render has
// fetched its URL since it was queued: the lease is then done without a
// request, its host's clock untouched. In a crawl that ends a requisite
// is queued once, so any capture of it counts; in continuous mode, one
// made since it was queued (less a render's budget: the page that queued
// it may have been rendered before its batch committed).
func (c *Crawler) renderedAlready(l frontier.Lease, u canon.URL) (leaseOutcome, bool) {
	var since time.Time
	if c.cfg.Recrawl != nil {
		since = l.Added.Add(-cmp.Or(c.cfg.Render.Timeout, 30*time.Second))
	}
	rec, ok, err := c.lastCapture(u, since)
	if err != nil {
		c.log.Warn("render: the capture index could not be read: the requisite is fetched", "url", l.URL, "err", err)
		return leaseOutcome{}, false
	}
	if !ok {
		return leaseOutcome{}, false
	}
	c.rend.Spared.Add(1)
	if rec.Status >= 200 && rec.Status < 300 {
		c.stats.requisitesArchived.Add(1)
	}
	return leaseOutcome{status: rec.Status, outcome: outcomeRendered}, true
}

var _ render.Fetcher = (*pageFetcher)(nil)
