package schedule

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// maxDuePerScan bounds the URLs one scan queues again, so that a scan
// after a long stop does not flood the front queues; maxExaminePerScan
// bounds the recrawl index entries one scan reads.
const (
	maxDuePerScan     = 10000
	maxExaminePerScan = 50000
)

// Queue takes the writes of a scan to the crawl's state.
type Queue interface {
	// Commit writes b with a front-queue entry for each of items, and
	// then hands the items to the frontier; b is closed either way, and
	// on error nothing of it is in the store.
	Commit(b *store.Batch, items []frontier.Item) error
}

// Traps is the judge's trap rules, asked whether a URL is cut off.
type Traps interface {
	// Trapped reports whether u's host, or a directory of it u is under,
	// is cut off for near-duplicates.
	Trapped(u canon.URL) bool
}

// ScanConfig is what a Recrawler works with beside its Planner.
type ScanConfig struct {
	Queue Queue
	// A URL queued again is checked against the scope and the trap
	// cut-off again (stillInScope).
	Scope *scope.Filter
	Traps Traps
	// Every is how often a scan runs, and Delay the crawl's default gap
	// between two requests to a host: together they say how many
	// recrawls a host may have out (perHostRecrawls).
	Every, Delay time.Duration
}

// Recrawler queues again, scan by scan, the URLs of a continuous crawl
// that its Planner makes due, as many as each host has room for
// (QueueDue), with what sitemaps said of known URLs since the last scan
// (Hint). It owns where the last scan stopped, the recrawls queued and
// not yet done, the sitemap hints waiting for a scan and the partitions
// it must leave to other nodes. QueueDue is for one goroutine; the other
// methods are safe for concurrent use.
type Recrawler struct {
	sched *Planner
	queue Queue
	scope *scope.Filter
	traps Traps
	// scan and delay are ScanConfig's Every and Delay.
	scan, delay time.Duration

	// cur is where the last scan stopped in the recrawl index (the
	// scanning goroutine's own); out counts the recrawls queued and not
	// yet done, per host.
	cur dueCursor
	out outstanding
	// listed holds what sitemaps said of known URLs, for the next scan.
	listed listedHints
	// held says, per partition, that it is held (Hold): another node's
	// to recrawl.
	held heldParts

	recrawls, listedChanged, listedDropped atomic.Int64 // see Counts
}

// NewRecrawler makes the Recrawler of the URLs s schedules.
func NewRecrawler(s *Planner, cfg ScanConfig) *Recrawler {
	return &Recrawler{sched: s, queue: cfg.Queue, scope: cfg.Scope, traps: cfg.Traps, scan: cfg.Every, delay: cfg.Delay,
		held: make(heldParts, s.parts)}
}

// Counts is what the scans did.
type Counts struct {
	Recrawls      int64 // URLs queued again when their next crawl came
	ListedChanged int64 // URLs queued again early: a sitemap's <lastmod> is after their last fetch
	ListedDropped int64 // sitemap hints about known URLs dropped: too many waited for a scan
}

// Counts returns what the scans did so far.
func (rc *Recrawler) Counts() Counts {
	return Counts{Recrawls: rc.recrawls.Load(), ListedChanged: rc.listedChanged.Load(), ListedDropped: rc.listedDropped.Load()}
}

// Done says a lease of url ended: if it was a recrawl, its host has room
// for one more.
func (rc *Recrawler) Done(url string) { rc.out.done(url) }

// NextDue returns when the first URL of the recrawl index comes due, in
// the partitions not held for other nodes (Hold), as the scans left it
// (store.DB.DueFloor: no entry is due before it, and one is at it unless
// deleted since, so it may be early by a scan); ok is false while a
// partition is not scanned yet or no URL is in the index.
func (rc *Recrawler) NextDue() (at time.Time, ok bool) {
	for p := range rc.sched.parts {
		if rc.held.held(p) {
			continue
		}
		t, known, none := rc.sched.db.DueFloor(uint16(p))
		switch {
		case !known:
			return time.Time{}, false
		case none:
		case !ok || t.Before(at):
			at, ok = t, true
		}
	}
	return at, ok
}

// Hold says partition p is held, or no longer (a node of a cluster does
// not recrawl the URLs of partitions it does not own).
func (rc *Recrawler) Hold(p int, on bool) { rc.held.set(p, on) }

// heldParts records which partitions are held, for the scan. It is safe
// for concurrent use.
type heldParts []atomic.Bool

func (h heldParts) set(p int, on bool) {
	if p >= 0 && p < len(h) {
		h[p].Store(on)
	}
}

// held reports whether partition p is held.
func (h heldParts) held(p int) bool { return p >= 0 && p < len(h) && h[p].Load() }

// scanBatch is a scan's writes: its records and index entries in b, and
// the frontier items of the URLs it queues again, committed at once
// (Queue.Commit).
type scanBatch struct {
	b     *store.Batch
	items []frontier.Item
}

// dueCursor is where the last scan of the recrawl index stopped: after
// entry after of partition part (at its head when after is nil).
type dueCursor struct {
	part  int
	after *store.DueEntry
}

// QueueDue queues again the URLs due at now, most valuable first, as many
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
func (rc *Recrawler) QueueDue(now time.Time) error {
	room := rc.out.room(rc.perHostRecrawls())
	p := rc.sched.configured.WithDefaults()
	sb := &scanBatch{b: rc.sched.db.NewBatch()}
	touched, err := rc.applyListed(sb, room, p, now)
	if err != nil {
		sb.b.Close()
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
			r = rc.sched.priors.get(host).Rate(p.Prior)
			priors[host] = r
		}
		return r
	}
	var early []store.DueEntry // due by the index, not by the policy: rescheduled
	rc.cur, err = scanDue(rc.sched.db, rc.sched.parts, rc.held.held, rc.cur, now, maxExaminePerScan, func(e store.DueEntry) {
		h := recrawl.History{Visits: e.Visits, Changes: e.Changes, Span: e.Span, Last: e.LastFetch, Unchanged: e.Unchanged,
			Dating: recrawl.Dating(e.Dating)}
		s := math.Inf(1)
		if now.Sub(e.LastFetch) < p.Max {
			p := p
			p.Prior = priorOf(e.Host)
			if !p.Due(h, e.Importance, now) {
				if len(early) < maxDuePerScan {
					early = append(early, e)
				}
				return
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
		sb.b.Close()
		return fmt.Errorf("schedule: find the URLs due for a recrawl: %w", err)
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
		r, ok, err := rc.sched.db.GetURL(e.Part, e.Host, e.Hash)
		if err != nil {
			sb.b.Close()
			return fmt.Errorf("schedule: read a URL due for a recrawl: %w", err)
		}
		sb.b.DeleteDue(e.Part, e.Due, e.Host, e.Hash)
		if !ok || (r.Status != store.URLDone && r.Status != store.URLFailed) || !r.NextCrawl.Equal(e.Due) {
			continue // a stale entry: its URL was queued or scheduled again since
		}
		if !rc.stillInScope(r) {
			r.Status = store.URLRejected
			sb.b.PutURL(e.Part, e.Host, e.Hash, r)
			continue
		}
		r.Status = store.URLQueued
		sb.b.PutURL(e.Part, e.Host, e.Hash, r)
		prio := frontier.Normal
		if r.Depth == 0 {
			prio = frontier.High
		}
		sb.items = append(sb.items, frontier.Item{URL: r.URL, Host: e.Host, Depth: r.Depth, Priority: prio, Added: now})
		requeued++
	}
	if err := rc.reschedule(sb, early, touched, now); err != nil {
		sb.b.Close()
		return err
	}
	// Counted before the commit hands them to the frontier, so that a
	// lease never completes before its recrawl is counted.
	for _, it := range sb.items {
		rc.out.add(it.Host, it.URL)
	}
	if err := rc.queue.Commit(sb.b, sb.items); err != nil {
		return fmt.Errorf("schedule: queue %d URLs due for a recrawl, and sitemap hints: %w", requeued, err)
	}
	rc.recrawls.Add(int64(requeued))
	return nil
}

// reschedule moves, in sb, the recrawl index entries that came due by
// their time but are not Due by the policy now (the host's prior, or the
// page's importance, changed since it was scheduled) to the time the
// policy gives now, so that a scan does not read them again and again
// until they are. One a hair early (Next rounds to the nanosecond), or
// due now only by the importance it has now, stays for the next scan,
// with that importance; so does a missing sitemap on the robots.txt
// schedule, which is not the policy's. An entry whose record was written
// since (touched, or scheduled again) is stale and goes.
func (rc *Recrawler) reschedule(sb *scanBatch, early []store.DueEntry, touched map[seen.Key]bool, now time.Time) error {
	for _, e := range early {
		if touched[e.Hash] {
			continue
		}
		r, ok, err := rc.sched.db.GetURL(e.Part, e.Host, e.Hash)
		if err != nil {
			return fmt.Errorf("schedule: read a URL to schedule its recrawl again: %w", err)
		}
		if !ok || (r.Status != store.URLDone && r.Status != store.URLFailed) || !r.NextCrawl.Equal(e.Due) {
			sb.b.DeleteDue(e.Part, e.Due, e.Host, e.Hash)
			continue
		}
		if rc.sched.onRobotsSchedule(r) {
			continue
		}
		w := rc.sched.Importance(r.URL, &r)
		next := rc.sched.policy(e.Host).Next(r.URL, history(r), w)
		if !next.After(now) {
			if w != e.Importance { // due now by what ranks it now: the next scan weighs that
				sb.b.PutDue(Entry(e.Part, e.Host, e.Hash, r, w))
			}
			continue
		}
		sb.b.DeleteDue(e.Part, e.Due, e.Host, e.Hash)
		r.NextCrawl = next
		sb.b.PutURL(e.Part, e.Host, e.Hash, r)
		sb.b.PutDue(Entry(e.Part, e.Host, e.Hash, r, w))
	}
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
func (rc *Recrawler) perHostRecrawls() int {
	if rc.delay <= 0 {
		return 100
	}
	return min(2+int(2*rc.scan/rc.delay), 100)
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

// scheduleVersion names the rules that turn a URL's record into its next
// crawl beyond the policy's fields (the host prior, the back-off, the
// errors' back-off, the missing sitemap's schedule): it is part of the recrawl index's key, so
// that a binary that schedules otherwise builds the index again rather
// than keep the due times an older one set. Raise it with any such change.
const scheduleVersion = 3

// prepareDueIndex makes the recrawl index hold an entry for every fetched
// URL, scheduled by the configured policy, when the crawl is continuous:
// it is built from the URL records when the state has none, or one built
// for another policy (the schedule is the policy's, so it is made again);
// when the crawl is not continuous, it is marked as not kept.
func (s *Planner) prepareDueIndex() error {
	db := s.db
	val, ok, err := db.GetMeta(metaRecrawl)
	if err != nil {
		return fmt.Errorf("schedule: read the recrawl index's policy: %w", err)
	}
	if s.configured == nil {
		if !ok {
			return nil
		}
		b := db.NewBatch()
		b.DeleteMeta(metaRecrawl)
		return b.Commit(true)
	}
	p := s.configured.WithDefaults()
	want := fmt.Sprintf("v=%d min=%d max=%d prior=%g floor=%g uniform=%t backoff=%t", scheduleVersion, p.Min, p.Max, p.Prior, p.Floor, p.Uniform, !p.NoBackoff)
	if ok && string(val) == want {
		return nil
	}
	b := db.NewBatch()
	b.ClearDue()
	b.DeleteMeta(metaRecrawl)
	if err := b.Commit(false); err != nil {
		return fmt.Errorf("schedule: clear the recrawl index: %w", err)
	}
	n, b := 0, db.NewBatch()
	for part := range s.parts {
		var werr error
		err := db.ScanURLs(uint16(part), func(host string, hash [16]byte, r store.URLRecord) bool {
			if (r.Status != store.URLDone && r.Status != store.URLFailed) || r.LastFetch.IsZero() {
				return true
			}
			w := s.Importance(r.URL, &r)
			hp := p
			hp.Prior = s.priors.get(host).Rate(p.Prior)
			if s.onRobotsSchedule(r) {
				r.NextCrawl = r.LastFetch.Add(s.robotsTTL)
			} else {
				r.NextCrawl = hp.Next(r.URL, history(r), w)
			}
			b.PutURL(uint16(part), host, hash, r)
			b.PutDue(Entry(uint16(part), host, hash, r, w))
			if n++; n%10000 == 0 {
				if werr = b.Commit(false); werr != nil {
					return false
				}
				b = db.NewBatch()
				s.log.Info("building the recrawl index", "urls", n)
			}
			return true
		})
		if err = errors.Join(err, werr); err != nil {
			b.Close()
			return fmt.Errorf("schedule: build the recrawl index: %w", err)
		}
	}
	b.PutMeta(metaRecrawl, []byte(want))
	if err := b.Commit(true); err != nil {
		return fmt.Errorf("schedule: build the recrawl index: %w", err)
	}
	if n > 0 {
		s.log.Info("recrawl index built", "urls", n, "policy", want)
	}
	return nil
}

// onRobotsSchedule reports whether a URL's record, read to build the
// recrawl index, is of a missing sitemap (Learn): a host's /sitemap.xml
// that answered 404 or 410, or another sitemap that did and was scheduled
// once per RobotsTTL when it did (one its robots.txt names, which the
// record does not say, and the robots.txt cache may not hold yet at
// start). Such a URL keeps the robots.txt schedule, rather than return to
// a page's.
func (s *Planner) onRobotsSchedule(r store.URLRecord) bool {
	if !missingSitemap(r.LastStatus) {
		return false
	}
	return isSitemapPath(r.URL) || r.NextCrawl.Equal(r.LastFetch.Add(s.robotsTTL))
}
