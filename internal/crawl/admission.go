package crawl

import (
	"errors"
	"fmt"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
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

// readAndAdmit reads a response with its handler and admits the links it
// may follow, resolved against <base href> or the page's own URL, and the
// images it shows when a module fetches them. It returns every link it
// could resolve, followed or not: the page's outlinks.
func (c *Crawler) readAndAdmit(pb *pageBatch, l frontier.Lease, u canon.URL, resp *fetch.Response, h content.Handler, mt string, rec *fetchRecord, cp *archive.Capture, countLinks bool) (outlinks []string, followed bool) {
	var words *[]uint64 // the array the words are read into, used again once judged
	var wordBuf []uint64
	if c.near != nil {
		words = c.words.Get()
		wordBuf = *words
	}
	res := h.Read(content.Doc{
		URL: resp.URL, MediaType: mt, Header: resp.Header, Body: resp.Decoded, Token: c.token,
		Words: c.near != nil, Embeds: c.embeds, Truncated: resp.Truncated, MaxLinks: c.cfg.MaxLinksPerPage,
		WordBuf: wordBuf,
	})
	c.stats.inc(c.stats.handled, h.Name(), 1)
	if res.Extended != nil {
		c.countExtensions(resp.URL, res.Extended)
		cp.Fields = res.Fields
	}
	if res.Charset != "" {
		c.stats.inc(c.stats.charsets, res.Charset, 1)
	}
	switch {
	case errors.Is(res.Err, content.ErrBinary):
		// Not a document read in part: one not to read at all.
		c.stats.binary.Add(1)
		c.log.Info("binary body labelled as text, not read", "url", l.URL, "handler", h.Name(), "content_type", resp.Header.Get("Content-Type"))
	case res.Err != nil:
		c.stats.inc(c.stats.unreadable, h.Name(), 1)
		c.log.Warn("document read only in part", "url", l.URL, "handler", h.Name(), "links_read", len(res.Links), "err", res.Err)
	}
	switch {
	case res.Truncated == content.CutLinks:
		// Links past the cap are lost, and a documentation index can
		// have more than any cap: an operator must be able to find the
		// page and raise it.
		c.stats.inc(c.stats.cut, h.Name(), 1)
		c.stats.linksCutAll.Add(1)
		c.stats.hosts.Update(l.Host, func(s store.HostState) store.HostState { s.LinksCut++; return s })
		c.log.Warn("page cut at the per-page link cap: its later links are not read", "url", l.URL, "host", l.Host, "links", len(res.Links))
	case res.Truncated != "":
		c.stats.inc(c.stats.cut, h.Name(), 1)
		c.log.Info("document cut at a limit", "url", l.URL, "handler", h.Name(), "limit", res.Truncated)
	}
	rec.Links = len(res.Links)
	if res.NoIndex {
		c.stats.noindex.Add(1)
		rec.NoIndex = true
	}
	follow, nearDup := true, false
	if l.Requisite && len(res.Links) > 0 {
		// Fetched for what it is: a requisite's links are not a page's.
		c.judge.Count(judge.RequisiteLinks, int64(len(res.Links)))
		follow = false
	}
	if res.NoFollow {
		c.stats.nofollow.Add(1)
		rec.NoFollow = true
		c.judge.Count(judge.NoFollow, int64(len(res.Links)))
		follow = false
	}
	if c.near != nil && len(res.Words) >= c.cfg.NearDupMinWords {
		fp := simhash.Fingerprint(res.Words, simhash.DefaultShingle)
		of, filled, err := c.near.judge(fp, resp.URL, l.Depth, follow, pb)
		if err != nil {
			c.fail(fmt.Errorf("crawl: judge %s for near-duplicates: %w", resp.URL, err))
		}
		if filled {
			c.log.Warn("near-duplicate index full: later pages are judged against the ones it holds, not added", "pages", c.cfg.NearDupMaxPages)
		}
		cp.Rec.SimHash, cp.Rec.NearDupOf = fp, of
		c.judge.JudgedPage(pb.b, l.Host, of != "")
		if of != "" {
			nearDup = true
			c.stats.nearDups.Add(1)
			rec.NearDupOf = of
			if follow && !c.cfg.NearDupFollow {
				// Its links are mostly those of the page it copies.
				c.judge.Count(judge.NearDup, int64(len(res.Links)))
				follow = false
			}
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
		return nil, false
	}
	if resp.StatusCode == 200 && archive.Dedupable(resp) && resp.URL == u.String {
		pb.page = u.String
	}
	outlinks = make([]string, 0, len(res.Links))
	var votes map[seen.Key]bool // the distinct pages this one links to, for their in-links
	if countLinks && follow {
		votes = make(map[seen.Key]bool, len(res.Links))
	}
	for i, link := range res.Links {
		lu, err := base.Resolve(link.URL)
		var k seen.Key // the link's seen-set key, if its vote hashed it; judgeKey hashes it otherwise
		if err == nil {
			outlinks = append(outlinks, lu.String)
			if votes != nil && !link.NoFollow && link.Tag != "sitemap" && i >= len(res.Hints) && lu.String != u.String {
				k = seen.KeyOf(lu.String)
				votes[k] = true // a page's link, not a sitemap's listing: a vote
			}
		}
		switch {
		case !follow:
		case link.NoFollow:
			c.judge.Count(judge.NoFollow, 1)
		case err != nil:
			c.judge.Count(judge.Invalid, 1)
		case link.Tag == "sitemap": // a sitemap index's sitemap
			c.admit(pb, judge.Candidate{URL: lu, Depth: l.Depth + 1, Priority: frontier.Normal, Via: l.URL, As: judge.AsResource})
		case i < len(res.Hints): // a page a sitemap lists
			c.admitListed(pb, lu, l, res.Hints[i])
		default:
			c.admit(pb, judge.Candidate{URL: lu, Key: k, Depth: l.Depth + 1, Priority: frontier.Normal, Via: l.URL, As: judge.AsPageLink, Page: pb.page})
		}
	}
	for k := range votes {
		c.inlinks.Add(k)
	}
	// The images a page shows are fetched with it, one hop further (so an
	// image that turns out to be a page is bounded by the depth limit like
	// any link), unless the page is a near-duplicate whose links are not
	// followed either. A nofollow page's images are fetched: nofollow is
	// about links.
	if c.embeds && (!nearDup || c.cfg.NearDupFollow) {
		// An HTML page's requisites may leave the scope by that one hop
		// (asRequisite), and so may those of a style sheet within the
		// scope (a font on a CDN); a style sheet already out of scope
		// names only requisites within it, so requisites never chain
		// out.
		as := judge.AsResource // the images of --with-images
		if c.cfg.Requisites {
			as = judge.AsSheetRequisite
			if c.scope.Within(u) {
				as = judge.AsRequisite
			}
		}
		requisite := func(ru canon.URL) {
			c.stats.requisitesFound.Add(1)
			if c.admit(pb, judge.Candidate{URL: ru, Depth: l.Depth + 1, Priority: frontier.Normal, Via: l.URL, As: as}) == "" {
				c.stats.requisitesQueued.Add(1)
			}
		}
		if c.cfg.Requisites && h.Name() == "html" {
			as = judge.AsRequisite
			if !res.HasIcon { // a browser asks its origin for /favicon.ico
				if fu, err := c.canon.ResolveString(resp.URL, "/favicon.ico"); err == nil {
					requisite(fu)
				}
			}
		}
		for _, src := range res.Embeds {
			eu, err := base.Resolve(src)
			if err != nil {
				c.judge.Count(judge.Invalid, 1)
				continue
			}
			outlinks = append(outlinks, eu.String)
			requisite(eu)
		}
	}
	return outlinks, follow
}

// admit judges cand and stages it in pb: queued (its record in pb), or
// handed to the node that owns its host; it returns why not ("" when
// queued, judge.Forwarded when handed over). A store error stops the
// crawl.
func (c *Crawler) admit(pb *pageBatch, cand judge.Candidate) string {
	it, why, err := c.judge.Admit(cand, pb.recorder)
	switch {
	case err != nil:
		c.fail(fmt.Errorf("crawl: %w", err))
	case why == "":
		pb.items = append(pb.items, it)
	case why == judge.Forwarded:
		pb.forward = append(pb.forward, Offered{URL: cand.URL.String, Depth: cand.Depth, Hops: cand.Hops, Priority: cand.Priority,
			Via: cand.Via, Resource: cand.As.Resource(), Requisite: cand.As.Requisite()})
		c.stats.forwarded.Add(1)
	}
	return why
}

// admitRedirect admits a redirect target like a link at the same depth,
// one hop further along its chain. A redirect from a seed widens the scope
// to its target, as if the target had been the seed (http to https, a
// domain to its www host). A redirect to a variant of its own canonical URL
// (the server insists on a session id) is requested as written, once more
// within the hop cap, since the seen set already holds its canonical form.
func (c *Crawler) admitRedirect(pb *pageBatch, l frontier.Lease, location string) {
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
		pb.widenScope(lu.String)
	}
	if lu.String == l.URL {
		pb.items = append(pb.items, frontier.Item{URL: lu.String, Fetch: location, Host: lu.Authority, Depth: l.Depth, Priority: l.Priority, Hops: l.Hops + 1, Via: l.URL})
		return
	}
	if c.admit(pb, judge.Candidate{URL: lu, Depth: l.Depth, Hops: l.Hops + 1, Priority: l.Priority, Via: l.URL}) == judge.Seen {
		// A loop, or a page reached before by another way.
		c.stats.redirectSeen.Add(1)
	}
}

// admitSitemaps queues the sitemaps of the leased host once its robots.txt
// allows it: the files its Sitemap: lines name (on any host: the scope
// and that host's robots.txt judge them) and its /sitemap.xml, one hop
// from the URL whose lease fetched the robots.txt.
func (c *Crawler) admitSitemaps(pb *pageBatch, l frontier.Lease, u canon.URL) {
	if c.cfg.NoSitemaps {
		return
	}
	robotsURL := u.Scheme + "://" + u.Authority + "/robots.txt"
	base, err := c.canon.NewBase(robotsURL)
	if err != nil {
		return
	}
	targets := []string{"/sitemap.xml"}
	if pol := c.robots.Cached(originKey(u.Scheme, l.Host), time.Now()); pol != nil {
		targets = append(targets, pol.Sitemaps...)
	}
	for _, t := range targets {
		su, err := base.Resolve(t)
		if err != nil {
			c.judge.Count(judge.Invalid, 1)
			continue
		}
		c.admit(pb, judge.Candidate{URL: su, Depth: l.Depth + 1, Priority: frontier.Normal, Via: robotsURL, As: judge.AsResource})
	}
}

// requeued reports whether the batch queues url again (a redirect to a
// variant of itself): it is not done.
func requeued(pb *pageBatch, url string) bool {
	for _, it := range pb.items {
		if it.URL == url {
			return true
		}
	}
	return false
}
