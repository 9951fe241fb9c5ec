package crawl

import (
	"crypto/sha1"
	"fmt"
	"time"

	"weft/internal/frontier"
	"weft/internal/partition"
	"weft/internal/seen"
	"weft/internal/store"
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

// Adopt takes visits other nodes made over (a partition taken over): each
// URL's record becomes the visit's, unless this crawl's own is as new, and
// the URL counts as seen, so that the partition's URLs replayed next are
// not queued again for it. In continuous mode the URL is scheduled at the
// visit's next crawl, and the record of the capture that holds its payload
// is kept, so that the next request is conditional and a 304 a revisit of
// that capture. A URL queued here (from an earlier ownership) keeps its
// place; its lease finds the newer visit and counts it (visitedElsewhere).
// The adopted records live in the store, not in memory. Like Offer, it
// answers ErrNotRunning outside Run.
func (c *Crawler) Adopt(vs []Visited) error {
	c.liveMu.RLock()
	defer c.liveMu.RUnlock()
	if !c.running {
		return ErrNotRunning
	}
	ab := c.state.newBatch()
	for _, v := range vs {
		u, err := c.canon.Parse(v.URL)
		if err != nil || u.String != v.URL {
			continue // not a canonical URL this crawl would have logged
		}
		host := u.Authority
		part := partition.Of(host, c.cfg.Partitions)
		k := seen.KeyOf(v.URL)
		r := v.Record
		r.URL = v.URL
		r.Status = store.URLDone
		if r.LastStatus == 0 {
			r.Status = store.URLFailed
		}
		isNew, err := c.seen.Add(host, v.URL, func(part int, k seen.Key) (bool, error) {
			ab.b.PutURL(uint16(part), host, k, r)
			ab.pending = append(ab.pending, seen.Pending{Partition: part, Key: k})
			return true, nil
		})
		if err != nil {
			ab.b.Close()
			return err
		}
		var prevDue time.Time
		if !isNew {
			prev, ok, err := c.state.db.GetURL(uint16(part), host, k)
			if err != nil {
				ab.b.Close()
				return fmt.Errorf("crawl: read %s to adopt a visit: %w", v.URL, err)
			}
			if ok && !prev.LastFetch.Before(r.LastFetch) {
				continue // this crawl's own record is as new
			}
			prevDue = scheduled(prev)
			if ok && prev.Status == store.URLQueued {
				r.Status = store.URLQueued // in this crawl's queues: its lease will count the visit
			}
			ab.b.PutURL(uint16(part), host, k, r)
		}
		if c.cfg.Recrawl == nil {
			continue
		}
		if !prevDue.IsZero() {
			ab.b.DeleteDue(uint16(part), prevDue, host, k)
		}
		if r.Status != store.URLQueued && !r.NextCrawl.IsZero() {
			ab.b.PutDue(dueEntry(uint16(part), host, k, r, v.Importance))
		}
		if v.First != nil && r.Digest != ([sha1.Size]byte{}) {
			if _, known, err := c.state.db.GetDigest(r.Digest); err == nil && !known {
				ab.b.PutDigest(r.Digest, *v.First)
			}
		}
	}
	if err := ab.commit(c.seen, c.front); err != nil {
		return fmt.Errorf("crawl: adopt %d visits: %w", len(vs), err)
	}
	return nil
}

// visitedElsewhere reads, in a cluster (Config.SharedVisits), the record
// of a page about to be fetched: a visit another node made since the URL
// was queued here (Adopt) that is not due again counts as done.
func (c *Crawler) visitedElsewhere(l frontier.Lease) (store.URLRecord, bool) {
	if !c.cfg.SharedVisits || l.RobotsFor != "" || l.Seq == 0 {
		return store.URLRecord{}, false
	}
	part := partition.Of(l.Host, c.cfg.Partitions)
	r, ok, err := c.state.db.GetURL(uint16(part), l.Host, seen.KeyOf(l.URL))
	if err != nil || !ok || r.LastFetch.IsZero() || !r.LastFetch.After(l.Added) {
		return store.URLRecord{}, false
	}
	due := !r.NextCrawl.IsZero() && !r.NextCrawl.After(time.Now())
	return r, !due
}

// elsewhere is the outcome of a lease whose URL another node fetched: no
// request, the host's clock untouched, and the URL's record that node's,
// so that in continuous mode its next crawl is the one that node learnt.
func (c *Crawler) elsewhere(l frontier.Lease, r store.URLRecord) leaseOutcome {
	vis := &visit{rec: r, adopted: true}
	if c.cfg.Recrawl != nil {
		vis.importance = c.importance(l.URL, &vis.rec)
	}
	return leaseOutcome{outcome: "elsewhere", status: r.LastStatus, visit: vis}
}
