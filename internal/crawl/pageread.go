package crawl

import (
	"crypto/sha1"
	"errors"
	"fmt"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/crawllog"
	"github.com/weft-crawler/weft/internal/extract"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/simhash"
	"github.com/weft-crawler/weft/internal/store"
)

// The arrays of word hashes a crawl keeps for reuse: each holds the words
// of a page of about 100 KB of text, more than most pages have (a page with
// more has an array of its own), and pages are read by about as many
// workers at once as there are CPUs.
const (
	wordArray         = 16 << 10
	maxKeptWordArrays = 16
)

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
		c.inheritTitle(p)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		p.rec.Outcome = "redirect"
		if resp.Location != "" {
			p.rec.Location = resp.Location
			c.redirect(p, resp.Location)
		}
	case p.cp.SkipLinks(p.l.Depth):
		p.rec.Outcome = "revisit"
		c.inheritTitle(p)
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && handler != nil:
		c.readDoc(p, handler)
		if p.cp.Revisit {
			p.rec.Outcome = "revisit"
		}
	}
}

// inheritTitle gives a revisit that is not read the title of the capture
// it refers to. A title lost to a failed read costs the crawl nothing
// else: it is logged, and the crawl goes on.
func (c *Crawler) inheritTitle(p *pageRun) {
	if err := c.arch.InheritTitle(&p.cp); err != nil {
		c.log.Warn("no title for a revisit", "url", p.l.URL, "err", err)
	}
}

// redirect finds a redirect's target: a link at the same depth, one hop
// further along its chain. A redirect from a seed widens the scope to its
// target, as if the target had been the seed (http to https, a domain to
// its www host). A redirect to a variant of its own canonical URL (the
// server insists on a session id, or on a parameter learnt inert) is
// requested as written, once more within the hop cap, since the seen set
// already holds its canonical form.
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
		c.widen(p.pb, l.Seed, lu)
	}
	if su, _ := c.judge.WithoutInertParams(lu); lu.String == l.URL || su.String == l.URL && !l.Sitemap && !l.Requisite {
		// Its canonical form, or the URL without a parameter learnt
		// inert, is the URL redirected from.
		p.pb.Items = append(p.pb.Items, frontier.Item{URL: l.URL, Fetch: location, Host: lu.Authority, Depth: l.Depth, Priority: l.Priority, Hops: l.Hops + 1, Via: l.URL, Sitemap: l.Sitemap,
			Seed: l.Seed, Path: crawllog.Extend(l.Path, crawllog.Redirect)})
		return
	}
	p.found = append(p.found, found{Candidate: judge.Candidate{URL: lu, Depth: l.Depth, Hops: l.Hops + 1, Priority: l.Priority, Via: l.URL, Sitemap: l.Sitemap,
		Seed: l.Seed, Path: crawllog.Extend(l.Path, crawllog.Redirect)}, redirect: true})
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
	// A page whose URL has a query may teach whether its parameters
	// change anything (judge.ObserveParams): its embeds are read for it.
	observe := c.near != nil && !l.Requisite && resp.URL == u.String && judge.Observes(u)
	res := h.Read(content.Doc{
		URL: resp.URL, MediaType: p.mt, Header: resp.Header, Body: resp.Decoded, Token: c.token,
		Words: c.near != nil, Embeds: c.embeds || observe, Truncated: resp.Truncated, MaxLinks: c.cfg.MaxLinksPerPage,
		WordBuf: wordBuf,
	})
	p.read = true
	p.cp.Rec.Title = res.Title
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
		nearDup = c.nearDuplicate(p, &res, follow)
		if nearDup && follow && !c.cfg.NearDupFollow { // its links are its original's
			c.judge.Count(judge.NearDup, int64(len(res.Links)))
			follow = false
		}
	}
	// What a recrawl compares (schedule.Seen.Text), in continuous mode
	// only: a page read whole, and not to be rendered, whose words fit in
	// the array. (A crawl that ends keeps none: the first visit of a
	// later weft serve compares digests.)
	var text uint64
	whole := res.Truncated == "" && res.Err == nil && len(res.Words) < extract.DefaultMaxWords
	if c.cfg.Recrawl != nil && whole {
		text = extract.TextHash(res.Words)
	}
	var observed *judge.Page // what the judge compares, of a page read whole
	if observe && whole && len(res.Words) >= c.cfg.NearDupMinWords {
		observed = &judge.Page{URL: u, Text: text, Words: len(res.Words)}
		if observed.Text == 0 {
			observed.Text = extract.TextHash(res.Words)
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
	p.text = extract.AddLinks(text, p.links) // the links alone: requisites' URLs carry cache-busters
	links := len(p.links)
	// The images a page shows are fetched with it, one hop further (so an
	// image that turns out to be a page is bounded by the depth limit like
	// any link), unless the page is a near-duplicate whose links are not
	// followed either. A nofollow page's images are fetched: nofollow is
	// about links.
	requisites := c.embeds && (!nearDup || c.cfg.NearDupFollow)
	if requisites {
		c.findRequisites(p, base, &res, h.Name()) // its embeds, resolved, after the links in p.links
	}
	if observed != nil {
		// Its links and embeds, whether or not the embeds are fetched
		// (ObserveParams keeps neither slice).
		observed.Links = p.links[:links:links]
		if requisites {
			observed.Embeds = p.links[links:]
		} else {
			for _, src := range res.Embeds {
				if eu, err := base.Resolve(src); err == nil {
					observed.Embeds = append(observed.Embeds, eu.String)
				}
			}
		}
	}
	// Decided here, once: a page the renderer does not want is what was read, and teaches as such.
	if follow && c.rend != nil && p.mt == "text/html" && !l.Requisite && resp.Truncated == "" && !p.cp.Revisit &&
		c.rend.Wants(l.Host, resp.Decoded, c.cfg.Policies.Render(u.Authority, u.Host)) {
		p.render = &renderable{resp: resp, recordID: p.cp.Loc.RecordID}
		p.text = 0 // what its scripts build is not in the words read
	}
	if observed != nil && p.render == nil { // a page to be rendered is not what was read
		c.judge.ObserveParams(observed)
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
	p.rec.Links, p.rec.Search = len(res.Links), res.Search
	if res.NoIndex {
		c.stats.noindex.Add(1)
		p.rec.NoIndex = true
	}
	if res.NoFollow {
		c.stats.nofollow.Add(1)
		p.rec.NoFollow = true
	}
}

// nearDuplicate says whether a page nearly copies an earlier one, links too.
func (c *Crawler) nearDuplicate(p *pageRun, res *content.Result, follow bool) bool {
	fp := simhash.Fingerprint(res.Words, simhash.DefaultShingle)
	v, err := c.near.Judge(fp, res.Links, p.resp.URL, p.l.Depth, follow, p.prev.Digest != ([sha1.Size]byte{}), p.pb.Batch)
	if err != nil {
		c.fail(fmt.Errorf("crawl: judge %s for near-duplicates: %w", p.resp.URL, err))
	}
	if v.Added {
		p.pb.Sims = append(p.pb.Sims, fp) // pending until the batch commits (complete)
	}
	if v.Filled {
		c.log.Warn("near-duplicate index full: later pages are judged against the ones it holds, not added", "pages", c.cfg.NearDupMaxPages)
	}
	p.cp.Rec.SimHash, p.cp.Rec.NearDupOf = fp, v.Of
	if !v.NewLinks || v.Of == "" { // a copy that lists other things is left out of the window
		c.judge.JudgedPage(p.pb.Batch, p.l.Host, p.u, p.l.Via, v.Of)
	}
	if p.copied = v.Match && !v.NewLinks; v.Of != "" {
		c.stats.nearDups.Add(1)
		p.rec.NearDupOf = v.Of
	}
	return v.Of != "" && !v.NewLinks
}

// findLinks resolves a document's links: every one that resolves is an
// outlink; those the page lets be followed go to the judge. A page's
// links count toward their targets' in-links once: at the first fetch
// that reads it whole (none has left a payload digest); a page always cut
// short never counts.
func (c *Crawler) findLinks(p *pageRun, base *canon.Base, res *content.Result, follow bool) {
	l, u := p.l, p.u
	p.links = make([]string, 0, len(res.Links))
	if follow && p.prev.Digest == ([sha1.Size]byte{}) && p.resp.Truncated == "" {
		if p.bufs != nil {
			p.votes = p.bufs.votes
		} else {
			p.votes = importance.NewVotes()
		}
	}
	// One path for all the page's links, and one for its sitemaps.
	linkPath, listPath := crawllog.Extend(l.Path, crawllog.Link), ""
	for i, link := range res.Links {
		lu, err := base.Resolve(link.URL)
		if err == nil && link.Tag != "sitemap" {
			// Without its host's parameters learnt inert: its vote, its
			// key and its queue entry are the page's.
			lu, _ = c.judge.WithoutInertParams(lu)
		}
		var k seen.Key // the link's seen-set key, if its vote hashed it; the judge hashes it otherwise
		if err == nil {
			p.links = append(p.links, lu.String)
			if p.votes != nil && !link.NoFollow && link.Tag != "sitemap" && i >= len(res.Hints) && lu.String != u.String {
				k = seen.KeyOf(lu.String)
				p.votes.Add(k, importance.KindOf(u, lu)) // a page's link, not a sitemap's listing: a vote
			}
		}
		cand := judge.Candidate{URL: lu, Depth: l.Depth + 1, Priority: frontier.Normal, Via: l.URL, Seed: l.Seed, Path: linkPath}
		switch {
		case !follow:
		case link.NoFollow:
			c.judge.Count(judge.NoFollow, 1)
		case err != nil:
			c.judge.Count(judge.Invalid, 1)
		case link.Tag == "sitemap": // a sitemap index's sitemap
			if listPath == "" {
				listPath = crawllog.Extend(l.Path, crawllog.Manifest)
			}
			cand.As, cand.Sitemap, cand.Path = judge.AsResource, true, listPath
			if c.seedList(p, lu) {
				cand.Depth, cand.Priority = 0, frontier.High
			}
			p.found = append(p.found, found{Candidate: cand})
		case i < len(res.Hints): // a page a sitemap lists
			p.found = append(p.found, found{Candidate: cand, listed: &res.Hints[i], seed: c.seedList(p, lu)})
		case c.cfg.SitemapOnly:
			c.judge.Count(judge.SitemapOnly, 1)
		default:
			cand.Key, cand.As, cand.Page = k, judge.AsPageLink, p.alias
			p.found = append(p.found, found{Candidate: cand})
		}
	}
}

// seedList reports whether a URL p's sitemap lists is a seed: p is a
// seed (depth 0, a seed's redirect or what a seed sitemap lists) that
// answered as a sitemap. The URL then widens the scope as a seed does,
// unless a filter or an include/exclude rule refuses it as a seed (it is
// then judged as a link, and refused again).
func (c *Crawler) seedList(p *pageRun, u canon.URL) bool {
	if p.l.Depth != 0 || c.scope.CheckSeed(u) != "" {
		return false
	}
	if !c.scope.Within(u) {
		c.widen(p.pb, p.l.Seed, u)
	}
	return true
}

// findRequisites resolves what a document needs to be shown: its images,
// style sheets, scripts and fonts (unless Config.NoRequisites), or only its images
// (WithImages). An HTML page's requisites may leave the scope by that one
// hop (AsRequisite), and so may those of a style sheet within the scope (a
// font on a CDN); a style sheet already out of scope names only
// requisites within it, so requisites never chain out.
func (c *Crawler) findRequisites(p *pageRun, base *canon.Base, res *content.Result, handler string) {
	as := judge.AsResource // the images of --with-images
	if !c.cfg.NoRequisites {
		as = judge.AsSheetRequisite
		if c.scope.Within(p.u) || handler == "html" {
			as = judge.AsRequisite
		}
	}
	embedPath := crawllog.Extend(p.l.Path, crawllog.Embed)
	requisite := func(ru canon.URL, path string) {
		c.stats.requisitesFound.Add(1)
		p.found = append(p.found, found{Candidate: judge.Candidate{URL: ru, Depth: p.l.Depth + 1, Priority: frontier.Normal, Via: p.l.URL, As: as, Seed: p.l.Seed, Path: path}, requisite: true})
	}
	if !c.cfg.NoRequisites && handler == "html" && !res.HasIcon {
		// A browser asks its origin for /favicon.ico.
		if fu, err := c.canon.ResolveString(p.resp.URL, "/favicon.ico"); err == nil {
			requisite(fu, crawllog.Extend(p.l.Path, crawllog.Inferred))
		}
	}
	for _, src := range res.Embeds {
		eu, err := base.Resolve(src)
		if err != nil {
			c.judge.Count(judge.Invalid, 1)
			continue
		}
		p.links = append(p.links, eu.String)
		requisite(eu, embedPath)
	}
}
