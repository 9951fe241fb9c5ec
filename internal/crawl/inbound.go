package crawl

import (
	"context"
	"crypto/sha1"
	"fmt"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/schedule"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// What a cluster calls in the crawl of one of its nodes: the URLs and
// visits other nodes hand over, and the partitions that come and go (and
// HopFor). These methods are safe for concurrent use. Cluster is
// the other way, what the crawl calls in the cluster.

// Offer judges URLs found (by any node) for hosts this crawl owns: each
// goes through the filters, robots.txt, the caps and the seen set as if
// this crawl had found it, and is queued if new.
func (c *Crawler) Offer(urls []Offered) error {
	ph := c.life.Hold()
	defer c.life.Release()
	if !ph.Running {
		return ErrNotRunning
	}
	pb := c.state.NewBatch()
	for _, o := range urls {
		u, err := c.canon.Parse(o.URL)
		if err != nil {
			c.judge.Count(judge.Invalid, 1)
			continue
		}
		if o.Depth == 0 {
			// A seed, or where a seed redirects: it makes its own scope,
			// on the node that owns it as on the one that found it.
			c.widen(pb, o.Seed, u)
		}
		as := judge.AsOffered
		switch {
		case o.Requisite:
			as = judge.AsOfferedRequisite
		case o.Resource:
			as = judge.AsOfferedResource
		}
		c.admit(pb, judge.Candidate{URL: u, Depth: o.Depth, Hops: o.Hops, Priority: o.Priority, Via: o.Via, As: as, Sitemap: o.Sitemap, Seed: o.Seed, Path: o.Path})
	}
	if err := pb.Commit(c.seen, c.front); err != nil {
		c.fail(fmt.Errorf("crawl: record offered URLs: %w", err))
		return err
	}
	return nil
}

// HoldPartition keeps the hosts of partition p from being leased (on), or
// lets them be (off): a node holds the partitions it does not own.
func (c *Crawler) HoldPartition(p int, on bool) {
	c.recrawler.Hold(p, on)
	c.front.HoldPartition(p, on)
}

// ReleasePartition holds partition p's hosts and returns, once no lease on
// them is out, the clocks they must keep, for the next owner's TakeOver
// (frontier.ReleasePartition). It returns nil once Run has ended.
func (c *Crawler) ReleasePartition(p int) map[string]frontier.Clock {
	c.recrawler.Hold(p, true)
	c.robots.DropHops(p)
	return c.front.ReleasePartition(p)
}

// HopFor follows, for another node, the robots.txt chain of forHost from
// target, a URL on targetHost (a host of this one), with hops redirects
// followed so far, under targetHost's lease (robotstxt.Files.HopFor);
// local says that this crawl asked. It returns ErrNotRunning unless Run
// is taking work.
func (c *Crawler) HopFor(ctx context.Context, forHost, target, targetHost string, hops int, local bool) (RobotsAnswer, error) {
	if !c.life.Now().Running {
		return RobotsAnswer{}, ErrNotRunning
	}
	return c.robots.HopFor(ctx, forHost, target, targetHost, hops, local)
}

// TakeOver makes every host of partition p, taken over from another node,
// wait one gap from now, and installs the clocks its last owner kept
// (Cluster.Clocked) over that: when the last request to each host was is
// not known (frontier.TakeOverPartition). Call it before the partition is
// let go (HoldPartition false).
func (c *Crawler) TakeOver(p int, clocks map[string]frontier.Clock) {
	c.front.TakeOverPartition(p, time.Now(), clocks)
}

// Adopt takes visits other nodes made over (a partition taken over): each
// URL's record becomes the visit's, unless this crawl's own is as new, and
// the URL counts as seen, so that the partition's URLs replayed next are
// not queued again for it. In continuous mode the URL is scheduled at the
// visit's next crawl, and the record of the capture that holds its payload
// is kept, so that the next request is conditional and a 304 a revisit of
// that capture. A URL queued here (from an earlier ownership) keeps its
// place; its lease finds the newer visit and counts it (schedule.Planner.VisitedElsewhere).
// The adopted records live in the store, not in memory. Like Offer, it
// answers ErrNotRunning outside Run.
func (c *Crawler) Adopt(vs []Visited) error {
	ph := c.life.Hold()
	defer c.life.Release()
	if !ph.Running {
		return ErrNotRunning
	}
	ab := c.state.NewBatch()
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
			ab.Batch.PutURL(uint16(part), host, k, r)
			ab.Pending = append(ab.Pending, seen.Pending{Partition: part, Key: k})
			return true, nil
		})
		if err != nil {
			ab.Batch.Close()
			return err
		}
		var prevDue time.Time
		if !isNew {
			prev, ok, err := c.state.DB.GetURL(uint16(part), host, k)
			if err != nil {
				ab.Batch.Close()
				return fmt.Errorf("crawl: read %s to adopt a visit: %w", v.URL, err)
			}
			if ok && !prev.LastFetch.Before(r.LastFetch) {
				continue // this crawl's own record is as new
			}
			prevDue = schedule.Scheduled(prev)
			if ok && prev.Status == store.URLQueued {
				r.Status = store.URLQueued // in this crawl's queues: its lease will count the visit
			}
			ab.Batch.PutURL(uint16(part), host, k, r)
		}
		if c.cfg.Recrawl == nil {
			continue
		}
		if !prevDue.IsZero() {
			ab.Batch.DeleteDue(uint16(part), prevDue, host, k)
		}
		if r.Status != store.URLQueued && !r.NextCrawl.IsZero() {
			ab.Batch.PutDue(schedule.Entry(uint16(part), host, k, r, v.Importance))
		}
		if v.First != nil && r.Digest != ([sha1.Size]byte{}) {
			if _, known, err := c.state.DB.GetDigest(r.Digest); err == nil && !known {
				ab.Batch.PutDigest(r.Digest, *v.First)
			}
		}
	}
	if err := ab.Commit(c.seen, c.front); err != nil {
		return fmt.Errorf("crawl: adopt %d visits: %w", len(vs), err)
	}
	return nil
}

// EndDrained ends a running crawl as drained ("drained" in its
// summary), though its frontier, kept alive, never drains by itself: a
// node of a cluster whose cluster has found the whole crawl done. The
// leases out (none, on a drained crawl) run to their end.
func (c *Crawler) EndDrained() {
	ph := c.life.Hold()
	defer c.life.Release()
	if !ph.Running {
		return
	}
	c.endedDrained.Store(true)
	c.stopLeasing()
}

// Running reports whether Run is taking work (Offer, Adopt, AddSeeds).
func (c *Crawler) Running() bool {
	return c.life.Now().Running
}
