package crawl

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/plugin"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/scope"
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
func (c *Crawler) readAndAdmit(pb *pageBatch, l frontier.Lease, u canon.URL, resp *fetch.Response, h content.Handler, mt string, rec *fetchRecord, cp *capture, countLinks bool) (outlinks []string, followed bool) {
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
		cp.fields = res.Fields
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
		c.stats.inc(c.stats.rejected, RejectRequisiteLinks, int64(len(res.Links)))
		follow = false
	}
	if res.NoFollow {
		c.stats.nofollow.Add(1)
		rec.NoFollow = true
		c.stats.inc(c.stats.rejected, RejectNoFollow, int64(len(res.Links)))
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
		cp.rec.SimHash, cp.rec.NearDupOf = fp, of
		c.copies.judged(pb.b, l.Host, of != "")
		if of != "" {
			nearDup = true
			c.stats.nearDups.Add(1)
			rec.NearDupOf = of
			if follow && !c.cfg.NearDupFollow {
				// Its links are mostly those of the page it copies.
				c.stats.inc(c.stats.rejected, RejectNearDup, int64(len(res.Links)))
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
	if resp.StatusCode == 200 && dedupable(resp) && resp.URL == u.String {
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
			c.stats.reject(RejectNoFollow)
		case err != nil:
			c.stats.reject(RejectInvalid)
		case link.Tag == "sitemap": // a sitemap index's sitemap
			if it, why := c.admit.judge(pb, lu, l.Depth+1, 0, frontier.Normal, l.URL, asResource); why == "" {
				pb.items = append(pb.items, it)
			}
		case i < len(res.Hints): // a page a sitemap lists
			c.admitListed(pb, lu, l, res.Hints[i])
		default:
			if it, why := c.admit.judgeKey(pb, lu, k, l.Depth+1, 0, frontier.Normal, l.URL, asPageLink); why == "" {
				pb.items = append(pb.items, it)
			}
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
		as := asResource // the images of --with-images
		if c.cfg.Requisites {
			as = asSheetRequisite
			if c.admit.scope.Within(u) {
				as = asRequisite
			}
		}
		if c.cfg.Requisites && h.Name() == "html" {
			as = asRequisite
			if !res.HasIcon { // a browser asks its origin for /favicon.ico
				if fu, err := c.canon.ResolveString(resp.URL, "/favicon.ico"); err == nil {
					c.stats.requisitesFound.Add(1)
					if it, why := c.admit.judge(pb, fu, l.Depth+1, 0, frontier.Normal, l.URL, as); why == "" {
						pb.items = append(pb.items, it)
						c.stats.requisitesQueued.Add(1)
					}
				}
			}
		}
		for _, src := range res.Embeds {
			eu, err := base.Resolve(src)
			if err != nil {
				c.stats.reject(RejectInvalid)
				continue
			}
			outlinks = append(outlinks, eu.String)
			c.stats.requisitesFound.Add(1)
			if it, why := c.admit.judge(pb, eu, l.Depth+1, 0, frontier.Normal, l.URL, as); why == "" {
				pb.items = append(pb.items, it)
				c.stats.requisitesQueued.Add(1)
			}
		}
	}
	return outlinks, follow
}

// admitter judges every URL the crawl comes upon (a link, a redirect, a
// seed, a sitemap's listing, a URL another node offers) by every rule,
// cheapest first, and stages in a page's batch those to queue. It holds
// the rules and the counts they keep; the seen set has the last word.
type admitter struct {
	canon    *canon.Canonicalizer
	scope    *scope.Filter
	fetcher  *fetch.Fetcher // its SSRF guard
	robots   *robotsCache
	copies   *copyTraps
	policies *policy.Set
	cluster  Cluster // nil for a single node
	seen     *seen.Set
	filters  []plugin.LinkFilter // Config.Filters
	traps    *trapCounts
	aliases  *indexAliases
	hostCap  *hostmap.Map[store.HostState] // URLs accepted per host
	// gaveUp holds the hosts given up after too many failures, as far as
	// memory keeps them (--host-cache): their links are refused when
	// found, not queued to be dropped when leased. One evicted is still
	// dropped then (frontier.ModeGiveUp), and comes back here.
	gaveUp *hostmap.Map[bool]
	stats  *counters
	log    *slog.Logger
	fail   func(error)

	maxRedirects   int
	maxURLsPerHost int64
	noSitemaps     bool
}

// admitRedirect admits a redirect target like a link at the same depth,
// one hop further along its chain. A redirect from a seed widens the scope
// to its target, as if the target had been the seed (http to https, a
// domain to its www host). A redirect to a variant of its own canonical URL
// (the server insists on a session id) is requested as written, once more
// within the hop cap, since the seen set already holds its canonical form.
func (a *admitter) admitRedirect(pb *pageBatch, l frontier.Lease, location string) {
	lu, err := a.canon.ResolveString(l.URL, location)
	if err != nil {
		a.stats.reject(RejectInvalid)
		a.log.Info("bad redirect location", "url", l.URL, "location", location, "err", err)
		return
	}
	if l.Hops+1 > a.maxRedirects {
		a.stats.reject(RejectRedirects)
		a.log.Info("redirect chain too long", "url", l.URL, "location", location)
		return
	}
	if l.Depth == 0 {
		a.scope.AddSeed(lu)
		pb.widenScope(lu.String)
	}
	if lu.String == l.URL {
		pb.items = append(pb.items, frontier.Item{URL: lu.String, Fetch: location, Host: lu.Authority, Depth: l.Depth, Priority: l.Priority, Hops: l.Hops + 1, Via: l.URL})
		return
	}
	it, why := a.judge(pb, lu, l.Depth, l.Hops+1, l.Priority, l.URL, asLink)
	switch why {
	case "":
		pb.items = append(pb.items, it)
	case RejectSeen:
		// A loop, or a page reached before by another way.
		a.stats.redirectSeen.Add(1)
	}
}

// admitURL judges a URL and, if it is to be queued, stages it in pb.
func (a *admitter) admitURL(pb *pageBatch, u canon.URL, depth, hops int, p frontier.Priority, via string) {
	if it, why := a.judge(pb, u, depth, hops, p, via, asLink); why == "" {
		pb.items = append(pb.items, it)
	}
}

// judge runs a canonical URL through every filter, cheapest first, and
// returns the frontier item when it is to be queued, else the reason it is
// not (RejectSeen last of all, but for a page's link the seen set knows
// without its store, refused as seen after the scope and link filters).
// Every rejection is counted by reason. A resource (an image a page shows, a sitemap) is
// fetched for what it is, not for links it may hold, so the extension rule
// does not apply to it.
func (a *admitter) judge(pb *pageBatch, u canon.URL, depth, hops int, p frontier.Priority, via string, as admission) (frontier.Item, string) {
	return a.judgeKey(pb, u, seen.Key{}, depth, hops, p, via, as)
}

// judgeKey is judge for a caller that may have the URL's seen-set key
// already (a page's link, whose key counts its vote as an in-link); a
// zero k is hashed here, once the filters have passed the URL.
func (a *admitter) judgeKey(pb *pageBatch, u canon.URL, k seen.Key, depth, hops int, p frontier.Priority, via string, as admission) (frontier.Item, string) {
	resource, offered := as == asResource || as == asOfferedResource || as.requisite(), as == asOffered || as == asOfferedResource || as == asOfferedRequisite
	switch {
	case as == asRequisite || as == asOfferedRequisite: // one hop past the scope
		if r := a.scope.CheckRequisite(u); r != "" {
			a.refuse(u.Authority, string(r))
			return frontier.Item{}, string(r)
		}
	case resource: // fetched for what it is (an image, a sitemap): no extension rule
		if r := a.scope.CheckEmbed(u, depth); r != "" {
			a.refuse(u.Authority, string(r))
			return frontier.Item{}, string(r)
		}
	case depth > 0 || hops > 0: // seeds are in scope by definition
		if r := a.scope.Check(u, depth); r != "" {
			a.refuse(u.Authority, string(r))
			return frontier.Item{}, string(r)
		}
	}
	if (depth > 0 || hops > 0) && !offered {
		if why := a.filter(u, depth, hops, via, as); why != "" {
			return frontier.Item{}, why
		}
	}
	if k == (seen.Key{}) {
		k = seen.KeyOf(u.String)
	}
	if as == asPageLink && (a.cluster == nil || a.cluster.Owns(u.Authority)) && a.seen.KnownKey(u.Authority, k) {
		// Most of a page's links lead to URLs accepted lately, which the
		// seen set knows without its store: refused as seen before the
		// checks below, which would refuse them anyway. Only the reason
		// counted differs where one would now say robots, policy or
		// trap. Other URLs (a sitemap's, whose hint is kept only for a
		// URL refused as seen; a redirect's; an operator's) and another
		// node's URLs take every check in order.
		a.stats.reject(RejectSeen)
		return frontier.Item{}, RejectSeen
	}
	if a.fetcher.Permits(u.Host) != nil {
		// An address the SSRF guard refuses, known without DNS: not
		// queued at all. Names are judged again at every connect.
		a.stats.reject(RejectForbidden)
		return frontier.Item{}, RejectForbidden
	}
	if u.Path == "/robots.txt" {
		// Fetched through the robots cache only: as a page it would probe
		// a host whose robots.txt failed, and fetch the file twice.
		a.stats.reject(RejectFilter)
		return frontier.Item{}, RejectFilter
	}
	if pol := a.robots.cached(originKey(u.Scheme, u.Authority), time.Now()); pol != nil && !pol.Allowed(u.PathQuery()) {
		why := robotsRefusal(pol)
		a.stats.reject(why)
		return frontier.Item{}, why
	}
	if gaveUp, _ := a.gaveUp.Peek(u.Authority); gaveUp {
		a.stats.reject(RejectGaveUp)
		return frontier.Item{}, RejectGaveUp
	}
	if a.copies.trappedInMemory(u.Authority) {
		a.refuse(u.Authority, RejectTrap)
		return frontier.Item{}, RejectTrap
	}
	hp := a.policies.For(u.Authority, u.Host)
	if !hp.Allowed(u.PathQuery()) {
		a.stats.reject(RejectPolicy)
		return frontier.Item{}, RejectPolicy
	}
	if a.cluster != nil && !offered && !a.cluster.Owns(u.Authority) {
		// Another node's host: its owner judges whether the URL is new.
		pb.forward = append(pb.forward, Offered{URL: u.String, Depth: depth, Hops: hops, Priority: p, Via: via, Resource: resource, Requisite: as.requisite()})
		a.stats.forwarded.Add(1)
		return frontier.Item{}, RejectForwarded
	}
	capURLs := a.maxURLsPerHost
	if hp != nil && hp.MaxURLs > 0 && (capURLs == 0 || hp.MaxURLs < capURLs) {
		capURLs = hp.MaxURLs // a policy only lowers the cap
	}
	it := frontier.Item{URL: u.String, Host: u.Authority, Depth: depth, Priority: p, Hops: hops, Via: via, Requisite: as.requisite()}
	record := pb.recorder(&it)
	isNew, err := a.seen.AddKey(u.Authority, u.String, k, func(part int, k seen.Key) (bool, error) {
		// Counted only for URLs that are new, and checked before anything
		// is written, so a capped URL is neither queued nor marked seen.
		// Seeds are exempt from the pattern cap, as from the scope.
		full, pk := a.traps.full(u)
		if full && depth+hops > 0 {
			return false, errPatternCap
		}
		if a.copies.trapped(u.Authority) { // a host whose state is not in memory
			return false, errTrapped
		}
		if as == asPageLink && a.aliases.skip(pb.page, u) {
			return false, errIndexAlias
		}
		if capURLs > 0 && a.hostCap.Update(u.Authority, func(s store.HostState) store.HostState { s.Accepted++; return s }).Accepted > capURLs {
			return false, errHostCap
		}
		ok, err := record(part, k)
		if ok && err == nil {
			a.traps.admitted(pk)
		}
		return ok, err
	})
	switch {
	case errors.Is(err, errHostCap):
		a.refuse(u.Authority, RejectHostCap)
		return frontier.Item{}, RejectHostCap
	case errors.Is(err, errTrapped):
		a.refuse(u.Authority, RejectTrap)
		return frontier.Item{}, RejectTrap
	case errors.Is(err, errPatternCap):
		a.refuse(u.Authority, RejectPattern)
		return frontier.Item{}, RejectPattern
	case errors.Is(err, errIndexAlias):
		a.stats.reject(RejectIndexAlias)
		return frontier.Item{}, RejectIndexAlias
	case err != nil:
		a.fail(fmt.Errorf("crawl: accept %s: %w", u.String, err))
		return frontier.Item{}, "error"
	case !isNew:
		a.stats.reject(RejectSeen)
		return frontier.Item{}, RejectSeen
	}
	return it, ""
}

// refuse counts a URL of host refused for reason, and what trap rules
// refuse per host.
func (a *admitter) refuse(host, reason string) {
	a.stats.reject(reason)
	if trapRule(reason) {
		a.traps.refused(host, reason)
	}
}

// admitSitemaps queues the sitemaps of the leased host once its robots.txt
// allows it: the files its Sitemap: lines name (on any host: the scope
// and that host's robots.txt judge them) and its /sitemap.xml, one hop
// from the URL whose lease fetched the robots.txt.
func (a *admitter) admitSitemaps(pb *pageBatch, l frontier.Lease, u canon.URL) {
	if a.noSitemaps {
		return
	}
	robotsURL := u.Scheme + "://" + u.Authority + "/robots.txt"
	base, err := a.canon.NewBase(robotsURL)
	if err != nil {
		return
	}
	targets := []string{"/sitemap.xml"}
	if pol := a.robots.cached(originKey(u.Scheme, l.Host), time.Now()); pol != nil {
		targets = append(targets, pol.Sitemaps...)
	}
	for _, t := range targets {
		su, err := base.Resolve(t)
		if err != nil {
			a.stats.reject(RejectInvalid)
			continue
		}
		if it, why := a.judge(pb, su, l.Depth+1, 0, frontier.Normal, robotsURL, asResource); why == "" {
			pb.items = append(pb.items, it)
		}
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

// admission is how a URL came to be judged.
type admission uint8

const (
	asLink             admission = iota // a link, a redirect, a seed
	asPageLink                          // a link found on a page, which the index-alias rule may skip
	asResource                          // fetched for what it is (an image, a sitemap): no extension rule
	asOffered                           // handed over by the cluster (Offer): this crawl owns its host
	asOfferedResource                   // both
	asRequisite                         // an HTML page's requisite: may leave the scope by one hop
	asSheetRequisite                    // a style sheet's requisite: a resource within the scope
	asOfferedRequisite                  // a requisite handed over by the cluster, judged by its finder as asRequisite
)

// requisite reports whether a URL so admitted is a page's requisite.
func (as admission) requisite() bool {
	return as == asRequisite || as == asSheetRequisite || as == asOfferedRequisite
}

var (
	errHostCap    = errors.New("host cap reached")
	errPatternCap = errors.New("pattern cap reached")
	errTrapped    = errors.New("host cut off")
)
