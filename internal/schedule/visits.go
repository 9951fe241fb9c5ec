package schedule

import (
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// Visit is what a lease taught about its URL in continuous mode: its
// record (validators, digest, change history, next crawl) and the
// importance it was scheduled with, for its entry in the recrawl index;
// and the due time of the entry it had, if it was leased while scheduled.
type Visit struct {
	// Record is the URL's record after the visit; the lease's end sets
	// its status, and its last status and outcome unless Adopted.
	Record     store.URLRecord
	Importance float64
	// Adopted marks another node's visit (VisitedElsewhere): its status
	// and outcome are kept.
	Adopted bool
	// First is the capture that holds the payload the URL has now (its
	// digest's record), when it was deduplicable: a node that fetches the
	// URL next may then ask conditionally and archive a 304 as a revisit
	// of it.
	First   store.DigestRecord
	prevDue time.Time
	// once marks the visit of a crawl that ends (Once).
	once bool
	// prior is the host's recrawl prior with this visit pooled, to store
	// (nil if the visit taught nothing of its host).
	prior *store.PriorRecord
}

// Once is the visit of a crawl that ends, whose record r keeps what a
// later recrawl of the data directory (weft serve) asks with: the
// validators, and the payload digest a 304 refers to. It has no recrawl
// index entry.
func Once(r store.URLRecord) *Visit { return &Visit{Record: r, once: true} }

// Stage stages in b what the visit leaves beside the URL's record r (as
// the lease's end wrote it, with its status, in partition part): the
// host's prior, and the URL's entry in the recrawl index, which replaces
// the one it had. A nil Visit (a crawl that ends, and a lease that
// taught nothing) stages nothing.
func (v *Visit) Stage(b *store.Batch, part uint16, host string, k seen.Key, r store.URLRecord) {
	if v == nil {
		return
	}
	if v.prior != nil {
		b.PutPrior(part, host, *v.prior)
	}
	if v.once || (v.Adopted && r.NextCrawl.IsZero()) { // a crawl that ends: no recrawl index
		return
	}
	if !v.prevDue.IsZero() {
		// The URL was leased while scheduled (queued twice: a redirect
		// to itself, a pull forward racing a scan): its old entry goes,
		// so that it has one.
		b.DeleteDue(part, v.prevDue, host, k)
	}
	if r.Status != store.URLRejected && r.Status != store.URLQueued {
		b.PutDue(Entry(part, host, k, r, v.Importance))
	}
}

// Entry is the recrawl index entry of a URL's record.
func Entry(part uint16, host string, k seen.Key, r store.URLRecord, importance float64) store.DueEntry {
	return store.DueEntry{
		Part: part, Due: r.NextCrawl, Host: host, Hash: k, LastFetch: r.LastFetch,
		Visits: r.Visits, Changes: r.Changes, Span: r.Span, Importance: importance, Unchanged: r.Unchanged,
		Dating: r.Dating,
	}
}

// Scheduled returns the due time of r's recrawl index entry, zero if it
// has none.
func Scheduled(r store.URLRecord) time.Time {
	if (r.Status == store.URLDone || r.Status == store.URLFailed) && !r.LastFetch.IsZero() {
		return r.NextCrawl
	}
	return time.Time{}
}

// VisitedElsewhere reads, in a cluster (Config.SharedVisits), the record
// of a page about to be fetched: a visit another node made since the URL
// was queued here (a node's Adopt) that is not due again counts as done.
// It returns that visit, Adopted: no request, the host's clock untouched,
// and the URL's record that node's, so that in continuous mode its next
// crawl is the one that node learnt.
func (s *Planner) VisitedElsewhere(l frontier.Lease) (*Visit, bool) {
	if !s.shared || l.RobotsFor != "" || l.Seq == 0 {
		return nil, false
	}
	part := partition.Of(l.Host, s.parts)
	r, ok, err := s.db.GetURL(uint16(part), l.Host, seen.KeyOf(l.URL))
	if err != nil || !ok || r.LastFetch.IsZero() || !r.LastFetch.After(l.Added) {
		return nil, false
	}
	if !r.NextCrawl.IsZero() && !r.NextCrawl.After(time.Now()) {
		return nil, false // due again: fetched here
	}
	vis := &Visit{Record: r, Adopted: true}
	if s.configured != nil {
		vis.Importance = s.Importance(l.URL, &vis.Record)
	}
	return vis, true
}
