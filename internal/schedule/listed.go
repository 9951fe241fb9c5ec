package schedule

import (
	"fmt"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/frontier"
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

// Listed is what a sitemap's hint about a page it lists is taken to say
// at now: the hint, with a <lastmod> in the future not believed, and the
// priority a new page goes to the front queues with: high when its
// <lastmod> is within listedFresh or its <priority> is above the default
// 0.5. A new page's record keeps the hint, which weighs in its importance
// (recrawl.Importance); what it says of a page already known goes to the
// Recrawler (Hint).
func Listed(h content.Hint, now time.Time) (content.Hint, frontier.Priority) {
	if h.LastMod.After(now.Add(time.Hour)) {
		h.LastMod = time.Time{}
	}
	prio := frontier.Normal
	if h.Priority > 0.5 || (!h.LastMod.IsZero() && now.Sub(h.LastMod) < listedFresh) {
		prio = frontier.High
	}
	return h, prio
}

// Hint keeps what a sitemap said of a URL already known (k, of host),
// for the next scan (applyListed), the one writer of the records of URLs
// not in flight; the latest hint about a URL wins. Past maxListed hints
// waiting, it is dropped and counted.
func (rc *Recrawler) Hint(host string, k seen.Key, h content.Hint) {
	part := uint16(partition.Of(host, rc.sched.parts))
	if !rc.listed.put(k, listedHint{part: part, host: host, hint: h}) {
		rc.listedDropped.Add(1)
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
// sb: the hints are kept (they weigh in importance at the next visit), and
// a URL whose <lastmod> is after its last fetch is queued again, at high
// priority, once Min has passed since that fetch and its host has room
// for a recrawl: the site says it changed. It is checked against the
// scope and the trap cut-off first, as a due URL is. A hint about a URL
// in flight (or waiting for Min or room) is held for a later scan. It
// returns the keys of the URLs whose records it wrote: the scan leaves
// their index entries to a later one.
func (rc *Recrawler) applyListed(sb *scanBatch, room *hostRoom, p recrawl.Policy, now time.Time) (map[seen.Key]bool, error) {
	touched := map[seen.Key]bool{}
	pulled := 0
	for k, lh := range rc.listed.take() {
		r, ok, err := rc.sched.db.GetURL(lh.part, lh.host, k)
		if err != nil {
			return nil, fmt.Errorf("schedule: read a URL a sitemap lists: %w", err)
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
		case !rc.stillInScope(r):
			sb.b.DeleteDue(lh.part, r.NextCrawl, lh.host, k)
			r.Status, write = store.URLRejected, true
		default:
			room.take(lh.host)
			sb.b.DeleteDue(lh.part, r.NextCrawl, lh.host, k)
			r.Status, write = store.URLQueued, true
			sb.items = append(sb.items, frontier.Item{URL: r.URL, Host: lh.host, Depth: r.Depth, Priority: frontier.High, Added: now})
			pulled++
		}
		if write {
			sb.b.PutURL(lh.part, lh.host, k, r)
			touched[k] = true
		}
	}
	rc.listedChanged.Add(int64(pulled))
	return touched, nil
}

// holdListed keeps a hint for a later scan, unless a newer one came.
func (rc *Recrawler) holdListed(k seen.Key, lh listedHint) {
	rc.listed.mu.Lock()
	defer rc.listed.mu.Unlock()
	if _, newer := rc.listed.m[k]; newer {
		return
	}
	if rc.listed.m == nil {
		rc.listed.m = map[seen.Key]listedHint{}
	}
	if len(rc.listed.m) >= maxListed {
		rc.listedDropped.Add(1)
		return
	}
	rc.listed.m[k] = lh
}

// stillInScope checks a URL queued again against the scope and the trap
// cut-off, which a restart may have narrowed.
func (rc *Recrawler) stillInScope(r store.URLRecord) bool {
	u, err := rc.sched.canon.Parse(r.URL)
	if err != nil || rc.traps.Trapped(u) {
		return false
	}
	return r.Depth == 0 || rc.scope.Check(u, r.Depth) == ""
}
