package judge

import (
	"sync/atomic"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/seen"
)

// Walls: URLs of one shape with a query (shapeOf: their pattern and the
// names of their query's parameters), whose pages are copies of one
// another or of the pages that link them, linked from the rest of their
// host; or URLs that add the same parameters to the pages that link
// them, whose pages are copies (variantShape: a blog's ?replytocom=
// under each comment of each post, whose reply form is all that moves);
// or URLs without a query that name the pages that link them in one way
// (toolShape: a wiki's /wiki/Special:WhatLinksHere/Paris from
// /wiki/Paris). A page that asked to be neither indexed nor followed
// (Closed: a wiki's edit, history and special pages, each distinct) is
// evidence as a copy is: its site says it is no page to read and leads
// nowhere.
// A login page that every gated link redirects to
// (/login?next=/cart/add?id=12), a print or share view of every article
// (/article/12?print=1, /share?url=): each URL is one more variant of a
// query, each page a copy of one before it, and the links come from the
// host's other pages, which the trap budget does not count (an in-link
// is not a family feeding itself; each article's print view is a family
// of its own). A shop that links three gated actions from each product
// spends most of its requests on them, and their copies, fetched in a
// run, cut the whole host off as a trap (copies.go) before its products
// are found.
//
// The judge learns a wall from the pages it fetches: once wallEvidence
// pages of a shape were copies (an exact or a near duplicate of a page
// before them), with at most one distinct page for every wallEvidence
// copies, the shape is a wall. Its further URLs linked from outside
// their family on the host (a link, or a redirect's target), and a
// variant shape's further variants whatever their family, are then
// held (HeldCopies), but the first two and a few by their hash, one in
// wallProbe of the first wallProbe and fewer after (probeFor), queued as
// usual to probe it: should the shape's pages turn out
// distinct enough that the ratio no longer holds, the wall falls, and
// the URLs it held are released, all of them, at the next page of the
// shape weighed (once wallEvidence pages of the shape have been weighed
// in this run: after a restart, the wall is learnt again before what it
// held is released or not). They are remembered apart from the URLs the
// families' budgets hold (wallKey), and were never counted against
// them. A shape whose URLs redirected, wallEvidence of them in a row
// without a redirect elsewhere between, into one shape that is a wall
// is a wall too (with as few distinct pages), so that the gated URLs
// the login page stands for (/cart/add?id=) are no longer asked for
// either; it falls when its target does. Page links queued before the
// wall was learnt are held when leased (Learnt, Hold), but one in
// wallProbe by its hash, as every probe is, and released with the others
// should the wall fall: a museum's index that lists forty withdrawn
// numbers, one page a number, before its objects (synthweb.Collection)
// lost 13 of its 260 objects when they were dropped. Seeds, their
// redirects, requisites, sitemaps and links from other hosts are never
// held so.
//
// A search's results (Search: a news site's searches, each article
// linking those of the people it names) are a way to pages, not pages to
// read, and lead to what other pages do, or not. Once two of a shape's
// pages were a search's (and no more than one page in wallEvidence was
// not), its further URLs linked from its host, but a listing's next page,
// are queued at frontier.Low and a rank below the high front queue's:
// behind the host's other pages (budgets.wait). Leased then, wallBarren
// of them in a row that led to no new URL outside their family make the
// shape a wall; one that did, or a page of the shape that is no search,
// brings it down (wallPageOf). Of a news site of 240 articles
// (synthweb.Newsroom), weft asked for 673 searches; now about 120, and
// every article.
//
// Walls are part of the trap budget: no budget (--trap-budget 0), no
// walls; where nothing held is released (a node of a cluster,
// NoRelease), a wall that falls releases nothing either. What is learnt
// is kept in memory only, for at most DefaultMaxFamilies shapes (a hash
// of each), the least recently used forgotten first, and learnt again
// after a restart, from a few pages; the URLs held by a run before are
// remembered (RememberHeld) and released if the wall, learnt again,
// does not stand (a variant of the page that linked it as its variant
// shape's, unless a query family's own page linked it; a tool as its
// tool's wall's, unless a page of its own family linked it). A wall
// remembers at most DefaultMaxWaiting/8 of the URLs it holds; past
// that, the URLs it holds stay at HeldPriority should it fall.
const (
	wallEvidence = 8
	wallProbe    = 50
	wallBarren   = 64
	wallMissing  = 32
)

// wallState is what a shape's pages showed: how many were copies and how
// many distinct (halved together as they near their bound), the shape its
// last redirects went to and how many in a row, and how many URLs the
// wall held, a few let through to probe it (hold).
type wallState struct {
	copies, distinct uint16
	found            uint16 // pages that were a search's results
	into             string
	redirects        uint16
	barren           uint16 // searches leased late that led nowhere new, in a row
	missing          uint16 // pages missing (Missing)
	held             uint32
}

// weighed is the number of the shape's pages weighed.
func (s wallState) weighed() int {
	return int(s.copies) + int(s.distinct) + int(s.redirects) + int(s.found) + int(s.missing)
}

// wallShape is the key of u's wall: a hash of its shape (shapeOf), or ""
// for a URL without a query, which no shape's wall holds (a page's tool
// is held by its variant's, wallVariant).
func wallShape(u canon.URL) string {
	if u.Query == "" {
		return ""
	}
	return wallHash(shapeOf(u))
}

// wallVariant is the key of the wall of u as a variant of via, the page
// that links it: a hash of its variant shape (variantShape), or "" when
// it is none.
func wallVariant(u canon.URL, via string) string {
	if u.Query == "" {
		if h, ok := toolHash(u, via); ok {
			return hashKey(h)
		}
		return ""
	}
	if v := variantShape(u, via); v != "" {
		return wallHash(v)
	}
	return ""
}

func wallHash(shape string) string { return hashKey(fnvString(fnvOffset, shape)) }

// copied reports whether most of the shape's pages were copies, the last
// wallBarren searches leased late led nowhere (wallPageOf), or
// wallMissing pages were missing and none distinct.
func (s wallState) copied() bool {
	return s.copies >= wallEvidence && int(s.distinct)*wallEvidence <= int(s.copies) || s.barren >= wallBarren ||
		s.missing >= wallMissing && s.distinct == 0
}

// redirected reports whether the shape's URLs redirect into one other
// shape (which may be a wall).
func (s wallState) redirected() bool {
	return s.redirects >= wallEvidence && int(s.distinct)*wallEvidence <= int(s.redirects)
}

// walls is what the judge has learnt of the shapes of copies. It is safe
// for concurrent use.
type walls struct {
	shapes   *hostmap.Map[wallState] // by wallShape
	any      atomic.Bool             // a shape was a wall: until then no candidate's shape is asked for
	searched *hostmap.Map[bool]      // hosts with a shape of searches (searches): only their links' shapes are asked for
	search   atomic.Bool             // a host is in searched: until then it is not asked
}

func newWalls(maxShapes, partitions int) *walls {
	return &walls{shapes: hostmap.NewBounded[wallState](partitions, maxShapes, nil),
		searched: hostmap.NewBounded[bool](partitions, maxShapes, nil)}
}

// wallPage is what a fetched page showed its shapes (wallPageOf).
type wallPage struct {
	content Content // Copy, Closed, Echo, Missing, Distinct, or Unjudged
	host    string  // its authority
	into    string  // the shape it redirected to (Worth.Redirect)
	search  bool    // it was a search's results
	late    int8    // a search leased late: 1 if it led nowhere new, -1 if it led somewhere
}

// wallPageOf is what a page weighed as w, of content, showed its shapes.
// A search's results (Search) are neither a copy nor a page of their own:
// what their shape is worth is what they lead to once nothing else on
// the host waits (Worth.Leased). wallBarren of them in a row that led
// nowhere new make the shape a wall; one that led somewhere, or a
// distinct page of the shape that is no search, brings it down. Leased
// before that, they lead to what other pages would have led to as well
// (a news site's searches, found before its listings' later pages), and
// they tell nothing. Of a shape that is a way in (a catalogue's searches,
// each of one author, most of them of an author found already), few
// pages lead anywhere, but not wallBarren in a row until the way is
// walked. What a page of no family led to is not counted (Admitted).
func wallPageOf(w Worth, content Content) wallPage {
	p := wallPage{content: content, host: w.page.Authority, into: w.into, search: content == Search}
	if p.search {
		p.content = Unjudged
		switch {
		case !w.late || w.fam.none():
		case w.led == 0:
			p.late = 1
		default:
			p.late = -1
		}
	}
	return p
}

// judged counts a fetched page of the shape k: a copy, a distinct page,
// or a redirect to the shape into; whether it was a search's results;
// and what it led to if it was one leased late.
func (w *walls) judged(k string, p wallPage) {
	content, into := p.content, p.into
	redirect := content == Unjudged && into != ""
	if k == "" || content != Copy && content != Closed && content != Echo && content != Missing && content != Distinct && !redirect && !p.search {
		return
	}
	var searches bool
	w.shapes.Update(k, func(s wallState) wallState {
		if max(s.copies, s.distinct, s.redirects, s.found, s.missing) == ^uint16(0) {
			// Halved, but a distinct page stays one (it keeps a shape of
			// missing pages from being a wall).
			s.copies, s.distinct, s.redirects = s.copies/2, (s.distinct+1)/2, s.redirects/2
			s.found, s.missing = s.found/2, s.missing/2
		}
		if p.search {
			s.found++
		}
		switch {
		case content == Copy || content == Closed || content == Echo:
			s.copies++
		case content == Missing:
			s.missing++
		case content == Distinct:
			s.distinct++
			s.barren = 0
		case p.late > 0:
			s.barren = min(s.barren+1, wallBarren)
		case p.late < 0:
			s.barren = 0
		case redirect && into != s.into:
			s.into, s.redirects = into, 1
		case redirect:
			s.redirects++
		}
		if s.copied() || s.redirected() {
			w.any.Store(true)
		}
		searches = s.searches()
		return s
	})
	if searches {
		w.searched.Update(p.host, func(bool) bool { return true }) // and kept from eviction while its searches come
		w.search.Store(true)
	}
}

// searches reports whether the shape's pages were a search's results:
// two at least, with at most one distinct page that was not for every
// wallEvidence that were.
func (s wallState) searches() bool {
	return s.found >= 2 && int(s.distinct)*wallEvidence <= int(s.found)
}

// searches reports whether the shape k's pages were a search's results.
func (w *walls) searches(k string) bool {
	s, ok := w.shapes.Peek(k)
	return k != "" && ok && s.searches()
}

// known reports whether the shape k's pages were weighed.
func (w *walls) known(k string) bool {
	_, ok := w.shapes.Peek(k)
	return ok
}

// up reports whether the shape k is a wall: its pages copies, or its
// URLs redirects into a shape whose pages are.
func (w *walls) up(k string) bool {
	if k == "" {
		return false
	}
	s, ok := w.shapes.Peek(k)
	switch {
	case !ok:
		return false
	case s.copied():
		return true
	case s.redirected() && s.into != k:
		t, ok := w.shapes.Peek(s.into)
		return ok && t.copied()
	}
	return false
}

// hold reports whether a URL of the shape k and of hash h, linked from
// outside its family on its host, is held: the shape is a wall, and the
// URL is not its probe: the first two, then by its hash (probeFor: one
// in wallProbe of the wall's first wallProbe URLs, fewer as it holds
// more, every one of them one in wallProbe by its hash, which walled
// lets through when leased).
func (w *walls) hold(k string, h uint64) bool {
	if !w.up(k) {
		return false
	}
	var held bool
	w.shapes.Update(k, func(s wallState) wallState {
		s.held++
		held = s.held > 2 && !probeFor(h, uint64(s.held), wallProbe)
		return s
	})
	return held
}

// fallen reports whether the shape k, which held URLs, no longer stands:
// it is no wall, and wallEvidence of its pages were weighed in this run
// to say so; or, if its URLs redirect into another shape, wallEvidence
// of that shape's pages were, and it is no wall. (After a restart the
// target's pages come only after the redirects to them, so that a shape
// of redirects would otherwise fall before its target stood again.)
func (w *walls) fallen(k string) bool {
	s, ok := w.shapes.Peek(k)
	if !ok || s.weighed() < wallEvidence || w.up(k) {
		return false
	}
	if s.redirected() && s.into != k {
		t, ok := w.shapes.Peek(s.into)
		return ok && t.weighed() >= wallEvidence
	}
	return true
}

// wallKey is the key the URLs the wall of shape k holds are remembered
// under (waiting), apart from the families' budgets'.
func wallKey(k string) string { return "wall " + k }

// release hands every URL held under the waiting key k (a fallen wall's,
// wallKey; a parameter's no longer barren, paramKey) to r, to be queued as
// usual, but page's own, which is being fetched.
func (b *budgets) release(k, page string, r Releaser) {
	var released int64
	for _, h := range b.waiting.take(k, DefaultMaxWaiting) {
		if h.Item.URL != page && r.Release(h) {
			released++
		}
	}
	b.mu.Lock()
	b.released += released
	b.mu.Unlock()
}

// walled reports whether u, linked from via, is a URL queued before its
// shape was learnt a wall: an in-link of its host (another family's
// page's link) into a wall, or a variant of via whose variant shape is
// one, not one of the URLs let through to probe it (one in wallProbe, by
// its hash: every probe hold let through is one).
func (j *Judge) walled(u canon.URL, via string) bool {
	b := j.budgets
	if b == nil || !b.walls.any.Load() || fnvString(fnvOffset, u.String)%wallProbe == 0 {
		return false
	}
	return b.walls.up(wallVariant(u, via)) || u.Query != "" && b.inLink(u, b.familyOf(u), via) && b.walls.up(wallShape(u))
}

// Hold remembers it, the URL u queued before a wall was learnt, or
// before a parameter it carries was learnt barren, and leased since
// (Learnt said why: HeldCopies or HeldBarren), whose caller queued it
// again at HeldPriority (state.Batch.Hold): held as a URL found after it
// is, counted so, and released should the wall fall or the parameter
// lead somewhere.
func (j *Judge) Hold(it frontier.Item, u canon.URL, why string) {
	b := j.budgets
	if b == nil {
		return
	}
	var k string
	switch {
	case why == HeldBarren:
		k = b.barrenLink(u, it.Via, 2*barrenAfter)
	case b.walls.up(wallVariant(u, it.Via)):
		k = wallKey(wallVariant(u, it.Via))
	default:
		k = wallKey(wallShape(u))
	}
	b.count(why)
	j.traps.held(u.Authority)
	it.Priority = ReleasedPriority
	if k != "" {
		b.waiting.add(k, Held{Item: it, Key: seen.KeyOf(it.URL), Ranked: true})
	}
}

// walledShape reports whether u's shape, or its variant shape as linked
// from via, is a wall.
func (b *budgets) walledShape(u canon.URL, via string) bool {
	return b != nil && b.walls.any.Load() && (b.walls.up(wallShape(u)) || b.walls.up(wallVariant(u, via)))
}

// Redirect records that the page redirected to target (walls.judged).
func (w *Worth) Redirect(target canon.URL) { w.into = wallShape(target) }

// judgeWalls counts the page w weighs, of content, under its shape and
// its variant shape, and releases what a wall that fell held.
//
// A page's tool (toolShape) is evidence only when closed or a copy of that
// page (Echo: its print view), or distinct once one of those made its
// shape known: an empty list that reads as the next one (a repository's
// issues) is no copy of the page, and the lists that are not empty are
// pages of their own; and a distinct page does not make
// a shape for each of a site's paths that names its parent, unless the
// shape's wall held URLs in a run before (RememberHeld), which it may
// then release.
func (b *budgets) judgeWalls(w Worth, content Content, r Releaser) {
	p := wallPageOf(w, content)
	content = p.content
	for i, wall := range [2]string{wallShape(w.page), wallVariant(w.page, w.via)} {
		if wall == "" {
			continue
		}
		if i == 1 && w.page.Query == "" && content != Closed && content != Echo &&
			!(content == Distinct && (b.walls.known(wall) || b.waiting.has(wallKey(wall)))) {
			continue
		}
		b.walls.judged(wall, p)
		if r != nil && b.waiting.has(wallKey(wall)) && b.walls.fallen(wall) {
			b.release(wallKey(wall), w.page.String, r)
		}
	}
}
