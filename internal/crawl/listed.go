package crawl

import (
	"fmt"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// listedFresh is how recent a sitemap's <lastmod> must be for a new page
// it lists to go to the high-priority front queue.
const listedFresh = 24 * time.Hour

// maxListed bounds the sitemap hints about known URLs waiting for a
// recrawl scan; past it, hints are dropped (and counted).
const maxListed = 100_000

// admitListed admits a page a sitemap lists, with what the sitemap says of
// it. A new page goes to the high-priority front queue when its <lastmod>
// is within listedFresh or its <priority> is above the default 0.5, and
// its record keeps the hints, which weigh in its importance
// (recrawl.Importance). In continuous mode, what the sitemap says of a
// page already known waits for the next recrawl scan (applyListed), the
// one writer of the records of URLs not in flight. A <lastmod> in the
// future is not believed.
func (c *Crawler) admitListed(pb *pageBatch, u canon.URL, l frontier.Lease, h content.Hint) {
	now := time.Now()
	if h.LastMod.After(now.Add(time.Hour)) {
		h.LastMod = time.Time{}
	}
	prio := frontier.Normal
	if h.Priority > 0.5 || (!h.LastMod.IsZero() && now.Sub(h.LastMod) < listedFresh) {
		prio = frontier.High
	}
	cand := judge.Candidate{URL: u, Depth: l.Depth + 1, Priority: prio, Via: l.URL}
	why := c.admit(pb, cand)
	part, k := uint16(partition.Of(u.Authority, c.cfg.Partitions)), seen.KeyOf(u.String)
	switch {
	case why == "":
		// Its record, staged by the judge, with the sitemap's hints.
		pb.b.PutURL(part, u.Authority, k, store.URLRecord{URL: u.String, Depth: cand.Depth, Priority: uint8(prio), Status: store.URLQueued,
			InSitemap: true, SitemapPriority: h.Priority, SitemapLastMod: h.LastMod})
	case why == judge.Seen && c.cfg.Recrawl != nil:
		if !c.recrawler.listed.put(k, listedHint{part: part, host: u.Authority, hint: h}) {
			c.stats.listedDropped.Add(1)
		}
	}
}

// listedHint is what a sitemap said of a known URL.
type listedHint struct {
	part uint16
	host string
	hint content.Hint
}

// listedHints holds sitemap hints about known URLs until a recrawl scan
// applies them; the latest hint about a URL wins.
type listedHints struct {
	mu sync.Mutex
	m  map[seen.Key]listedHint
}

// put keeps h for k, and reports false if the holder is full.
func (l *listedHints) put(k seen.Key, h listedHint) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[seen.Key]listedHint{}
	}
	if _, ok := l.m[k]; !ok && len(l.m) >= maxListed {
		return false
	}
	l.m[k] = h
	return true
}

// take returns the hints held and empties the holder.
func (l *listedHints) take() map[seen.Key]listedHint {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.m
	l.m = nil
	return m
}

// applyListed applies the sitemap hints held to their URLs' records, in
// pb: the hints are kept (they weigh in importance at the next visit), and
// a URL whose <lastmod> is after its last fetch is queued again, at high
// priority, once Min has passed since that fetch and its host has room
// for a recrawl: the site says it changed. It is checked against the
// scope and the trap cut-off first, as a due URL is. A hint about a URL
// in flight (or waiting for Min or room) is held for a later scan. It
// returns the keys of the URLs whose records it wrote: the scan leaves
// their index entries to a later one.
func (rc *recrawler) applyListed(pb *pageBatch, room *hostRoom, p recrawl.Policy, now time.Time) (map[seen.Key]bool, error) {
	touched := map[seen.Key]bool{}
	pulled := 0
	for k, lh := range rc.listed.take() {
		r, ok, err := rc.state.db.GetURL(lh.part, lh.host, k)
		if err != nil {
			return nil, fmt.Errorf("crawl: read a URL a sitemap lists: %w", err)
		}
		if !ok || r.Status == store.URLRejected {
			continue
		}
		if r.Status == store.URLQueued {
			rc.holdListed(k, lh) // in flight: its lease writes the record
			continue
		}
		h := lh.hint
		changed := h.LastMod.After(r.LastFetch)
		write := !r.InSitemap || r.SitemapPriority != h.Priority || !r.SitemapLastMod.Equal(h.LastMod)
		r.InSitemap, r.SitemapPriority, r.SitemapLastMod = true, h.Priority, h.LastMod
		switch {
		case !changed:
		case now.Sub(r.LastFetch) < p.Min || room.left(lh.host) <= 0:
			rc.holdListed(k, lh) // not yet: Min, and the host's room, hold for pulls as for recrawls
		case !rc.stillInScope(r, lh.host):
			pb.b.DeleteDue(lh.part, r.NextCrawl, lh.host, k)
			r.Status, write = store.URLRejected, true
		default:
			room.take(lh.host)
			pb.b.DeleteDue(lh.part, r.NextCrawl, lh.host, k)
			r.Status, write = store.URLQueued, true
			pb.items = append(pb.items, frontier.Item{URL: r.URL, Host: lh.host, Depth: r.Depth, Priority: frontier.High, Added: now})
			pulled++
		}
		if write {
			pb.b.PutURL(lh.part, lh.host, k, r)
			touched[k] = true
		}
	}
	rc.stats.listedChanged.Add(int64(pulled))
	return touched, nil
}

// holdListed keeps a hint for a later scan, unless a newer one came.
func (rc *recrawler) holdListed(k seen.Key, lh listedHint) {
	rc.listed.mu.Lock()
	defer rc.listed.mu.Unlock()
	if _, newer := rc.listed.m[k]; newer {
		return
	}
	if rc.listed.m == nil {
		rc.listed.m = map[seen.Key]listedHint{}
	}
	if len(rc.listed.m) >= maxListed {
		rc.stats.listedDropped.Add(1)
		return
	}
	rc.listed.m[k] = lh
}

// stillInScope checks a URL queued again against the scope and the trap
// cut-off, which a restart may have narrowed.
func (rc *recrawler) stillInScope(r store.URLRecord, host string) bool {
	u, err := rc.canon.Parse(r.URL)
	if err != nil || rc.judge.Trapped(host) {
		return false
	}
	return r.Depth == 0 || rc.scope.Check(u, r.Depth) == ""
}
