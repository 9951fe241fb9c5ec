package crawl

import (
	"cmp"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"weft/internal/canon"
	"weft/internal/content"
	"weft/internal/fetch"
	"weft/internal/frontier"
	"weft/internal/partition"
	"weft/internal/recrawl"
	"weft/internal/seen"
	"weft/internal/sketch"
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
// error, or a refusal: robots.txt, a policy): the URL keeps its validators
// and history and, after an error, is due again like any page, from now.
// A refused URL is marked rejected (pageBatch.done) and leaves the recrawl.
func (c *Crawler) keepVisit(l frontier.Lease) *visit {
	part := partition.Of(l.Host, c.cfg.Partitions)
	v, _, err := c.state.db.GetURL(uint16(part), l.Host, seen.KeyOf(l.URL))
	if err != nil {
		v = store.URLRecord{}
	}
	prevDue := scheduled(v)
	v.Depth = l.Depth
	h := history(v)
	h.Last = time.Now()
	v.LastFetch = h.Last
	w := c.importance(l.URL, &v)
	v.NextCrawl = c.policy(l.Host).Next(l.URL, h, w)
	return &visit{rec: v, importance: w, prevDue: prevDue}
}

// visit is what a lease taught about its URL in continuous mode: its
// record (validators, digest, change history, next crawl) and the
// importance it was scheduled with, for its entry in the recrawl index;
// and the due time of the entry it had, if it was leased while scheduled.
type visit struct {
	rec        store.URLRecord
	importance float64
	prevDue    time.Time
	adopted    bool // another node's visit (Crawler.elsewhere): its status and outcome kept
	// prior is the host's recrawl prior with this visit pooled, to store
	// (nil if the visit taught nothing of its host).
	prior *store.PriorRecord
	// first is the capture that holds the payload the URL has now (its
	// digest's record), when it was deduplicable: a node that fetches the
	// URL next may then ask conditionally and archive a 304 as a revisit
	// of it.
	first store.DigestRecord
}

// scheduled returns the due time of r's recrawl index entry, zero if it
// has none.
func scheduled(r store.URLRecord) time.Time {
	if (r.Status == store.URLDone || r.Status == store.URLFailed) && !r.LastFetch.IsZero() {
		return r.NextCrawl
	}
	return time.Time{}
}

// importance is what the crawler knows of a URL's importance (see
// recrawl.Importance): its in-links, whether it is a seed, and what a
// sitemap said. The in-link count is kept in r, so that it survives a
// loss of the counter's latest counts.
func (c *Crawler) importance(url string, r *store.URLRecord) float64 {
	if c.inlinks != nil {
		r.InLinks = max(r.InLinks, c.inlinks.Count(seen.KeyOf(url)))
	}
	s := recrawl.Signals{InLinks: r.InLinks, Seed: r.Depth == 0, Priority: -1}
	if r.InSitemap {
		s.Priority = r.SitemapPriority
	}
	return recrawl.Importance(s)
}

// learn folds a visit into the URL's history and sets its next crawl.
func (c *Crawler) learn(l frontier.Lease, prev store.URLRecord, resp *fetch.Response, cp capture, notModified bool) *visit {
	h := history(prev)
	v := prev
	v.Depth = l.Depth
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
	v.Visits, v.Changes, v.Span, v.Unchanged = h.Visits, h.Changes, h.Span, h.Unchanged
	w := c.importance(l.URL, &v)
	sitemap := missingSitemap(resp.StatusCode) && c.isSitemap(l)
	var prior *store.PriorRecord
	content := notModified || (resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.Truncated == "")
	if content && h.Last.After(prev.LastFetch) && !prev.LastFetch.IsZero() {
		// What the page showed is what its host shows: pooled into the
		// host's prior, the rate its new pages start from. Errors and
		// redirects say nothing of how its pages change.
		r := c.priors.observe(l.Host, history(prev), h)
		prior = &r
	}
	v.NextCrawl = c.policy(l.Host).Next(l.URL, h, w)
	if sitemap {
		v.NextCrawl = resp.Start.Add(c.cfg.RobotsTTL)
	}
	v.LastFetch = resp.Start
	return &visit{rec: v, importance: w, prevDue: scheduled(prev), first: cp.first, prior: prior}
}

// history is the change history a URL's record keeps.
func history(r store.URLRecord) recrawl.History {
	return recrawl.History{Visits: r.Visits, Changes: r.Changes, Span: r.Span, Last: r.LastFetch, Unchanged: r.Unchanged}
}

// policy is the recrawl policy for a page of host: the configured one,
// with the host's prior (recrawl.HostPrior: what its pages have shown,
// pooled) in place of the configured prior once the host has shown
// enough; the configured prior is the host prior's own fallback.
func (c *Crawler) policy(host string) recrawl.Policy {
	p := c.cfg.Recrawl.WithDefaults()
	p.Prior = c.priors.get(host).Rate(p.Prior)
	return p
}

// missingSitemap reports whether a sitemap's status says it is not there
// (404 or 410): most sites have no /sitemap.xml, and a crawler that asks
// for it as often as for a page asks in vain. It is asked for again on the
// robots.txt schedule, once per RobotsTTL, as the robots.txt that names
// sitemaps is read again: a site that adds one is heard of that soon.
func missingSitemap(status int) bool {
	return status == http.StatusNotFound || status == http.StatusGone
}

// isSitemap reports whether a lease is of a host's sitemap: its
// /sitemap.xml, one its robots.txt names, or one queued from its
// robots.txt (admitSitemaps). A sitemap an index lists is not judged here:
// the index is fetched again as often as its own schedule says.
func (c *Crawler) isSitemap(l frontier.Lease) bool {
	if strings.HasSuffix(l.Via, "/robots.txt") || isSitemapPath(l.URL) {
		return true
	}
	u, err := c.canon.Parse(l.URL)
	if err != nil {
		return false
	}
	pol := c.robots.cached(originKey(u.Scheme, l.Host), time.Now())
	return pol != nil && slices.Contains(pol.Sitemaps, l.URL)
}

// isSitemapPath reports whether url is a host's /sitemap.xml.
func isSitemapPath(url string) bool {
	rest, ok := strings.CutPrefix(url, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(url, "https://")
	}
	_, path, _ := strings.Cut(rest, "/")
	return ok && path == "sitemap.xml"
}

// maxDuePerScan bounds the URLs one scan queues again, so that a scan
// after a long stop does not flood the front queues; maxExaminePerScan
// bounds the recrawl index entries one scan reads.
const (
	maxDuePerScan     = 10000
	maxExaminePerScan = 50000
)

// rescan queues URLs again every RecrawlScan, and saves the in-link
// counts every inLinkSave, until ctx is done.
func (c *Crawler) rescan(ctx context.Context) {
	t := time.NewTicker(c.cfg.RecrawlScan)
	defer t.Stop()
	saved := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		if err := c.queueDue(now); err != nil {
			c.fail(err)
			return
		}
		if now.Sub(saved) >= inLinkSave {
			saved = now
			if err := c.saveInLinks(); err != nil {
				c.fail(err)
				return
			}
		}
	}
}

// dueCursor is where the last scan of the recrawl index stopped: after
// entry after of partition part (at its head when after is nil).
type dueCursor struct {
	part  int
	after *store.DueEntry
}

// queueDue queues again the URLs due at now, most valuable first, as many
// as the hosts can take: a host gets recrawls queued while fewer than
// perHostRecrawls of its recrawls wait or are in flight, so that new
// links and recrawls share its clock, its queue never fills with
// recrawls, and a recrawl waits about a scan, not a long queue, for its
// fetch. A URL is due (recrawl.Policy.Due) once Min has passed since its
// last visit and its Score (the index of the best refresh schedule for a
// budget of visits) reaches the policy's floor, or once Max has passed,
// and then it goes first.
//
// The due URLs are found in the recrawl index, in due order, from where
// the last scan stopped: a scan reads at most maxExaminePerScan entries
// and wraps around, so that in a crawl with more due than it can fetch
// every due URL is weighed in turn. Each chosen URL is checked against
// the scope and the trap cut-off again (a restart may have narrowed
// them): one now out is marked rejected for good.
func (c *Crawler) queueDue(now time.Time) error {
	room := c.recrawling.room(c.perHostRecrawls())
	p := c.cfg.Recrawl.WithDefaults()
	pb := c.state.newBatch()
	touched, err := c.applyListed(pb, room, p, now)
	if err != nil {
		pb.b.Close()
		return err
	}
	type due struct {
		e     store.DueEntry
		score float64
	}
	// The best of each host, as many as it has room for; then the best
	// of all of those, at most maxDuePerScan.
	byHost := map[string]*dueHeap[due]{}
	less := func(a, b due) bool { return a.score < b.score }
	priors := map[string]float64{} // each host's prior, looked up once a scan
	priorOf := func(host string) float64 {
		r, ok := priors[host]
		if !ok {
			r = c.priors.get(host).Rate(p.Prior)
			priors[host] = r
		}
		return r
	}
	c.dueCur, err = scanDue(c.state.db, c.cfg.Partitions, c.heldPart, c.dueCur, now, maxExaminePerScan, func(e store.DueEntry) {
		h := recrawl.History{Visits: e.Visits, Changes: e.Changes, Span: e.Span, Last: e.LastFetch, Unchanged: e.Unchanged}
		s := math.Inf(1)
		if now.Sub(e.LastFetch) < p.Max {
			p := p
			p.Prior = priorOf(e.Host)
			if !p.Due(h, e.Importance, now) {
				return // a hair early (Next rounds to the nanosecond): weighed at the next scan
			}
			s = p.Score(h, e.Importance, now)
		}
		n := room.left(e.Host)
		if n <= 0 || touched[e.Hash] {
			return
		}
		hh := byHost[e.Host]
		if hh == nil {
			hh = &dueHeap[due]{less: less}
			byHost[e.Host] = hh
		}
		hh.offer(due{e, s}, n)
	})
	if err != nil {
		pb.b.Close()
		return fmt.Errorf("crawl: find the URLs due for a recrawl: %w", err)
	}
	best := &dueHeap[due]{less: less}
	for _, h := range byHost {
		for _, d := range h.items {
			best.offer(d, maxDuePerScan)
		}
	}
	all := best.items
	slices.SortFunc(all, func(a, b due) int { return cmp.Compare(b.score, a.score) })
	requeued := 0
	for _, d := range all {
		e := d.e
		r, ok, err := c.state.db.GetURL(e.Part, e.Host, e.Hash)
		if err != nil {
			pb.b.Close()
			return fmt.Errorf("crawl: read a URL due for a recrawl: %w", err)
		}
		pb.b.DeleteDue(e.Part, e.Due, e.Host, e.Hash)
		if !ok || (r.Status != store.URLDone && r.Status != store.URLFailed) || !r.NextCrawl.Equal(e.Due) {
			continue // a stale entry: its URL was queued or scheduled again since
		}
		if !c.stillInScope(r, e.Host) {
			r.Status = store.URLRejected
			pb.b.PutURL(e.Part, e.Host, e.Hash, r)
			continue
		}
		r.Status = store.URLQueued
		pb.b.PutURL(e.Part, e.Host, e.Hash, r)
		prio := frontier.Normal
		if r.Depth == 0 {
			prio = frontier.High
		}
		pb.items = append(pb.items, frontier.Item{URL: r.URL, Host: e.Host, Depth: r.Depth, Priority: prio, Added: now})
		requeued++
	}
	// Counted before the commit hands them to the frontier, so that a
	// lease never completes before its recrawl is counted.
	for _, it := range pb.items {
		c.recrawling.add(it.Host, it.URL)
	}
	if err := pb.commit(c.seen, c.front); err != nil {
		return fmt.Errorf("crawl: queue %d URLs due for a recrawl, and sitemap hints: %w", requeued, err)
	}
	c.stats.recrawls.Add(int64(requeued))
	return nil
}

// scanDue calls fn with the entries of the recrawl index due at now, at
// most limit of them, from the cursor on: the rest of the cursor's
// partition, the partitions after it, and round again from the first up to
// the cursor. It returns where it stopped; the zero cursor when it went
// all the way round.
func scanDue(db *store.DB, parts int, held func(int) bool, cur dueCursor, now time.Time, limit int, fn func(store.DueEntry)) (dueCursor, error) {
	type leg struct {
		part        int
		after, stop *store.DueEntry
	}
	legs := []leg{{part: cur.part, after: cur.after}}
	for i := 1; i < parts; i++ {
		legs = append(legs, leg{part: (cur.part + i) % parts})
	}
	if cur.after != nil {
		legs = append(legs, leg{part: cur.part, stop: cur.after})
	}
	n := 0
	for _, lg := range legs {
		if held != nil && held(lg.part) {
			continue // another node's to recrawl (a cluster)
		}
		var last *store.DueEntry
		full := false
		err := db.ScanDue(uint16(lg.part), lg.after, now, func(e store.DueEntry) bool {
			if lg.stop != nil && !dueBefore(&e, lg.stop) {
				return false
			}
			if n >= limit {
				full = true
				return false
			}
			n++
			last = &e
			fn(e)
			return true
		})
		if err != nil {
			return dueCursor{}, err
		}
		if full {
			return dueCursor{lg.part, last}, nil
		}
	}
	return dueCursor{}, nil
}

// perHostRecrawls is how many recrawls of one host may wait or be in
// flight: one in flight, one waiting for it, and what the host's clock
// (at --delay) allows it to fetch in two scans.
func (c *Crawler) perHostRecrawls() int {
	if c.cfg.Delay <= 0 {
		return 100
	}
	return min(2+int(2*c.cfg.RecrawlScan/c.cfg.Delay), 100)
}

// outstanding counts the recrawls queued and not yet done, by host.
type outstanding struct {
	mu    sync.Mutex
	hosts map[string]int
	urls  map[string]string // URL -> host
}

func (o *outstanding) add(host, url string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.urls == nil {
		o.hosts, o.urls = map[string]int{}, map[string]string{}
	}
	if _, ok := o.urls[url]; !ok {
		o.urls[url] = host
		o.hosts[host]++
	}
}

// done says a lease of url ended: if it was a recrawl, its host has room
// for one more.
func (o *outstanding) done(url string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	host, ok := o.urls[url]
	if !ok {
		return
	}
	delete(o.urls, url)
	if o.hosts[host]--; o.hosts[host] <= 0 {
		delete(o.hosts, host)
	}
}

// room returns, for a scan, how many more recrawls each host may have
// queued, of perHost.
func (o *outstanding) room(perHost int) *hostRoom {
	o.mu.Lock()
	defer o.mu.Unlock()
	return &hostRoom{per: perHost, used: maps.Clone(o.hosts)}
}

// hostRoom is the room each host has for recrawls in one scan.
type hostRoom struct {
	per  int
	used map[string]int
}

func (r *hostRoom) left(host string) int { return r.per - r.used[host] }

func (r *hostRoom) take(host string) {
	if r.used == nil {
		r.used = map[string]int{}
	}
	r.used[host]++
}

// dueBefore reports whether a sorts before b in the recrawl index of one
// partition: by due time, host, then hash (the index's key order: a host
// never holds the 0x00 that ends it in the key).
func dueBefore(a, b *store.DueEntry) bool {
	if c := a.Due.Compare(b.Due); c != 0 {
		return c < 0
	}
	if c := strings.Compare(a.Host, b.Host); c != 0 {
		return c < 0
	}
	return string(a.Hash[:]) < string(b.Hash[:])
}

// dueHeap keeps the n greatest items offered.
type dueHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *dueHeap[T]) offer(x T, n int) {
	switch {
	case n <= 0: // no room
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

// metaRecrawl holds the recrawl policy the recrawl index was built for. It
// is absent when the index is not kept: a run that is not continuous
// writes URL records without entries.
const metaRecrawl = "recrawl-index"

// prepareDueIndex makes the recrawl index hold an entry for every fetched
// URL, scheduled by the configured policy, when the crawl is continuous:
// it is built from the URL records when the state has none, or one built
// for another policy (the schedule is the policy's, so it is made again);
// when the crawl is not continuous, it is marked as not kept.
func (c *Crawler) prepareDueIndex() error {
	db := c.state.db
	val, ok, err := db.GetMeta(metaRecrawl)
	if err != nil {
		return fmt.Errorf("crawl: read the recrawl index's policy: %w", err)
	}
	if c.cfg.Recrawl == nil {
		if !ok {
			return nil
		}
		b := db.NewBatch()
		b.DeleteMeta(metaRecrawl)
		return b.Commit(true)
	}
	p := c.cfg.Recrawl.WithDefaults()
	want := fmt.Sprintf("min=%d max=%d prior=%g floor=%g uniform=%t", p.Min, p.Max, p.Prior, p.Floor, p.Uniform)
	if ok && string(val) == want {
		return nil
	}
	b := db.NewBatch()
	b.ClearDue()
	b.DeleteMeta(metaRecrawl)
	if err := b.Commit(false); err != nil {
		return fmt.Errorf("crawl: clear the recrawl index: %w", err)
	}
	n, b := 0, db.NewBatch()
	for part := range c.cfg.Partitions {
		var werr error
		err := db.ScanURLs(uint16(part), func(host string, hash [16]byte, r store.URLRecord) bool {
			if (r.Status != store.URLDone && r.Status != store.URLFailed) || r.LastFetch.IsZero() {
				return true
			}
			w := c.importance(r.URL, &r)
			hp := p
			hp.Prior = c.priors.get(host).Rate(p.Prior)
			r.NextCrawl = hp.Next(r.URL, history(r), w)
			if missingSitemap(r.LastStatus) && isSitemapPath(r.URL) {
				r.NextCrawl = r.LastFetch.Add(c.cfg.RobotsTTL)
			}
			b.PutURL(uint16(part), host, hash, r)
			b.PutDue(dueEntry(uint16(part), host, hash, r, w))
			if n++; n%10000 == 0 {
				if werr = b.Commit(false); werr != nil {
					return false
				}
				b = db.NewBatch()
				c.log.Info("building the recrawl index", "urls", n)
			}
			return true
		})
		if err = errors.Join(err, werr); err != nil {
			b.Close()
			return fmt.Errorf("crawl: build the recrawl index: %w", err)
		}
	}
	b.PutMeta(metaRecrawl, []byte(want))
	if err := b.Commit(true); err != nil {
		return fmt.Errorf("crawl: build the recrawl index: %w", err)
	}
	if n > 0 {
		c.log.Info("recrawl index built", "urls", n, "policy", want)
	}
	return nil
}

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
	it, why := c.judge(pb, u, l.Depth+1, 0, prio, l.URL, asLink)
	part, k := uint16(partition.Of(u.Authority, c.cfg.Partitions)), seen.KeyOf(u.String)
	switch {
	case why == "":
		pb.items = append(pb.items, it)
		pb.b.PutURL(part, u.Authority, k, store.URLRecord{URL: it.URL, Depth: it.Depth, Priority: uint8(it.Priority), Status: store.URLQueued,
			InSitemap: true, SitemapPriority: h.Priority, SitemapLastMod: h.LastMod})
	case why == RejectSeen && c.cfg.Recrawl != nil:
		if !c.listed.put(k, listedHint{part: part, host: u.Authority, hint: h}) {
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
func (c *Crawler) applyListed(pb *pageBatch, room *hostRoom, p recrawl.Policy, now time.Time) (map[seen.Key]bool, error) {
	touched := map[seen.Key]bool{}
	pulled := 0
	for k, lh := range c.listed.take() {
		r, ok, err := c.state.db.GetURL(lh.part, lh.host, k)
		if err != nil {
			return nil, fmt.Errorf("crawl: read a URL a sitemap lists: %w", err)
		}
		if !ok || r.Status == store.URLRejected {
			continue
		}
		if r.Status == store.URLQueued {
			c.holdListed(k, lh) // in flight: its lease writes the record
			continue
		}
		h := lh.hint
		changed := h.LastMod.After(r.LastFetch)
		write := !r.InSitemap || r.SitemapPriority != h.Priority || !r.SitemapLastMod.Equal(h.LastMod)
		r.InSitemap, r.SitemapPriority, r.SitemapLastMod = true, h.Priority, h.LastMod
		switch {
		case !changed:
		case now.Sub(r.LastFetch) < p.Min || room.left(lh.host) <= 0:
			c.holdListed(k, lh) // not yet: Min, and the host's room, hold for pulls as for recrawls
		case !c.stillInScope(r, lh.host):
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
	c.stats.listedChanged.Add(int64(pulled))
	return touched, nil
}

// holdListed keeps a hint for a later scan, unless a newer one came.
func (c *Crawler) holdListed(k seen.Key, lh listedHint) {
	c.listed.mu.Lock()
	defer c.listed.mu.Unlock()
	if _, newer := c.listed.m[k]; newer {
		return
	}
	if c.listed.m == nil {
		c.listed.m = map[seen.Key]listedHint{}
	}
	if len(c.listed.m) >= maxListed {
		c.stats.listedDropped.Add(1)
		return
	}
	c.listed.m[k] = lh
}

// stillInScope checks a URL queued again against the scope and the trap
// cut-off, which a restart may have narrowed.
func (c *Crawler) stillInScope(r store.URLRecord, host string) bool {
	u, err := c.canon.Parse(r.URL)
	if err != nil || c.copies.trapped(host) {
		return false
	}
	return r.Depth == 0 || c.scope.Check(u, r.Depth) == ""
}

// metaInLinks holds the in-link counts (package sketch, encoded).
const metaInLinks = "inlinks"

// inLinkSave is how often the in-link counts are saved while the crawl
// runs.
const inLinkSave = 5 * time.Minute

// loadInLinks makes the in-link counter, with the counts an earlier run
// saved. Counts that do not decode are dropped with a warning: they are
// an estimate, and the crawl's own state is intact.
func (c *Crawler) loadInLinks() error {
	c.inlinks = sketch.New(c.cfg.InLinkBytes)
	b, ok, err := c.state.db.GetMeta(metaInLinks)
	if err != nil {
		return fmt.Errorf("crawl: read the in-link counts: %w", err)
	}
	if ok {
		if err := c.inlinks.UnmarshalBinary(b); err != nil {
			c.log.Warn("in-link counts of an earlier run dropped", "err", err)
			c.inlinks = sketch.New(c.cfg.InLinkBytes)
		}
	}
	return nil
}

// saveInLinks writes the in-link counts to the store; not after a fatal
// error, which may have lost pages whose links were counted (they are
// fetched, and counted, again).
func (c *Crawler) saveInLinks() error {
	if c.inlinks == nil || c.failed.Load() {
		return nil
	}
	v, err := c.inlinks.MarshalBinary()
	if err != nil {
		return err
	}
	b := c.state.db.NewBatch()
	b.PutMeta(metaInLinks, v)
	if err := b.Commit(false); err != nil {
		return fmt.Errorf("crawl: save the in-link counts: %w", err)
	}
	return nil
}
