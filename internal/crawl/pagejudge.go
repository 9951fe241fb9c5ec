package crawl

import (
	"crypto/sha1"
	"fmt"
	"time"

	"github.com/weft-crawler/weft/internal/crawllog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/robotstxt"
	"github.com/weft-crawler/weft/internal/schedule"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/state"
	"github.com/weft-crawler/weft/internal/store"
)

// judgeLinks hands what the page leads to to the judge, in the order it was
// found, each with its rank; those admitted are staged in the page's batch.
// The pages it votes for get their share of its importance, and their
// in-links; one already queued whose estimate rose enough is queued again.
// The page is weighed (judge.Worth) by what it led to and showed.
func (c *Crawler) judgeLinks(p *pageRun) {
	if p.votes != nil {
		c.rank.Credit(seen.KeyOf(p.l.URL), p.votes)
	}
	worth := c.judge.Worth(p.u, p.l.Via)
	worth.Leased(p.l.Priority)
	for i := range p.found {
		f := &p.found[i]
		if f.listed != nil {
			c.admitListed(p.pb, f, p.l)
			continue
		}
		promote := rankOf(p, f)
		why := c.admit(p.pb, f.Candidate)
		if (why == "" || why == judge.Forwarded) && !f.As.Resource() && !f.Sitemap {
			// In a cluster a link to another node's host is handed over,
			// not judged here: it leads out of the family all the same.
			worth.Admitted(f.URL)
		}
		switch {
		case promote && why == judge.Seen && c.cluster.Keeps() && p.pb.Requeue(f.Item(), f.Key):
			c.stats.requeued.Add(1)
		case f.requisite && why == "":
			c.stats.requisitesQueued.Add(1)
		case f.redirect && why == judge.Seen:
			// A loop, or a page reached before by another way.
			c.stats.redirectSeen.Add(1)
		}
		if f.redirect && !p.l.Requisite && !p.l.Sitemap {
			c.judge.Redirected(p.u, p.l.Via, f.URL, why)
			worth.Redirect(f.URL)
		}
	}
	if r := p.resp; r != nil && (r.StatusCode >= 200 && r.StatusCode < 300 || p.notModified) && !p.l.Requisite && !p.l.Sitemap {
		c.judge.Answered(p.u, p.l.Via)
	}
	clear(p.found)
	p.found = p.found[:0]
	if c.inlinks != nil && p.votes != nil {
		p.votes.Keys(func(k seen.Key) { c.inlinks.Add(k) })
	}
	c.judge.Weigh(worth, p.content(), p.pb)
}

// content is what the page showed for judge.Weigh: only a page fetched
// for the first time weighs.
func (p *pageRun) content() judge.Content {
	switch {
	case p.resp == nil || p.l.Requisite || p.l.Sitemap || p.prev.Digest != ([sha1.Size]byte{}):
		return judge.NotWeighed
	case p.cp.Revisit || p.copied:
		return judge.CopyOf(p.l.Via, p.cp.RefersTo(), p.rec.NearDupOf)
	case p.rec.NoIndex && p.rec.NoFollow:
		return judge.Closed
	case p.rec.Search && p.read:
		return judge.Search
	case judge.Missed(p.resp.StatusCode):
		return judge.Missing
	case p.read:
		return judge.Distinct
	}
	return judge.Unjudged
}

// rankOf sets the rank f is found with: for a link the page voted for,
// its estimate and the depth prior (state.Batch boosts it, and gives it
// the high front queue if that is high enough); for anything else the
// page leads to (a requisite, a redirect's target, a sitemap), the rank
// the page was queued with: it is as important as the page that needs
// it. It reports whether a link's estimate rose enough to queue it again
// if it is queued already.
func rankOf(p *pageRun, f *found) (promote bool) {
	r, promote, ok := p.votes.Of(f.Key)
	if f.Rank = p.l.Rank; ok && f.Key != (seen.Key{}) {
		f.Rank = importance.Rank(r, f.Depth+p.deeper)
	}
	return promote
}

// admitListed admits a page a sitemap lists, with what the sitemap says of
// it (schedule.Listed): a new page's record keeps the hints; in
// continuous mode, what the sitemap says of a page already known goes to
// the recrawl scan. A seed sitemap's page is a seed: depth 0, High.
func (c *Crawler) admitListed(pb *state.Batch, f *found, l frontier.Lease) {
	u := f.URL
	now := time.Now()
	h, prio := schedule.Listed(*f.listed, now)
	depth := l.Depth + 1
	if f.seed {
		depth, prio = 0, frontier.High
	}
	k := seen.KeyOf(u.String)
	rank := importance.Rank(c.rank.Cash(k), depth) + importance.Listed(h.Priority, h.LastMod, now)
	cand := judge.Candidate{URL: u, Depth: depth, Priority: prio, Rank: rank, Via: l.URL, Key: k, Listed: true, Seed: l.Seed, Path: crawllog.Extend(l.Path, crawllog.Manifest)}
	why := c.admit(pb, cand)
	part := uint16(partition.Of(u.Authority, c.cfg.Partitions))
	switch {
	case why == "":
		// Its record, staged by the judge, with the sitemap's hints.
		it := pb.Items[len(pb.Items)-1] // as Stage queued it, boosted
		pb.Batch.PutURL(part, u.Authority, k, store.URLRecord{URL: u.String, Depth: cand.Depth, Priority: uint8(it.Priority), Rank: it.Rank, Status: store.URLQueued,
			InSitemap: true, SitemapPriority: h.Priority, SitemapLastMod: h.LastMod})
	case why == judge.Seen && c.cfg.Recrawl != nil:
		c.recrawler.Hint(u.Authority, k, h)
	}
}

// admit judges cand and stages it in pb: queued (its record in pb), or
// handed to the node that owns its host; it returns why not ("" when
// queued, judge.Forwarded when handed over). A store error stops the
// crawl.
func (c *Crawler) admit(pb *state.Batch, cand judge.Candidate) string {
	why, err := c.judge.Admit(cand, pb)
	switch {
	case err != nil:
		c.fail(fmt.Errorf("crawl: %w", err))
	case why == judge.Forwarded:
		pb.Forward = append(pb.Forward, Offered{URL: cand.URL.String, Depth: cand.Depth, Hops: cand.Hops, Priority: importance.Priority(cand.Rank, cand.Priority),
			Via: cand.Via, Resource: cand.As.Resource(), Requisite: cand.As.Requisite(), Sitemap: cand.Sitemap, Seed: cand.Seed, Path: cand.Path})
		c.stats.forwarded.Add(1)
	}
	return why
}

// maxSeedSitemaps is how many of a seed host's sitemaps go High: its
// /sitemap.xml and the first its robots.txt names. A robots.txt that names
// hundreds has the rest asked for as links are.
const maxSeedSitemaps = 4

// sitemapPriority is the priority of the i-th sitemap a lease's robots.txt
// leads to (its /sitemap.xml first): High for a seed's (a lease at depth
// 0), up to maxSeedSitemaps, so that they are asked for right after the
// seed, before the pages it links to: one request that lists the host's
// pages, with what ranks them, is the best of what the host can be asked.
// Others, and an index's own sitemaps, are Normal, as links are.
func sitemapPriority(l frontier.Lease, i int) frontier.Priority {
	if l.Depth == 0 && i < maxSeedSitemaps {
		return frontier.High
	}
	return frontier.Normal
}

// findSitemaps finds the sitemaps of the leased host once its robots.txt
// allows it: the files its Sitemap: lines name (on any host: the scope
// and that host's robots.txt judge them) and its /sitemap.xml, one hop
// from the URL whose lease fetched the robots.txt.
func (c *Crawler) findSitemaps(p *pageRun) {
	if c.cfg.NoSitemaps || c.cfg.SitemapOnly {
		return
	}
	u := p.u
	robotsURL := u.Scheme + "://" + u.Authority + "/robots.txt"
	base, err := c.canon.NewBase(robotsURL)
	if err != nil {
		return
	}
	targets := []string{"/sitemap.xml"}
	if pol := c.robots.Cached(robotstxt.Origin(u.Scheme, p.l.Host), time.Now()); pol != nil {
		targets = append(targets, pol.Sitemaps...)
	}
	// Found on the robots.txt, the URL's prerequisite: /sitemap.xml by
	// convention, the others listed there.
	robotsPath := crawllog.Extend(p.l.Path, crawllog.Prerequisite)
	for i, t := range targets {
		su, err := base.Resolve(t)
		if err != nil {
			c.judge.Count(judge.Invalid, 1)
			continue
		}
		hop := crawllog.Manifest
		if i == 0 {
			hop = crawllog.Inferred
		}
		p.found = append(p.found, found{Candidate: judge.Candidate{URL: su, Depth: p.l.Depth + 1, Priority: sitemapPriority(p.l, i), Via: robotsURL, As: judge.AsResource, Sitemap: true,
			Seed: p.l.Seed, Path: crawllog.Extend(robotsPath, hop)}})
	}
}
