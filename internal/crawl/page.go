package crawl

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/simhash"
	"github.com/weft-crawler/weft/internal/store"
)

// pageRun is one lease on its way through the crawl:
//
//	route → fetch → archive → read → judge links → conclude → commit → complete
//
// Each stage is a method of the crawler that takes the run, reads what
// the stages before it left and leaves what it decided: handle routes
// it, runPage takes it from fetch to conclude, finish commits and
// completes it. A lease that fetches no page
// (its host's robots.txt, a drain, a refusal) goes from the route to the
// commit with out set.
type pageRun struct {
	l  frontier.Lease
	pb *pageBatch // everything the lease changes, committed at once
	u  canon.URL  // l.URL, parsed

	// fetch: what the last visit left (continuous mode), for a
	// conditional request, and the answer.
	prev  store.URLRecord
	first store.DigestRecord // the capture prev's payload digest names
	cond  http.Header
	resp  *fetch.Response

	// archive
	cp          archive.Capture
	archived    bool // cp is in the WARC file
	notModified bool // a 304 to the conditional request: a revisit of first
	indexed     bool // cp's line of the capture index is staged
	mt          string
	rec         fetchRecord // its line of the fetch log

	// read: the links and requisites found, for the judge; every link
	// that resolved (the page's outlinks, followed or not); the pages
	// it votes for (in-links).
	read     bool
	followed bool
	found    []found
	links    []string
	votes    map[seen.Key]bool
	alias    string      // the page's URL when it answered 200 whole: see judge.Candidate.Page
	render   *renderable // an HTML page the renderer may read

	out leaseOutcome
}

// found is a URL a page leads to (a link, a requisite, a redirect's
// target, a sitemap a robots.txt names), on its way to the judge.
type found struct {
	judge.Candidate
	listed    *content.Hint // a page a sitemap lists, with what it says of it
	requisite bool          // counted as a requisite found, and queued
	redirect  bool          // a redirect's target: one seen already is counted as such
}

// runPage takes a page its route let be fetched, under its host's rules
// pol, through the pipeline's stages up to its commit.
func (c *Crawler) runPage(ctx context.Context, p *pageRun, pol *robots.Policy) {
	if c.fetchPage(ctx, p) {
		c.archivePage(p)
		c.readPage(p)
		c.judgeLinks(p)
		c.conclude(p)
	}
	p.out.res.SetCrawlDelay, p.out.res.CrawlDelay = true, pol.CrawlDelay
	if p.render != nil {
		c.renderPage(ctx, p, pol)
	}
}

// fetchPage asks the page's host for it, conditionally when the last
// visit left validators, and reports whether an answer came. When none
// did, out arms the host's clock only if a request reached the host, and
// retries the URL if shutdown cut the fetch (it stays queued for the
// next run).
func (c *Crawler) fetchPage(ctx context.Context, p *pageRun) bool {
	l := p.l
	target := l.URL
	if l.Fetch != "" {
		target = l.Fetch
	}
	start := time.Now()
	if !l.Added.IsZero() {
		c.stats.queueDelay.observe(start.Sub(l.Added))
	}
	if c.cfg.Recrawl != nil {
		p.prev, p.first, p.cond = c.previousVisit(l)
	}
	c.judge.Fetched(l.Host)
	resp, err := c.fetcher.Get(ctx, target, p.cond)
	if err == nil {
		p.resp = resp
		c.observe(p)
		return true
	}
	kind := fetch.KindOf(err)
	if kind == fetch.KindCanceled && ctx.Err() != nil {
		// Cut by shutdown: not the host's fault, not counted, and not
		// done: the URL stays queued.
		p.out = leaseOutcome{res: frontier.Result{Fetched: true, Retry: true}}
		return false
	}
	c.stats.failed(l.Host, kind.String())
	c.log.Info("fetch failed", "url", l.URL, "host", l.Host, "err", err)
	c.flog.write(fetchRecord{Time: time.Now(), URL: l.URL, Host: l.Host, Depth: l.Depth, Hops: l.Hops, Via: l.Via, Outcome: "error:" + kind.String(), Error: err.Error()})
	p.out = leaseOutcome{res: errorResult(err, time.Since(start)), outcome: "error:" + kind.String()}
	return false
}

// observe counts what an answer was, and logs what a reader of the
// archive would want to know of it (a body refused, cut or not decoded).
func (c *Crawler) observe(p *pageRun) {
	resp, host := p.resp, p.l.Host
	c.stats.pages.Add(1)
	c.stats.bytes.Add(int64(len(resp.Body)))
	c.stats.inc(c.stats.byClass, statusClass(resp.StatusCode), 1)
	c.stats.fetchTime.observe(resp.Duration)
	if p.l.Priority == frontier.High {
		c.stats.lastHigh.Store(resp.Start.UnixNano())
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		c.stats.hosts.Update(host, func(v store.HostState) store.HostState {
			if resp.StatusCode == http.StatusTooManyRequests {
				v.Throttled++
			} else {
				v.ServerErrors++
			}
			return v
		})
	}
	if resp.Refused {
		c.stats.incType(c.stats.refusedTypes, archive.MediaType(resp.Header.Get("Content-Type")))
		c.log.Info("body refused by the media policy", "url", resp.URL, "host", host, "content_type", resp.Header.Get("Content-Type"))
	} else if resp.Truncated != "" {
		c.stats.truncated.Add(1)
		c.log.Info("body truncated", "url", resp.URL, "host", host, "reason", resp.Truncated, "bytes", len(resp.Body))
	}
	if resp.DecodeErr != nil {
		if errors.Is(resp.DecodeErr, fetch.ErrDecodedTooLarge) {
			c.stats.overDecode.Add(1)
		} else {
			c.stats.badCoding.Add(1)
		}
		c.log.Info("body not decoded whole", "url", resp.URL, "host", host, "err", resp.DecodeErr)
	}
}

// archivePage writes the answer to the archive: a 304 as a revisit of the
// capture it confirms, anything else as it came (a copy of a payload
// archived already as a revisit). Its line of the capture index is staged
// by conclude, once reading has added to it (its SimHash), or by handle's
// recovery after a panic: the record is in the WARC file either way.
func (c *Crawler) archivePage(p *pageRun) {
	resp, u := p.resp, &p.u
	p.notModified = resp.StatusCode == http.StatusNotModified && p.cond != nil
	if p.notModified {
		var err error
		if p.cp, err = c.arch.NotModified(resp, p.prev.Digest, p.first, u); err != nil {
			c.fail(fmt.Errorf("crawl: %w", err))
		}
	} else {
		p.cp = c.archiveResp(resp, p.pb, u)
		if resp.StatusCode == 200 && archive.Dedupable(resp) && u.String == resp.URL {
			if err := c.judge.LearnAlias(*u, p.cp.Digest); err != nil {
				c.fail(err)
			}
		}
	}
	p.archived = true
	p.mt = mediaType(resp)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 && !resp.Refused {
		c.stats.incType(c.stats.archivedTypes, p.mt)
		if p.l.Requisite {
			c.stats.requisitesArchived.Add(1)
		}
	}
	sum := sha256.Sum256(resp.Decoded)
	l, loc := p.l, p.cp.Loc
	p.rec = fetchRecord{
		Time: resp.Start, URL: l.URL, Host: l.Host, Status: resp.StatusCode, Bytes: len(resp.Body),
		DurationMS: resp.Duration.Milliseconds(), Depth: l.Depth, Hops: l.Hops, Via: l.Via,
		ContentType: resp.Header.Get("Content-Type"), SHA256: hex.EncodeToString(sum[:]),
		Truncated: resp.Truncated, WARCFile: loc.File, WARCOffset: loc.Offset, Outcome: "ok",
	}
}

// readPage finds where the answer leads: a redirect's target, or, for a
// document its media type's handler reads, its links and requisites. An
// unchanged page (a 304) and a copy of an earlier capture are not read
// again: their links were followed then (Mercator's "content seen").
func (c *Crawler) readPage(p *pageRun) {
	resp := p.resp
	handler := c.handlers.For(p.mt)
	switch {
	case p.notModified:
		p.rec.Outcome = "not-modified"
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		p.rec.Outcome = "redirect"
		if resp.Location != "" {
			p.rec.Location = resp.Location
			c.redirect(p, resp.Location)
		}
	case p.cp.SkipLinks(p.l.Depth):
		p.rec.Outcome = "revisit"
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && handler != nil:
		c.readDoc(p, handler)
		if p.cp.Revisit {
			p.rec.Outcome = "revisit"
		}
	}
}

// redirect finds a redirect's target: a link at the same depth, one hop
// further along its chain. A redirect from a seed widens the scope to its
// target, as if the target had been the seed (http to https, a domain to
// its www host). A redirect to a variant of its own canonical URL (the
// server insists on a session id) is requested as written, once more
// within the hop cap, since the seen set already holds its canonical
// form.
func (c *Crawler) redirect(p *pageRun, location string) {
	l := p.l
	lu, err := c.canon.ResolveString(l.URL, location)
	if err != nil {
		c.judge.Count(judge.Invalid, 1)
		c.log.Info("bad redirect location", "url", l.URL, "location", location, "err", err)
		return
	}
	if l.Hops+1 > c.cfg.MaxRedirects {
		c.judge.Count(judge.Redirects, 1)
		c.log.Info("redirect chain too long", "url", l.URL, "location", location)
		return
	}
	if l.Depth == 0 {
		c.scope.AddSeed(lu)
		p.pb.widenScope(lu.String)
	}
	if lu.String == l.URL {
		p.pb.items = append(p.pb.items, frontier.Item{URL: lu.String, Fetch: location, Host: lu.Authority, Depth: l.Depth, Priority: l.Priority, Hops: l.Hops + 1, Via: l.URL})
		return
	}
	p.found = append(p.found, found{Candidate: judge.Candidate{URL: lu, Depth: l.Depth, Hops: l.Hops + 1, Priority: l.Priority, Via: l.URL}, redirect: true})
}

// readDoc reads a document with its handler: the links it may follow,
// resolved against <base href> or the page's own URL, and the
// requisites it shows when they are fetched with it.
func (c *Crawler) readDoc(p *pageRun, h content.Handler) {
	l, u, resp := p.l, p.u, p.resp
	var words *[]uint64 // the array the words are read into, used again once judged
	var wordBuf []uint64
	if c.near != nil {
		words = c.words.Get()
		wordBuf = *words
	}
	res := h.Read(content.Doc{
		URL: resp.URL, MediaType: p.mt, Header: resp.Header, Body: resp.Decoded, Token: c.token,
		Words: c.near != nil, Embeds: c.embeds, Truncated: resp.Truncated, MaxLinks: c.cfg.MaxLinksPerPage,
		WordBuf: wordBuf,
	})
	p.read = true
	c.countRead(p, h.Name(), &res)
	follow := true
	if l.Requisite && len(res.Links) > 0 {
		// Fetched for what it is: a requisite's links are not a page's.
		c.judge.Count(judge.RequisiteLinks, int64(len(res.Links)))
		follow = false
	}
	if res.NoFollow {
		c.judge.Count(judge.NoFollow, int64(len(res.Links)))
		follow = false
	}
	nearDup := false
	if c.near != nil && len(res.Words) >= c.cfg.NearDupMinWords {
		nearDup = c.nearDuplicate(p, res.Words, follow)
		if nearDup && follow && !c.cfg.NearDupFollow {
			// Its links are mostly those of the page it copies.
			c.judge.Count(judge.NearDup, int64(len(res.Links)))
			follow = false
		}
	}
	if words != nil {
		// Nothing reads the words after the fingerprint. The array is
		// the one given: a page of more words than it holds had them
		// in one of their own, and a handler's own slice is its own.
		res.Words = nil
		c.words.Put(words)
	}
	// Links resolve against <base href> when the page has a valid one, else
	// against the page's own (final) URL. The base is parsed once per page.
	baseURL := u.String
	if res.Base != "" {
		if b, err := c.canon.Resolve(u, res.Base); err == nil {
			baseURL = b.String
		}
	}
	base, err := c.canon.NewBase(baseURL)
	if err != nil {
		c.log.Info("page URL does not parse as a base", "url", u.String, "err", err)
		return
	}
	p.followed = follow
	if resp.StatusCode == 200 && archive.Dedupable(resp) && resp.URL == u.String {
		p.alias = u.String
	}
	c.findLinks(p, base, &res, follow)
	// The images a page shows are fetched with it, one hop further (so an
	// image that turns out to be a page is bounded by the depth limit like
	// any link), unless the page is a near-duplicate whose links are not
	// followed either. A nofollow page's images are fetched: nofollow is
	// about links.
	if c.embeds && (!nearDup || c.cfg.NearDupFollow) {
		c.findRequisites(p, base, &res, h.Name())
	}
	if follow && c.rend != nil && p.mt == "text/html" && !l.Requisite && resp.Truncated == "" && !p.cp.Revisit {
		p.render = &renderable{resp: resp, recordID: p.cp.Loc.RecordID}
	}
}

// countRead counts and logs how a document's reading went.
func (c *Crawler) countRead(p *pageRun, handler string, res *content.Result) {
	url := p.resp.URL
	c.stats.inc(c.stats.handled, handler, 1)
	if res.Extended != nil {
		c.countExtensions(url, res.Extended)
		p.cp.Fields = res.Fields
	}
	if res.Charset != "" {
		c.stats.inc(c.stats.charsets, res.Charset, 1)
	}
	switch {
	case errors.Is(res.Err, content.ErrBinary):
		// Not a document read in part: one not to read at all.
		c.stats.binary.Add(1)
		c.log.Info("binary body labelled as text, not read", "url", url, "handler", handler, "content_type", p.resp.Header.Get("Content-Type"))
	case res.Err != nil:
		c.stats.inc(c.stats.unreadable, handler, 1)
		c.log.Warn("document read only in part", "url", url, "handler", handler, "links_read", len(res.Links), "err", res.Err)
	}
	switch {
	case res.Truncated == content.CutLinks:
		// Links past the cap are lost, and a documentation index can
		// have more than any cap: an operator must be able to find the
		// page and raise it.
		c.stats.inc(c.stats.cut, handler, 1)
		c.stats.linksCutAll.Add(1)
		c.stats.hosts.Update(p.l.Host, func(s store.HostState) store.HostState { s.LinksCut++; return s })
		c.log.Warn("page cut at the per-page link cap: its later links are not read", "url", url, "host", p.l.Host, "links", len(res.Links))
	case res.Truncated != "":
		c.stats.inc(c.stats.cut, handler, 1)
		c.log.Info("document cut at a limit", "url", url, "handler", handler, "limit", res.Truncated)
	}
	p.rec.Links = len(res.Links)
	if res.NoIndex {
		c.stats.noindex.Add(1)
		p.rec.NoIndex = true
	}
	if res.NoFollow {
		c.stats.nofollow.Add(1)
		p.rec.NoFollow = true
	}
}

// nearDuplicate fingerprints a page's words and judges it against the
// pages seen before: whether it nearly copies one.
func (c *Crawler) nearDuplicate(p *pageRun, words []uint64, follow bool) bool {
	fp := simhash.Fingerprint(words, simhash.DefaultShingle)
	of, filled, err := c.near.judge(fp, p.resp.URL, p.l.Depth, follow, p.pb)
	if err != nil {
		c.fail(fmt.Errorf("crawl: judge %s for near-duplicates: %w", p.resp.URL, err))
	}
	if filled {
		c.log.Warn("near-duplicate index full: later pages are judged against the ones it holds, not added", "pages", c.cfg.NearDupMaxPages)
	}
	p.cp.Rec.SimHash, p.cp.Rec.NearDupOf = fp, of
	c.judge.JudgedPage(p.pb.b, p.l.Host, of != "")
	if of == "" {
		return false
	}
	c.stats.nearDups.Add(1)
	p.rec.NearDupOf = of
	return true
}

// findLinks resolves a document's links: every one that resolves is an
// outlink; those the page lets be followed go to the judge. A page's
// links count toward their targets' in-links once: at the first fetch
// that reads it whole (none has left a payload digest); a page always cut
// short never counts.
func (c *Crawler) findLinks(p *pageRun, base *canon.Base, res *content.Result, follow bool) {
	l, u := p.l, p.u
	p.links = make([]string, 0, len(res.Links))
	if follow && c.inlinks != nil && p.prev.Digest == ([sha1.Size]byte{}) && p.resp.Truncated == "" {
		p.votes = make(map[seen.Key]bool, len(res.Links))
	}
	for i, link := range res.Links {
		lu, err := base.Resolve(link.URL)
		var k seen.Key // the link's seen-set key, if its vote hashed it; the judge hashes it otherwise
		if err == nil {
			p.links = append(p.links, lu.String)
			if p.votes != nil && !link.NoFollow && link.Tag != "sitemap" && i >= len(res.Hints) && lu.String != u.String {
				k = seen.KeyOf(lu.String)
				p.votes[k] = true // a page's link, not a sitemap's listing: a vote
			}
		}
		cand := judge.Candidate{URL: lu, Depth: l.Depth + 1, Priority: frontier.Normal, Via: l.URL}
		switch {
		case !follow:
		case link.NoFollow:
			c.judge.Count(judge.NoFollow, 1)
		case err != nil:
			c.judge.Count(judge.Invalid, 1)
		case link.Tag == "sitemap": // a sitemap index's sitemap
			cand.As = judge.AsResource
			p.found = append(p.found, found{Candidate: cand})
		case i < len(res.Hints): // a page a sitemap lists
			p.found = append(p.found, found{Candidate: cand, listed: &res.Hints[i]})
		default:
			cand.Key, cand.As, cand.Page = k, judge.AsPageLink, p.alias
			p.found = append(p.found, found{Candidate: cand})
		}
	}
}

// findRequisites resolves what a document needs to be shown: its images,
// style sheets, scripts and fonts (Config.Requisites), or only its images
// (WithImages). An HTML page's requisites may leave the scope by that one
// hop (AsRequisite), and so may those of a style sheet within the scope (a
// font on a CDN); a style sheet already out of scope names only
// requisites within it, so requisites never chain out.
func (c *Crawler) findRequisites(p *pageRun, base *canon.Base, res *content.Result, handler string) {
	as := judge.AsResource // the images of --with-images
	if c.cfg.Requisites {
		as = judge.AsSheetRequisite
		if c.scope.Within(p.u) || handler == "html" {
			as = judge.AsRequisite
		}
	}
	requisite := func(ru canon.URL) {
		c.stats.requisitesFound.Add(1)
		p.found = append(p.found, found{Candidate: judge.Candidate{URL: ru, Depth: p.l.Depth + 1, Priority: frontier.Normal, Via: p.l.URL, As: as}, requisite: true})
	}
	if c.cfg.Requisites && handler == "html" && !res.HasIcon {
		// A browser asks its origin for /favicon.ico.
		if fu, err := c.canon.ResolveString(p.resp.URL, "/favicon.ico"); err == nil {
			requisite(fu)
		}
	}
	for _, src := range res.Embeds {
		eu, err := base.Resolve(src)
		if err != nil {
			c.judge.Count(judge.Invalid, 1)
			continue
		}
		p.links = append(p.links, eu.String)
		requisite(eu)
	}
}

// judgeLinks hands what the page leads to to the judge, in the order it
// was found; those admitted are staged in the page's batch. The pages it
// votes for get their in-links.
func (c *Crawler) judgeLinks(p *pageRun) {
	for i := range p.found {
		f := &p.found[i]
		if f.listed != nil {
			c.admitListed(p.pb, f.URL, p.l, *f.listed)
			continue
		}
		why := c.admit(p.pb, f.Candidate)
		switch {
		case f.requisite && why == "":
			c.stats.requisitesQueued.Add(1)
		case f.redirect && why == judge.Seen:
			// A loop, or a page reached before by another way.
			c.stats.redirectSeen.Add(1)
		}
	}
	p.found = p.found[:0]
	for k := range p.votes {
		c.inlinks.Add(k)
	}
}

// conclude stages the rest of what the page leaves: its line of the
// capture index, its outlinks record, the page for the consumers, its
// line of the fetch log; and says how its host's clock moves and, in
// continuous mode, what the visit taught about the URL.
func (c *Crawler) conclude(p *pageRun) {
	resp := p.resp
	if p.read {
		if err := c.arch.Outlinks(resp, p.cp.Loc.RecordID, p.l.Via, p.l.Depth, p.links); err != nil {
			c.fail(fmt.Errorf("crawl: %w", err))
		}
		if p.followed {
			c.arch.Followed(&p.pb.Staging, p.cp, p.l.Depth, len(p.links) == 0)
		}
	}
	c.stageCapture(p)
	c.flog.write(p.rec)
	signal, retryAfter := answerSignal(resp, time.Now())
	res := frontier.Result{Fetched: true, Signal: signal, RetryAfter: retryAfter, Took: resp.Duration, Cause: answerCause(resp, signal)}
	if signal == frontier.Throttled || signal == frontier.Unavailable {
		// The server asked to come back later: the URL stays queued,
		// first on its host, for when the host's clock allows. A 503 counts
		// toward giving the host up, and so do 429s in a row over
		// MaxBackoff, so that a storm of either does not last for ever.
		res.Retry = true
		p.render = nil
	}
	p.out = leaseOutcome{res: res, status: resp.StatusCode, outcome: p.rec.Outcome}
	switch {
	case res.Retry:
	case c.cfg.Recrawl != nil:
		p.out.visit = c.sched.learn(p.l, p.prev, resp, p.cp, p.notModified)
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.Truncated == "":
		// A crawl that ends keeps what a later recrawl of its directory
		// asks with, conditionally: whichever command fetched a page
		// first, the next visit sends its validators.
		p.out.visit = &visit{once: true, rec: store.URLRecord{LastFetch: resp.Start, Digest: p.cp.Digest,
			ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}}
	}
}

// stageCapture stages the page's line of the capture index and keeps the
// page for the consumers, to be given them once its batch commits. It is
// called once per archived page: by conclude, or by handle's recovery
// after a panic (the record is in the WARC file already).
func (c *Crawler) stageCapture(p *pageRun) {
	if p.indexed || !p.archived {
		return
	}
	p.indexed = true
	c.index(p.cp, p.pb)
	c.stagePage(p)
}

// mediaType is the media type of a response: its Content-Type's, or what
// its body sniffs as when it has none.
func mediaType(resp *fetch.Response) string {
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = http.DetectContentType(resp.Decoded)
	}
	return archive.MediaType(ct)
}
