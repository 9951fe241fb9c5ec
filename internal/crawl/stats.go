package crawl

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/report"
	"github.com/weft-crawler/weft/internal/store"
)

// counters are the crawl's running totals, updated by workers without a
// shared lock on the hot path (atomics, and maps behind short locks only for
// label sets that are small and bounded).
type counters struct {
	pages              atomic.Int64 // responses to page requests
	requisiteFetches   atomic.Int64 // responses to requisite requests
	sitemapFetches     atomic.Int64 // responses to sitemap requests
	bytes              atomic.Int64 // body bytes received (wire, still encoded); robotstxt counts its own
	nearDups           atomic.Int64 // parsed pages within the near-duplicate threshold of an earlier one
	requisitesFound    atomic.Int64 // requisites found on pages and style sheets
	requisitesQueued   atomic.Int64 // of which new, and queued
	requisitesArchived atomic.Int64 // requisites fetched and archived (2xx)
	truncated          atomic.Int64
	overDecode         atomic.Int64 // decoded body over the cap (a compression bomb)
	badCoding          atomic.Int64 // body whose Content-Encoding could not be undone
	binary             atomic.Int64 // body labelled as text that is binary, not parsed
	redirectSeen       atomic.Int64 // redirects to a URL already seen: loops, or pages reached before
	forwarded          atomic.Int64 // URLs handed to other nodes (Cluster.Owns)
	requeued           atomic.Int64 // URLs queued again as their importance rose
	droppedCopies      atomic.Int64 // second entries of a URL dropped: found stale (state.State.Stale), or a copy its host's drop took first; not held entries released; or a copy that failed while its first entry waits (retryLater)
	dedupImported      atomic.Int64 // payload digests known from earlier crawls (Config.DedupFrom)
	errors             atomic.Int64 // requests without a response; robotstxt counts its own
	lastError          atomic.Pointer[lastError]
	noindex            atomic.Int64
	sitemapsLater      atomic.Int64 // sitemap leases put aside, the crawl having found pages enough (Crawler.pagesEnough)
	nofollow           atomic.Int64
	resumedURLs        atomic.Int64                  // URLs a resumed crawl found in its store
	resumedQueue       atomic.Int64                  // of which still queued (leases out at a crash included)
	throttled          atomic.Int64                  // 429 responses
	unavailable        atomic.Int64                  // 503 responses
	strained           atomic.Int64                  // requests cut by a timeout, a reset or a silence
	retried            atomic.Int64                  // URLs queued again after a transient failure (retryLater)
	parks              atomic.Int64                  // hosts parked for a failure streak
	fetchTime          histogram                     // page fetch durations
	queueDelay         histogram                     // from queueing to lease
	lastHigh           atomic.Int64                  // Unix nanoseconds of the last high-priority fetch
	hosts              *hostmap.Map[store.HostState] // per host: 429s, 5xxs, HTML pages cut at MaxLinksPerPage (the crawl's host states)
	linksCutAll        atomic.Int64                  // HTML pages cut at MaxLinksPerPage, every host's
	gaveUp             report.First[string]          // hosts given up after too many failures
	mu                 sync.Mutex
	byClass            map[string]int64
	byError            map[string]int64
	handled            map[string]int64 // responses read, by handler
	archivedTypes      map[string]int64 // 2xx responses archived, by media type (bounded: incType)
	refusedTypes       map[string]int64 // bodies the media policy refused, by media type (bounded)
	unreadable         map[string]int64 // of which read only in part (malformed), by handler
	cut                map[string]int64 // of which cut at a limit, by handler
	charsets           map[string]int64 // documents whose encoding was unknown, invalid or converted, by kind
	extended           map[string]int64 // documents extensions read, by extension
	extFailed          map[string]int64 // of which the extension failed on, by extension
}

func newCounters() *counters {
	return &counters{
		hosts:         hostmap.New[store.HostState](16),
		byClass:       map[string]int64{},
		byError:       map[string]int64{},
		handled:       map[string]int64{},
		archivedTypes: map[string]int64{},
		refusedTypes:  map[string]int64{},
		unreadable:    map[string]int64{},
		cut:           map[string]int64{},
		charsets:      map[string]int64{},
		extended:      map[string]int64{},
		extFailed:     map[string]int64{},
	}
}

func (c *counters) inc(m map[string]int64, k string, n int64) {
	c.mu.Lock()
	m[k] += n
	c.mu.Unlock()
}

// maxTypes bounds the media types counted apart: servers name any type
// they like, and past this many the rest count as "other".
const maxTypes = 64

// incType counts one response of media type mt ("" counted as "none") in
// m, bounded by maxTypes.
func (c *counters) incType(m map[string]int64, mt string) {
	if mt == "" {
		mt = "none"
	}
	c.mu.Lock()
	if _, ok := m[mt]; !ok && len(m) >= maxTypes {
		mt = "other"
	}
	m[mt]++
	c.mu.Unlock()
}

// topLinksCut returns the pages cut at the link cap, in all and for the n
// hosts with the most (most first).
func (c *counters) topLinksCut(n int) (total int64, top []HostPages) {
	c.hosts.Each(func(host string, v store.HostState) { // the hosts in memory: the most recent
		if v.LinksCut > 0 {
			top = append(top, HostPages{Host: host, Pages: v.LinksCut})
		}
	})
	total = c.linksCutAll.Load()
	slices.SortFunc(top, func(a, b HostPages) int { return cmp.Or(cmp.Compare(b.Pages, a.Pages), cmp.Compare(a.Host, b.Host)) })
	return total, top[:min(len(top), n)]
}

// lastError is the last request that got no response, "host: kind", and
// when it was counted: robotstxt keeps its own, and the later is the
// crawl's.
type lastError struct {
	text string
	at   time.Time
}

// failed counts a request that got no response: an error of its kind,
// the crawl's last error.
func (c *counters) failed(host, kind string) {
	c.errors.Add(1)
	c.inc(c.byError, kind, 1)
	c.lastError.Store(&lastError{text: host + ": " + kind, at: time.Now()})
}

// answered counts a response by what was asked for: a page, a requisite
// or a sitemap, each reported apart as each has its own budget.
func (s *counters) answered(l frontier.Lease) {
	switch {
	case l.Requisite:
		s.requisiteFetches.Add(1)
	case l.Sitemap:
		s.sitemapFetches.Add(1)
	default:
		s.pages.Add(1)
	}
}
