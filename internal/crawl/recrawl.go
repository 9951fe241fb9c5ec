package crawl

import (
	"cmp"
	"context"
	"crypto/sha1"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"weft/internal/canon"
	"weft/internal/fetch"
	"weft/internal/frontier"
	"weft/internal/partition"
	"weft/internal/recrawl"
	"weft/internal/seen"
	"weft/internal/store"
	"weft/internal/warc"
)

// Continuous mode (Config.Recrawl): a fetched page is due again at a time
// learnt from how often it changed, is asked for with the validators of
// its last 200 (a 304 is archived as a server-not-modified revisit and not
// parsed), and re-enters the front queues when due, through the same back
// queues and clocks as every other URL.

// previousVisit returns the URL's record and the conditional request
// headers it allows.
func (c *Crawler) previousVisit(l frontier.Lease) (store.URLRecord, http.Header) {
	part := partition.Of(l.Host, c.cfg.Partitions)
	prev, ok, err := c.state.db.GetURL(uint16(part), l.Host, seen.KeyOf(l.URL))
	if err != nil || !ok {
		return store.URLRecord{}, nil
	}
	var hdr http.Header
	if prev.Digest != ([sha1.Size]byte{}) {
		if prev.ETag != "" {
			hdr = http.Header{"If-None-Match": {prev.ETag}}
		}
		if prev.LastModified != "" {
			if hdr == nil {
				hdr = http.Header{}
			}
			hdr.Set("If-Modified-Since", prev.LastModified)
		}
	}
	return prev, hdr
}

// archiveNotModified writes a 304 as a server-not-modified revisit of the
// capture that holds the payload the URL last had, and returns it.
func (c *Crawler) archiveNotModified(resp *fetch.Response, prev store.URLRecord, u *canon.URL) capture {
	first, ok, err := c.state.db.GetDigest(prev.Digest)
	if err != nil || !ok || !c.stillArchived(first) {
		return c.archive(resp, nil, u) // nothing to refer to: a record of its own
	}
	ip := resp.RemoteAddr
	if i := strings.LastIndexByte(ip, ':'); i > 0 {
		ip = strings.Trim(ip[:i], "[]")
	}
	digest := prev.Digest
	ex := warc.Exchange{
		URL: resp.URL, Date: resp.Start, IP: ip,
		RequestHeader: resp.RequestHeader, ResponseHeader: resp.ResponseHeader,
		PayloadSHA1: &digest,
		Revisit: &warc.Revisit{RefersToURI: first.URL, RefersToDate: first.Date, RefersTo: first.RecordID,
			Profile: warc.ProfileServerNotModified},
	}
	cp := capture{digest: digest, revisit: true, first: first}
	if cp.loc, err = c.warc.WriteExchange(ex); err != nil {
		c.fail(fmt.Errorf("crawl: archive %s: %w", resp.URL, err))
		return cp
	}
	c.stats.notModified.Add(1)
	cp.key = u.SURT()
	cp.rec = store.CaptureRecord{
		URL: resp.URL, Date: resp.Start, Status: resp.StatusCode, MIME: mimeType(resp.Header.Get("Content-Type")),
		Digest: digest, File: cp.loc.File, Offset: cp.loc.Offset, Length: cp.loc.Length, Kind: store.CaptureRevisit,
	}
	return cp
}

// learn folds a visit into the URL's history and sets its next crawl.
func (c *Crawler) learn(l frontier.Lease, prev store.URLRecord, resp *fetch.Response, cp capture, notModified bool) *store.URLRecord {
	h := recrawl.History{Visits: prev.Visits, Changes: prev.Changes, Span: prev.Span, Last: prev.LastFetch}
	v := store.URLRecord{ETag: prev.ETag, LastModified: prev.LastModified, Digest: prev.Digest}
	switch {
	case notModified:
		h.Observe(resp.Start, false)
		if et := resp.Header.Get("ETag"); et != "" {
			v.ETag = et
		}
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.Truncated == "":
		changed := cp.digest != prev.Digest
		h.Observe(resp.Start, changed)
		v.Digest = cp.digest
		v.ETag, v.LastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	default:
		// An error or a redirect says nothing of the page's content; it
		// is asked again when its history says, from now.
		h.Last = resp.Start
	}
	v.Visits, v.Changes, v.Span = h.Visits, h.Changes, h.Span
	importance := recrawl.Importance(recrawl.Signals{Seed: l.Depth == 0, Priority: -1})
	v.NextCrawl = c.cfg.Recrawl.Next(l.URL, h, importance)
	v.LastFetch = resp.Start
	return &v
}

// maxDuePerScan bounds the URLs one scan queues again, so that a scan
// after a long stop does not flood the front queues.
const maxDuePerScan = 10000

// rescan queues again, every RecrawlScan, the URLs whose next crawl has
// come, most valuable first (recrawl.Policy.Score), until ctx is done.
func (c *Crawler) rescan(ctx context.Context) {
	t := time.NewTicker(c.cfg.RecrawlScan)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := c.queueDue(time.Now()); err != nil {
			c.fail(err)
			return
		}
	}
}

// queueDue queues the URLs due at now.
func (c *Crawler) queueDue(now time.Time) error {
	type due struct {
		part  uint16
		host  string
		hash  [16]byte
		rec   store.URLRecord
		score float64
	}
	var all []due
	for part := range c.cfg.Partitions {
		err := c.state.db.ScanURLs(uint16(part), func(host string, hash [16]byte, r store.URLRecord) bool {
			if r.Status == store.URLDone && !r.NextCrawl.IsZero() && !r.NextCrawl.After(now) {
				h := recrawl.History{Visits: r.Visits, Changes: r.Changes, Span: r.Span, Last: r.LastFetch}
				w := recrawl.Importance(recrawl.Signals{Seed: r.Depth == 0, Priority: -1})
				all = append(all, due{uint16(part), host, hash, r, c.cfg.Recrawl.Score(h, w, now)})
			}
			return true
		})
		if err != nil {
			return fmt.Errorf("crawl: find the URLs due for a recrawl: %w", err)
		}
	}
	if len(all) == 0 {
		return nil
	}
	slices.SortStableFunc(all, func(a, b due) int { return cmp.Compare(b.score, a.score) })
	all = all[:min(len(all), maxDuePerScan)]
	pb := c.state.newBatch()
	for _, d := range all {
		r := d.rec
		r.Status = store.URLQueued
		pb.b.PutURL(d.part, d.host, d.hash, r)
		prio := frontier.Normal
		if r.Depth == 0 {
			prio = frontier.High
		}
		pb.items = append(pb.items, frontier.Item{URL: r.URL, Host: d.host, Depth: r.Depth, Priority: prio, Added: now})
	}
	if err := pb.commit(c.seen, c.front); err != nil {
		return fmt.Errorf("crawl: queue %d URLs due for a recrawl: %w", len(all), err)
	}
	c.stats.recrawls.Add(int64(len(all)))
	return nil
}
