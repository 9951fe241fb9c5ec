package judge

import (
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/hostmap"
)

// Walls: a family (family.go) whose pages are copies of one another, its
// URLs linked from the rest of its host. A login page that every gated
// link redirects to (/login?next=/cart/add?id=12), a share or print view
// of every article (/share?url=, /print.php?id=): each URL is one more
// variant of the family's query, each page a copy of the one before, and
// the links into the family come from the host's other pages, which the
// trap budget does not count (an in-link is not the family feeding
// itself). A shop that links three gated actions from each product spends
// most of its requests on them, and their copies, fetched in a run, cut
// the whole host off as a trap (copies.go) before its products are found.
//
// The judge learns a wall from the pages it fetches: once wallEvidence
// pages of a family were copies (an exact or a near duplicate of a page
// before them), with at most one distinct page for every wallEvidence
// copies, the family is a wall. Its further URLs linked from elsewhere
// on the host (a link, or a redirect's target) are then held
// (HeldCopies), but one in wallProbe, which is queued as usual: should
// the family's pages turn out distinct enough that the ratio no longer
// holds, the wall falls, and the URLs it held are released, all of them,
// at the next page of the family weighed. They are remembered apart from
// the URLs the family's budget holds (wallKey), and were never counted
// against it. A family whose URLs redirected, wallEvidence of them in a
// row without a redirect elsewhere between, into one family that is a
// wall is a wall too (with as few distinct pages), so that the gated URLs
// the login page stands for (/cart/add?id=) are no longer asked for
// either; it falls when its target does. Seeds, their redirects,
// requisites, sitemaps and links from other hosts are never held so.
//
// Walls are part of the trap budget: no budget (--trap-budget 0), no
// walls; where nothing held is released (a node of a cluster, NoRelease),
// a wall that falls releases nothing either. What is learnt is kept in
// memory only, for at most DefaultMaxFamilies families, the least
// recently used forgotten first, and learnt again after a restart, from a
// few pages; the URLs held by a run before are remembered with their
// family's budget (RememberHeld), which releases them as it allows.
const (
	wallEvidence = 8
	wallProbe    = 50
)

// wallState is what a family's pages showed: how many were copies and how
// many distinct (halved together as they near their bound), the family
// its last redirects went to and how many in a row, and how many URLs the
// wall held, one in wallProbe let through.
type wallState struct {
	copies, distinct uint16
	into             family
	redirects        uint16
	held             uint32
}

// copied reports whether most of the family's pages were copies.
func (s wallState) copied() bool {
	return s.copies >= wallEvidence && int(s.distinct)*wallEvidence <= int(s.copies)
}

// redirected reports whether the family's URLs redirect into one other
// family (which may be a wall).
func (s wallState) redirected() bool {
	return s.redirects >= wallEvidence && int(s.distinct)*wallEvidence <= int(s.redirects)
}

// walls is what the judge has learnt of the families of copies. It is
// safe for concurrent use.
type walls struct {
	fams *hostmap.Map[wallState] // by family key
}

func newWalls(maxFamilies, partitions int) *walls {
	return &walls{fams: hostmap.NewBounded[wallState](partitions, maxFamilies, nil)}
}

// judged counts a fetched page of the family k: a copy, a distinct page,
// or a redirect to the family into (Worth.Redirect).
func (w *walls) judged(k string, content Content, into family) {
	redirect := content == Unjudged && !into.none()
	if content != Copy && content != Distinct && !redirect {
		return
	}
	w.fams.Update(k, func(s wallState) wallState {
		if max(s.copies, s.distinct, s.redirects) == ^uint16(0) {
			s.copies, s.distinct, s.redirects = s.copies/2, s.distinct/2, s.redirects/2
		}
		switch {
		case content == Copy:
			s.copies++
		case content == Distinct:
			s.distinct++
		case into != s.into:
			s.into, s.redirects = into, 1
		default:
			s.redirects++
		}
		return s
	})
}

// up reports whether the family k is a wall: its pages copies, or its
// URLs redirects into a family whose pages are.
func (w *walls) up(k string) bool {
	s, ok := w.fams.Peek(k)
	switch {
	case !ok:
		return false
	case s.copied():
		return true
	case s.redirected() && s.into.key() != k:
		t, ok := w.fams.Peek(s.into.key())
		return ok && t.copied()
	}
	return false
}

// hold reports whether a URL of the family k, linked from elsewhere on
// its host, is held: the family is a wall, and the URL is not its probe.
func (w *walls) hold(k string) bool {
	if !w.up(k) {
		return false
	}
	var held bool
	w.fams.Update(k, func(s wallState) wallState {
		s.held++
		held = s.held%wallProbe != 0
		return s
	})
	return held
}

// wallKey is the key the URLs a wall holds are remembered under
// (waiting), apart from its family's budget's, k.
func wallKey(k string) string { return k + "w" }

// releaseWall hands every URL the fallen wall of the family k held to r,
// to be queued as usual, but page's own, which is being fetched.
func (b *budgets) releaseWall(k, page string, r Releaser) {
	var released int64
	for _, h := range b.waiting.take(wallKey(k), DefaultMaxWaiting) {
		if h.Item.URL != page && r.Release(h) {
			released++
		}
	}
	b.mu.Lock()
	b.released += released
	b.mu.Unlock()
}

// Redirect records that the page redirected to target (walls.judged).
func (w *Worth) Redirect(target canon.URL) { w.into = familyOf(target) }
