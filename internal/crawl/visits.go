package crawl

import (
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// Visited is what a node of a cluster tells the others of a URL it fetched
// (Cluster.Fetched), and what the URL's next owner takes on (Adopt): its
// record after the fetch, with the importance its next crawl was scheduled
// with.
type Visited struct {
	URL        string
	Record     store.URLRecord
	Importance float64 `json:",omitempty"`
	// First is the capture that holds the URL's payload (see visit.first),
	// when the visit made or referred to one.
	First *store.DigestRecord `json:",omitempty"`
}

// visitedElsewhere reads, in a cluster (Config.SharedVisits), the record
// of a page about to be fetched: a visit another node made since the URL
// was queued here (Adopt) that is not due again counts as done.
func (s *planner) visitedElsewhere(l frontier.Lease) (store.URLRecord, bool) {
	if !s.shared || l.RobotsFor != "" || l.Seq == 0 {
		return store.URLRecord{}, false
	}
	part := partition.Of(l.Host, s.parts)
	r, ok, err := s.db.GetURL(uint16(part), l.Host, seen.KeyOf(l.URL))
	if err != nil || !ok || r.LastFetch.IsZero() || !r.LastFetch.After(l.Added) {
		return store.URLRecord{}, false
	}
	due := !r.NextCrawl.IsZero() && !r.NextCrawl.After(time.Now())
	return r, !due
}

// elsewhere is the outcome of a lease whose URL another node fetched: no
// request, the host's clock untouched, and the URL's record that node's,
// so that in continuous mode its next crawl is the one that node learnt.
func (s *planner) elsewhere(l frontier.Lease, r store.URLRecord) leaseOutcome {
	vis := &visit{rec: r, adopted: true}
	if s.configured != nil {
		vis.importance = s.importance(l.URL, &vis.rec)
	}
	return leaseOutcome{outcome: "elsewhere", status: r.LastStatus, visit: vis}
}
