package crawl

import (
	"cmp"
	"context"
	"crypto/sha1"
	"fmt"
	"math"
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

// previousVisit returns the URL's record, the capture that holds the
// payload it last had, and the conditional request headers they allow:
// validators are sent only while that capture can be referred to, so a 304
// always has a payload to stand for (else the page is fetched whole).
func (c *Crawler) previousVisit(l frontier.Lease) (store.URLRecord, store.DigestRecord, http.Header) {
	part := partition.Of(l.Host, c.cfg.Partitions)
	prev, ok, err := c.state.db.GetURL(uint16(part), l.Host, seen.KeyOf(l.URL))
	if err != nil || !ok || prev.Digest == ([sha1.Size]byte{}) || (prev.ETag == "" && prev.LastModified == "") {
		return prev, store.DigestRecord{}, nil
	}
	first, ok, err := c.state.db.GetDigest(prev.Digest)
	if err != nil || !ok || !c.stillArchived(first) {
		return prev, store.DigestRecord{}, nil
	}
	hdr := http.Header{}
	if prev.ETag != "" {
		hdr.Set("If-None-Match", prev.ETag)
	}
	if prev.LastModified != "" {
		hdr.Set("If-Modified-Since", prev.LastModified)
	}
	return prev, first, hdr
}

// archiveNotModified writes a 304 as a server-not-modified revisit of
// first, the capture that holds the payload the URL last had.
func (c *Crawler) archiveNotModified(resp *fetch.Response, prev store.URLRecord, first store.DigestRecord, u *canon.URL) capture {
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
	var err error
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

// keepVisit is the record of a lease that ended without a response (an
// error, robots.txt or a policy refused it): the URL keeps its validators
// and history, and is due again like any page, from now.
func (c *Crawler) keepVisit(l frontier.Lease) *store.URLRecord {
	part := partition.Of(l.Host, c.cfg.Partitions)
	v, _, err := c.state.db.GetURL(uint16(part), l.Host, seen.KeyOf(l.URL))
	if err != nil {
		v = store.URLRecord{}
	}
	h := recrawl.History{Visits: v.Visits, Changes: v.Changes, Span: v.Span, Last: time.Now()}
	v.LastFetch = h.Last
	v.NextCrawl = c.cfg.Recrawl.Next(l.URL, h, importanceOf(l.Depth), c.threshold())
	return &v
}

// threshold is the score a visit must promise now (recrawl.Threshold, as
// the last scan left it).
func (c *Crawler) threshold() float64 { return math.Float64frombits(c.recrawlMu.Load()) }

// importanceOf is what the crawler knows of a URL's importance so far: a
// seed's, or an ordinary page's.
func importanceOf(depth int) float64 {
	return recrawl.Importance(recrawl.Signals{Seed: depth == 0, Priority: -1})
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
		// An error status or a redirect: counted as a visit that found
		// nothing new, so a page that keeps failing (or moved for good)
		// is visited less and less, as an unchanging one is.
		h.Observe(resp.Start, false)
	}
	v.Visits, v.Changes, v.Span = h.Visits, h.Changes, h.Span
	v.NextCrawl = c.cfg.Recrawl.Next(l.URL, h, importanceOf(l.Depth), c.threshold())
	v.LastFetch = resp.Start
	return &v
}

// maxDuePerScan bounds the URLs one scan queues again, so that a scan
// after a long stop does not flood the front queues.
const maxDuePerScan = 10000

// rescan queues URLs again every RecrawlScan until ctx is done.
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

// queueDue queues again the URLs due at now, most valuable first, as many
// as the crawl can take: while less than a scan's worth of fetches waits
// in the queues, up to two scans' worth, so that new links and recrawls
// share the crawl's pace and the queues never fill with recrawls. A URL is due once Min has passed since
// its last visit and its recrawl.Policy.Score (the index of the best
// refresh schedule for a budget of visits) reaches the threshold, which
// rises while more is due than can be fetched and falls, to the policy's
// floor, when less is; or once Max has passed, and then it goes first.
// Each is checked against the scope and the trap cut-off again (a restart
// may have narrowed them): one now out is marked rejected for good.
func (c *Crawler) queueDue(now time.Time) error {
	fetched := c.stats.pages.Load()
	pace := max(int(fetched-c.recrawlPages), c.cfg.Workers) // fetches since the last scan
	c.recrawlPages = fetched
	queued := c.front.Stats().Queued
	// A scan's worth of work waiting means the crawl goes as fast as its
	// hosts' clocks let it: nothing more is queued and the threshold
	// rises. Otherwise up to two scans' worth may wait, so that the pace
	// can grow, and the threshold falls if fewer than half of that are due.
	saturated := queued >= pace
	budget := 0
	if !saturated {
		budget = min(2*pace-queued, maxDuePerScan)
	}
	p := c.cfg.Recrawl.WithDefaults()
	mu := c.recrawlTh.Value(p.Floor)
	type due struct {
		part  uint16
		host  string
		hash  [16]byte
		rec   store.URLRecord
		score float64
	}
	// The best budget URLs due: a min-heap on score.
	best := &dueHeap[due]{less: func(a, b due) bool { return a.score < b.score }}
	ndue := 0
	for part := range c.cfg.Partitions {
		err := c.state.db.ScanURLs(uint16(part), func(host string, hash [16]byte, r store.URLRecord) bool {
			if r.Status == store.URLQueued || r.Status == store.URLRejected || r.LastFetch.IsZero() {
				return true
			}
			h := recrawl.History{Visits: r.Visits, Changes: r.Changes, Span: r.Span, Last: r.LastFetch}
			w := importanceOf(r.Depth)
			if !p.Due(h, w, mu, now) {
				return true
			}
			ndue++
			s := p.Score(h, w, now)
			if now.Sub(r.LastFetch) >= p.Max {
				s = math.Inf(1)
			}
			best.offer(due{uint16(part), host, hash, r, s}, budget)
			return true
		})
		if err != nil {
			return fmt.Errorf("crawl: find the URLs due for a recrawl: %w", err)
		}
	}
	c.recrawlTh.Adjust(ndue, budget, p.Floor)
	c.recrawlMu.Store(math.Float64bits(c.recrawlTh.Value(p.Floor)))
	if len(best.items) == 0 {
		return nil
	}
	all := best.items
	slices.SortFunc(all, func(a, b due) int { return cmp.Compare(b.score, a.score) })
	pb := c.state.newBatch()
	requeued := 0
	for _, d := range all {
		r := d.rec
		u, err := c.canon.Parse(r.URL)
		out := err != nil || c.trapped(d.host)
		if !out && r.Depth > 0 {
			out = c.scope.Check(u, r.Depth) != ""
		}
		if out {
			r.Status = store.URLRejected
			pb.b.PutURL(d.part, d.host, d.hash, r)
			continue
		}
		r.Status = store.URLQueued
		pb.b.PutURL(d.part, d.host, d.hash, r)
		prio := frontier.Normal
		if r.Depth == 0 {
			prio = frontier.High
		}
		pb.items = append(pb.items, frontier.Item{URL: r.URL, Host: d.host, Depth: r.Depth, Priority: prio, Added: now})
		requeued++
	}
	if err := pb.commit(c.seen, c.front); err != nil {
		return fmt.Errorf("crawl: queue %d URLs due for a recrawl: %w", requeued, err)
	}
	c.stats.recrawls.Add(int64(requeued))
	return nil
}

// dueHeap keeps the n greatest items offered.
type dueHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *dueHeap[T]) offer(x T, n int) {
	switch {
	case n <= 0: // no room this round (the URL is still counted as due)
		return
	case len(h.items) < n:
		h.items = append(h.items, x)
		h.up(len(h.items) - 1)
	case h.less(h.items[0], x):
		h.items[0] = x
		h.down(0)
	}
}

func (h *dueHeap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *dueHeap[T]) down(i int) {
	for {
		l, small := 2*i+1, i
		if l < len(h.items) && h.less(h.items[l], h.items[small]) {
			small = l
		}
		if r := l + 1; r < len(h.items) && h.less(h.items[r], h.items[small]) {
			small = r
		}
		if small == i {
			return
		}
		h.items[i], h.items[small] = h.items[small], h.items[i]
		i = small
	}
}
