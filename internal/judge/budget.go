package judge

import (
	"encoding/binary"
	"errors"
	"maps"
	"net/http"
	"strings"
	"sync"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/importance"
)

// The trap budget bounds each URL family (family.go: one path's query
// variants, one dated path shape, one path's facets written in it) by
// what its pages are worth. A family
// may queue, from its own pages, TrapBudget URLs to begin with; each of
// its pages fetched then moves that budget by what it showed, in
// quarters of a URL:
//
//   - it led to new URLs outside the family, or of its path but of
//     another kind (otherKind: the articles a listing lists, the products
//     a facet shows, the posts a blog's ?cat=3 lists): +4 for each, one URL for each,
//     up to maxLed a page, so a family whose every page leads somewhere
//     new pays for itself and is never held, and one whose pages each
//     lead to several new pages is explored as fast as they come;
//   - its content was distinct (neither an exact nor a near duplicate
//     of a page fetched before): +1, so that a family of distinct pages
//     that lead nowhere else (an endless calendar of generated text)
//     converges: a family whose pages bring a quarter each stops at
//     4/3 of its budget;
//   - its content was a copy: -4, so a family of copies stops at half;
//   - it brought nothing new, neither a URL outside the family nor
//     content judged distinct (an error page, a redirect within the
//     family): -2;
//   - and each new URL of the family that another host links to: +4.
//
// What a family has grown never puts it more than its budget ahead of
// the URLs it has queued: a family that led to new pages for a long
// while and then stops (a shop whose products have all been found) has
// at most TrapBudget URLs left to spend on facets that lead nowhere.
//
// A URL held is remembered (waiting.go, bounded), oldest first, and when
// a page's weight leaves its family room under the budget, Weigh hands
// back as many of them as fit, to be queued as usual: a family that
// shows its worth late (a shop whose first pages linked more facets than
// the budget before any had been fetched) has its early URLs, the
// listing's other pages among them, fetched in the order they were found,
// not only the URLs found after it grew.
//
// Only URLs a page of the same family led to count against the budget:
// a URL of the family linked from elsewhere (the shop's front page
// linking /shop?color=red, a month's page linking its days, another host)
// is an in-link, not the family feeding itself, and is queued as usual,
// unless the family is a wall of copies (walls.go). A URL past the
// budget is not refused: it is queued at HeldPriority, kept in the seen
// set and on disk, counted per reason and per host, for a continuous
// crawl to fetch when nothing else waits.

// DefaultTrapBudget is the trap budget's default: the URLs a family may
// queue from its own pages before it has shown what they are worth. With
// the distinct pages of a trap it comes to about 4/3 of it, some 70
// pages, and the links into the family from outside it come on top: the
// faceted search and the endless calendar of the synthetic web cost
// about 100 and 70 requests. Fifty is more than the pages of a listing a
// site links from one page, and a family that leads to new pages grows
// past it one URL for each new page, up to four a page.
const DefaultTrapBudget = 50

// HeldPriority is the front queue of a URL held past its family's
// budget: Surplus, which a crawl that ends never leases and a continuous
// one leases only when nothing else waits.
const HeldPriority = frontier.Surplus

// ReleasedPriority is the front queue of a URL held past its family's
// budget once released (Weigh): Low, so that on its host the pages the
// family's pages led to (the products of a shop's listings) go before
// more of the family, and a crawl with a page budget spends it on them.
const ReleasedPriority = frontier.Low

// Reasons a URL is held past its family's budget: queued at HeldPriority
// and counted (Held), not refused.
const (
	HeldQuery = "query-budget" // its path's query variants spent their budget
	HeldDate  = "date-budget"  // its dated path shape (or dated query) spent its budget
	HeldPath  = "path-budget"  // its path's facets (modifiers.go) spent their budget
	// HeldCopies: linked from elsewhere on its host into a shape whose
	// pages were copies (a login wall, print views; walls.go).
	HeldCopies = "copy-family"
)

// Content is what a fetched page showed of its family's worth, besides
// the URLs it led to.
type Content uint8

// What a page's content showed.
const (
	NotWeighed Content = iota // not a page fetched for the first time (a requisite, a sitemap, a recrawl): it weighs nothing
	Unjudged                  // neither judged distinct nor a copy: an error, a redirect, a page not read
	Distinct                  // read, and neither an exact nor a near duplicate of a page before it
	Copy                      // an exact or a near duplicate of a page before it
	// Closed: a page that asked to be neither indexed nor followed
	// (noindex and nofollow): by its site's word, no page to read and no
	// way on, as a wiki's edit, history and special pages are. It weighs
	// as a copy does.
	Closed
	// Echo: a copy of the page that linked it (its print view, its AMP
	// page under its own path). It weighs as a copy does, and is evidence
	// for a wall of that page's tools (toolShape), which other copies are
	// not.
	Echo
	// Search: a page read that is a search's results: a text field of
	// its forms shows what its URL's query asks (content.Result.Search).
	// What it links is found another way too, or it is not: it weighs on
	// its family as a distinct page does, unless it was leased behind its
	// host's other pages (Worth.Leased) and led nowhere new: then as a
	// page that showed nothing. Its shape is judged by what such pages
	// lead to once nothing else on their host waits (wallPageOf).
	Search
	// Missing: an answer 404 or 410 (Missed): the page is missing or
	// gone, and the link led nowhere (a 403 may be a host's refusal of
	// the crawler, which says nothing of the shape). wallMissing of a
	// shape's pages missing, and none distinct, make it a wall (a
	// template's link on every page to an export or a print view that is
	// no more); a tool's wall learns nothing of them (a page's comments
	// are missing where it has none). It weighs on its family as a page
	// that showed nothing.
	Missing
)

// Missed reports whether an answer of status is Missing.
func Missed(status int) bool { return status == http.StatusNotFound || status == http.StatusGone }

// CopyOf is the Content of a page fetched for the first time that copies
// an earlier page, of (the first URL given that is not ""), and was
// linked from via: Echo if it copies via, else Copy.
func CopyOf(via string, of ...string) Content {
	for _, o := range of {
		if o != "" {
			if o == via {
				return Echo
			}
			break
		}
	}
	return Copy
}

// A family's worth moves in quarters of a URL.
const (
	worthLed       = 4  // the page led to a new URL outside its family, for each one up to maxLed
	maxLed         = 4  // the new URLs outside its family a page is credited for
	worthDistinct  = 1  // its content was distinct
	worthCopy      = -4 // its content was a copy
	worthNothing   = -2 // it led to nothing outside its family, and its content was not judged distinct
	worthCrossHost = 4  // a new URL of the family another host links to
	maxGrown       = 1 << 30
)

// DefaultMaxFamilies bounds the families whose budgets are kept in
// memory, the least recently used forgotten first: about 100 bytes each,
// 6.5 MiB. A family forgotten starts again at the budget; the per-pattern
// cap still bounds it.
const DefaultMaxFamilies = 1 << 16

// famState is what the judge knows of a family: the URLs its pages led
// to that were queued and held, and how much its budget grew (in
// quarters of a URL; negative when it shrank).
type famState struct {
	counted, held uint32
	grown         int32
}

// budget is the URLs the family may queue from its own pages: base and
// what it grew, never below none.
func (s famState) budget(base int) int64 { return max(4*int64(base)+int64(s.grown), 0) / 4 }

// grow moves s's budget by d quarters, within bounds: it never shrinks
// below none, so that a family that turns worthwhile recovers, and never
// grows more than base URLs past those the family queued.
func (s famState) grow(d, base int) famState {
	s.grown = int32(min(max(int(s.grown)+d, -4*base), 4*int(s.counted), maxGrown))
	return s
}

// budgets holds the families' states, bounded (DefaultMaxFamilies), and
// the URLs held. It is safe for concurrent use.
type budgets struct {
	base int // URLs
	fams *hostmap.Map[famState]

	mu       sync.Mutex
	held     map[string]int64 // by reason
	released int64            // URLs held that Weigh's Releaser queued as usual since

	waiting *waiting // the URLs held that may be queued as usual once their family has room; nil: none are
	walls   *walls   // the shapes of copies linked from the rest of their host
	barren  *barren  // the parameters whose pages led nowhere (barren.go)
	mods    *modifiers
}

// newBudgets returns the trap budgets of base URLs a family, keeping at
// most maxFamilies families (zero: DefaultMaxFamilies), releasing none of
// the URLs held if noRelease; nil when base is zero: no budget.
func newBudgets(base, maxFamilies, partitions int, noRelease bool) *budgets {
	if base <= 0 {
		return nil
	}
	if maxFamilies <= 0 {
		maxFamilies = DefaultMaxFamilies
	}
	b := &budgets{base: base, fams: hostmap.NewBounded[famState](partitions, maxFamilies, nil), held: map[string]int64{},
		walls: newWalls(maxFamilies, partitions), barren: newBarren(maxFamilies, partitions),
		mods: newModifiers(maxFamilies, partitions)}
	if !noRelease {
		b.waiting = newWaiting(DefaultMaxWaiting)
	}
	return b
}

// famKeyLen is the length of a family's key in the map and the store.
const famKeyLen = 9

func (f family) key() string {
	var b [famKeyLen]byte
	b[0] = byte(f.kind)
	binary.LittleEndian.PutUint64(b[1:], f.hash)
	return string(b[:])
}

// splitAuthority returns the authority of a canonical URL given as a
// string.
func splitAuthority(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		return rest[:end]
	}
	return rest
}

// hold judges c, a URL new to the crawl about to be queued, against its
// family's budget: the reason it is held past it, or "", and the key of
// its family; one not held may wait behind its host's other pages
// (wait). Seeds, requisites and sitemaps are not judged.
func (b *budgets) hold(c *Candidate) (string, string) {
	if b == nil || c.Depth+c.Hops == 0 || c.As.Resource() || c.Sitemap || c.Via == "" {
		return "", ""
	}
	why, k := b.judgeHold(c)
	if why == "" {
		b.wait(c)
	}
	return why, k
}

// wait queues c at Low, and a rank below the high front queue's, if it
// is a link from its own host into a shape whose pages were a search's
// results (walls.go): behind the host's other pages. The next page of a
// listing (nextOf) is not kept waiting: it is the way to the listing's
// older items.
func (b *budgets) wait(c *Candidate) {
	if c.URL.Query == "" || !b.walls.search.Load() {
		return
	}
	if splitAuthority(c.Via) != c.URL.Authority {
		return
	}
	if _, ok := b.walls.searched.Peek(c.URL.Authority); !ok || nextOf(c.URL, c.Via) {
		return
	}
	if b.walls.searches(wallShape(c.URL)) {
		c.Priority, c.Rank = frontier.Low, min(c.Rank, importance.HighRank-1)
	}
}

// judgeHold is hold's judgement of a link, a redirect's target or a
// tool.
func (b *budgets) judgeHold(c *Candidate) (string, string) {
	b.mods.learn(c.URL)
	fam := b.familyOf(c.URL)
	if fam.none() {
		return b.heldVariant(c)
	}
	if k := b.barrenLink(c.URL, c.Via, barrenAfter); k != "" {
		b.count(HeldBarren)
		return HeldBarren, k
	}
	cross := splitAuthority(c.Via) != c.URL.Authority
	k := fam.key()
	if why, wk := b.heldVariant(c); why != "" {
		return why, wk
	}
	if b.inLink(c.URL, fam, c.Via) {
		// An in-link from elsewhere on the host, queued as usual unless
		// its shape is a wall (walls.go), but a seed's redirect.
		if c.Depth == 0 || !b.walls.any.Load() {
			return "", ""
		}
		wk := wallShape(c.URL)
		if !b.walls.hold(wk, fnvString(fnvOffset, c.URL.String)) {
			return "", ""
		}
		b.count(HeldCopies)
		return HeldCopies, wallKey(wk)
	}
	if fam.kind != dateFamily && !cross {
		// The next page or post: a page of its own, which the depth
		// limit and the pattern cap bound, not the family's budget;
		// unless the family's pages have shown less than they cost
		// (copies, pages that led nowhere).
		if nextOf(c.URL, c.Via) {
			if s, ok := b.fams.Peek(k); !ok || s.grown >= 0 {
				return "", ""
			}
		}
		// The next page of a listing in its path; or a numeric facet's
		// next value (/size-44/ from /size-42/), which reads the same:
		// queued past the budget, up to maxNamed budgets' worth of them,
		// each counted in it.
		if fam.kind == pathFamily && nextInPath(c.URL, c.Via) {
			if s, ok := b.fams.Peek(k); (!ok || s.grown >= 0) && b.countNamed(k, 1) {
				return "", ""
			}
		}
		// Another page a parameter names (a wiki's ?title=): the same,
		// up to maxNamed budgets' worth of them (a word-valued calendar
		// or an opaque cursor would name pages too).
		if fam.kind == queryFamily && b.barren.another(c.URL, c.Via) && b.countNamed(k, 1) {
			return "", ""
		}
	}
	var held bool
	b.fams.Update(k, func(s famState) famState {
		switch {
		case cross:
			return s.grow(worthCrossHost, b.base)
		case int64(s.counted) >= s.budget(b.base) || b.waiting.has(k):
			// Past the budget, or behind URLs held before it: the
			// family's URLs are released in the order they were found.
			s.held++
			held = true
		default:
			s.counted++
		}
		return s
	})
	if !held {
		return "", ""
	}
	reason := HeldQuery
	switch fam.kind {
	case dateFamily:
		reason = HeldDate
	case pathFamily:
		reason = HeldPath
	}
	b.count(reason)
	return reason, k
}

// heldVariant judges c as a variant or a tool of the page that links it
// (wallVariant), whatever its family, if any: the reason it is held, its
// variant shape's wall standing, and the key it is remembered under.
func (b *budgets) heldVariant(c *Candidate) (string, string) {
	if c.Depth > 0 && b.walls.any.Load() {
		if wk := wallVariant(c.URL, c.Via); wk != "" && b.walls.hold(wk, fnvString(fnvOffset, c.URL.String)) {
			b.count(HeldCopies)
			return HeldCopies, wallKey(wk)
		}
	}
	return "", ""
}

// count counts a URL held for reason.
func (b *budgets) count(reason string) {
	b.mu.Lock()
	b.held[reason]++
	b.mu.Unlock()
}

// Worth gathers what one fetched page led to, for Weigh. The zero Worth
// weighs nothing.
type Worth struct {
	b    *budgets
	page canon.URL // its URL, which is being fetched: never released by its own weight
	via  string    // the page that linked it
	fam  family
	led  int    // new URLs outside the family, up to maxLed
	into string // the wallShape it redirected to (Redirect)
	late bool   // leased behind its host's other pages (Leased)
}

// Leased records the priority the page was leased at: at frontier.Low
// or below, behind its host's other pages (a link into a shape of
// searches, a URL released or held, a second try), what it still leads
// to no other page of the host has.
func (w *Worth) Leased(p frontier.Priority) { w.late = p == frontier.Low || p == frontier.Surplus }

// Worth starts the weighing of a fetched page, linked from via: what it
// led to is given to Admitted, then the whole to Weigh.
func (j *Judge) Worth(page canon.URL, via string) Worth {
	if j.budgets == nil {
		return Worth{}
	}
	return Worth{b: j.budgets, page: page, via: via, fam: j.budgets.familyOf(page)}
}

// Admitted records a URL the page led to that was queued (a link or a
// redirect's target, not a requisite or a sitemap): it counts when it is
// outside the page's family, or of another kind (otherKind).
func (w *Worth) Admitted(u canon.URL) {
	if w.fam.none() || w.led >= maxLed {
		return
	}
	switch f := w.b.familyOf(u); {
	case f == w.fam && !(w.fam.kind == queryFamily && otherKind(u.Query, w.page.Query)):
	case w.fam.kind == pathFamily && f.kind == pathFamily && u.Authority == w.page.Authority:
		// Another listing's facets (a sidebar that keeps the filters
		// across categories): a variant, not somewhere new.
	default:
		w.led++
	}
}

// Weigh moves the budget of the page's family by what the page showed:
// the URLs it led to (Admitted) and its content. A family that no page of
// its own has led to yet has no budget to move. The URLs of the family
// held before that now fit in its budget go to r, oldest first, to be
// queued as usual; each one r queues counts against the budget. A nil r
// releases none. The page is also weighed for the walls of its shape and
// of its variant shape (walls.go), a page of no family too: a tool of the
// page that linked it.
func (j *Judge) Weigh(w Worth, content Content, r Releaser) {
	b := j.budgets
	if b == nil || content == NotWeighed {
		return
	}
	if w.fam.none() {
		b.judgeWalls(w, content, r) // a tool of the page that linked it
		return
	}
	d := 0
	d += worthLed * w.led
	switch {
	case content == Distinct || content == Search && (w.led > 0 || !w.late):
		// A search's results, leased behind their host's other pages,
		// that led nowhere new showed nothing.
		d += worthDistinct
	case content == Copy || content == Closed || content == Echo:
		d += worthCopy
	case w.led == 0:
		d += worthNothing
	}
	if w.fam.kind == queryFamily {
		unlearnt, named := b.barren.weighed(w.page, w.led)
		for _, k := range unlearnt {
			if r != nil {
				b.release(k, w.page.String, r)
			}
		}
		if named && r != nil {
			j.releaseOthers(w.fam.key(), w.page.String, r)
		}
	}
	b.judgeWalls(w, content, r)
	k := w.fam.key()
	if _, ok := b.fams.Peek(k); !ok {
		return
	}
	release := r != nil && b.waiting != nil
	var fit []Held
	b.fams.Update(k, func(s famState) famState {
		s = s.grow(d, b.base)
		if release {
			fit = b.take(k, &s)
		}
		return s
	})
	// Queued outside the family's lock, as a release reads the store; a
	// URL gone since (fetched, or released by an earlier run) spends
	// nothing, and the next in line is taken in its place.
	var released int64
	for len(fit) > 0 {
		var gone uint32
		for _, h := range fit {
			if h.Item.URL != w.page.String && r.Release(h) {
				released++
			} else {
				gone++
			}
		}
		fit = nil
		if gone == 0 {
			break
		}
		b.fams.Update(k, func(s famState) famState {
			s.counted -= min(gone, s.counted)
			fit = b.take(k, &s)
			return s
		})
	}
	if released > 0 {
		b.mu.Lock()
		b.released += released
		b.mu.Unlock()
	}
}

// releaseOthers hands to r the URLs the family k holds that are other
// pages a parameter names (barren.another: learnt only now, and held as
// variants before), to be queued as usual, but page's own, which is being
// fetched; the rest stay held, in their order.
func (j *Judge) releaseOthers(k, page string, r Releaser) {
	b := j.budgets
	var released int64
	for _, h := range b.waiting.take(k, DefaultMaxWaiting) {
		if h.Item.URL == page {
			continue // being fetched
		}
		u, err := j.cfg.Canon.Parse(h.Item.URL)
		if err != nil || !b.barren.another(u, h.Item.Via) || !b.countNamed(k, 1) {
			b.waiting.add(k, h) // still a variant, or past maxNamed: held, in its order
			continue
		}
		if r.Release(h) {
			released++
		} else {
			b.countNamed(k, -1) // gone: fetched, or released by an earlier run
		}
	}
	b.mu.Lock()
	b.released += released
	b.mu.Unlock()
}

// maxNamed is how many budgets' worth of URLs a family may queue from its
// own pages as other pages a parameter names (barren.another), beyond its
// budget: a wiki's thousand articles, where a word-valued calendar or an
// opaque cursor, which name pages as well, stops.
const maxNamed = 20

// countNamed counts n more URLs of the family k queued as other pages a
// parameter names (-1: one counted that was not queued after all), and
// reports whether they are within maxNamed budgets (uncounted if not).
func (b *budgets) countNamed(k string, n int) bool {
	ok := false
	b.fams.Update(k, func(s famState) famState {
		if ok = int64(s.counted)+int64(n) <= maxNamed*int64(b.base); ok {
			s.counted = uint32(max(int64(s.counted)+int64(n), 0))
		}
		return s
	})
	return ok
}

// take takes from the URLs the family k holds as many as fit in its
// budget, oldest first, counting them against it (s, its state, under
// its lock).
func (b *budgets) take(k string, s *famState) []Held {
	room := s.budget(b.base) - int64(s.counted)
	if room <= 0 {
		return nil
	}
	fit := b.waiting.take(k, int(room))
	s.counted += uint32(len(fit))
	return fit
}

// Released returns how many of the URLs held (Held) were queued as usual
// since, their family's budget having grown (Weigh).
func (j *Judge) Released() int64 {
	b := j.budgets
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.released
}

// Held returns the URLs held past their family's budget, by reason.
func (j *Judge) Held() map[string]int64 {
	b := j.budgets
	if b == nil {
		return map[string]int64{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.held)
}

// The families' states in the store: famKeyLen bytes of key, then
// counted, held and grown, 4 bytes each, little-endian.
const (
	metaTrapFamilies = "trapcounts/families"
	famRecordLen     = famKeyLen + 12
)

// marshal encodes the families in memory.
func (b *budgets) marshal() []byte {
	out := make([]byte, 0, famRecordLen*b.fams.Len())
	b.fams.Each(func(k string, s famState) {
		out = append(out, k...)
		out = binary.LittleEndian.AppendUint32(out, s.counted)
		out = binary.LittleEndian.AppendUint32(out, s.held)
		out = binary.LittleEndian.AppendUint32(out, uint32(s.grown))
	})
	return out
}

var errFamilies = errors.New("judge: the trap budgets' families do not decode")

// unmarshal reads back what marshal wrote.
func (b *budgets) unmarshal(v []byte) error {
	if len(v)%famRecordLen != 0 {
		return errFamilies
	}
	for ; len(v) > 0; v = v[famRecordLen:] {
		s := famState{
			counted: binary.LittleEndian.Uint32(v[famKeyLen:]),
			held:    binary.LittleEndian.Uint32(v[famKeyLen+4:]),
			grown:   int32(binary.LittleEndian.Uint32(v[famKeyLen+8:])),
		}
		b.fams.Update(string(v[:famKeyLen]), func(famState) famState { return s })
	}
	return nil
}
