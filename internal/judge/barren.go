package judge

import (
	"hash/maphash"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/hostmap"
)

// Barren parameters: a query parameter set to a word (a facet's colour, a
// size, a sort order) whose pages, on one host, have led to nothing new.
// The trap budget bounds each family by what its own pages are worth, but
// a shop's every category is a family of its own, and each spends its
// whole budget on facets once the listing's pages have found its products:
// some fifty requests a category, for nothing. What one category's facets
// showed holds for the others': once barrenAfter pages of the host that
// set a parameter to a word have been fetched, none of them led to a new
// URL outside its family, and its values repeat (at most half as many
// values as pages: a filter's few values, not an article's slug or a
// search's terms, which are pages of their own; never more than
// maxFilterValues), a link that carries it, from a page of its own path
// (the category's listing, another of its variants), is held
// (HeldBarren). A parameter that every page weighed of that path carries
// is not held there: it routes (a script's ?option=com_content&view=,
// ?route=), it does not filter. A parameter one such page led somewhere
// with is never barren again, and the URLs held for it are queued as
// usual (Weigh): a shop whose filters reach products that its listings'
// pages do not keeps them. The URLs held stay queued at the lowest
// priority, for a continuous crawl to fetch when nothing else waits; in a
// crawl that ends, which never fetches them, one queued before its
// parameter was learnt barren is held when leased (Learnt, Hold), once
// twice as many pages have shown it barren.
//
// The same states tell a parameter that names pages: one that every page
// weighed of a path carries and that has set more values than a filter
// has (a wiki's /index.php?title=, /doku.php?id=). A link that changes its
// value alone is another page, not a variant of the page it is on: it is
// queued as usual past the family's budget, up to maxNamed budgets' worth
// (a word-valued calendar or an opaque cursor names pages too), and the
// family's URLs held as variants before that was known are released
// (barren.another, Judge.releaseOthers). Of a 300-article wiki so linked,
// weft fetched 50 articles, the rest held; now all 300.
//
// What is learnt is kept in memory only, bounded as the families are:
// after a restart it is learnt again from a few pages, and the URLs held
// for a barren parameter are read back among their family's (waiting.go),
// for its budget to release.
const (
	barrenAfter     = 8
	maxFilterValues = 24
)

// HeldBarren: a link, from a page of its own path, that carries a barren
// parameter.
const HeldBarren = "barren-param"

// paramState is what the pages of a host that set one parameter to a
// word showed: how many were weighed (saturating), the values they set
// (a bit each of 128, by hash: a count of distinct values good to some
// forty), and whether one led to a new URL outside its family.
type paramState struct {
	pages  uint16
	values [2]uint64
	led    bool
}

// valuesSeen is about how many distinct values the parameter has set.
func (s paramState) valuesSeen() int {
	return bits.OnesCount64(s.values[0]) + bits.OnesCount64(s.values[1])
}

// barren reports whether the parameter is barren, on evidence of at
// least pages pages.
func (s paramState) barren(pages int) bool {
	n := s.valuesSeen()
	return !s.led && int(s.pages) >= pages && 2*n <= int(s.pages) && n <= maxFilterValues
}

// maxPathNames bounds the names a path's state keeps.
const maxPathNames = 8

// pathState is what the pages weighed of one path showed: how many, and
// the parameter names every one of them carried (by a 32-bit hash each,
// at most maxPathNames).
type pathState struct {
	pages uint16
	n     uint8
	names [maxPathNames]uint32
}

// carried reports whether every page weighed of the path carried name.
func (p pathState) carried(name string) bool {
	h := nameHash(name)
	for _, x := range p.names[:p.n] {
		if x == h {
			return true
		}
	}
	return false
}

// barren holds the hosts' parameters' and paths' states. It is safe for
// concurrent use; a crawl that has learnt no barren parameter, and none
// that names pages, pays two atomic loads a candidate for it.
type barren struct {
	params   *hostmap.Map[paramState] // by paramKey
	paths    *hostmap.Map[pathState]  // by authority and path
	any      atomic.Bool              // some parameter is barren
	anyNamed atomic.Bool              // some parameter names pages
}

func newBarren(maxParams, partitions int) *barren {
	return &barren{params: hostmap.NewBounded[paramState](partitions, maxParams, nil),
		paths: hostmap.NewBounded[pathState](partitions, maxParams, nil)}
}

// paramKey names a host's parameter, in the states and as the key its
// held URLs wait under (waiting.go).
func paramKey(authority, name string) string { return "param " + authority + "\x00" + name }

var hashSeed = maphash.MakeSeed()

// valueBit sets in v the bit of 128 that the value s hashes to (maphash:
// FNV-1a's bits, top or bottom, follow a last byte changed too little,
// and Article_1 to Article_40 fell on two bits).
func valueBit(v *[2]uint64, s string) {
	h := maphash.String(hashSeed, s) >> 57
	v[h>>6] |= 1 << (h & 63)
}

func nameHash(s string) uint32 { return uint32(maphash.String(hashSeed, s) >> 32) }

// weighed records a page fetched of a query family, that led to led new
// URLs outside it, and returns the keys of the parameters it showed not
// to be barren after all (one led somewhere, or it has set more values
// than a filter has: their held URLs are to be released), and whether it
// showed a parameter to name the pages of its path (named).
func (b *barren) weighed(u canon.URL, led int) (unlearnt []string, named bool) {
	var names []uint32
	for name := range canon.Params(u.Query) {
		names = append(names, nameHash(name))
	}
	var before pathState
	path := b.paths.Update(u.Authority+u.Path, func(s pathState) pathState {
		before = s
		if s.pages == 0 {
			for _, h := range names[:min(len(names), maxPathNames)] {
				s.names[s.n], s.n = h, s.n+1
			}
		} else {
			kept := s.names[:0]
			for _, h := range s.names[:s.n] {
				if slices.Contains(names, h) {
					kept = append(kept, h)
				}
			}
			s.n = uint8(len(kept))
		}
		s.pages = uint16(min(int(s.pages)+1, math.MaxUint16))
		return s
	})
	for name, value := range canon.Params(u.Query) {
		if canon.IsNumber(value) {
			continue
		}
		k := paramKey(u.Authority, name)
		var was paramState
		s := b.params.Update(k, func(s paramState) paramState {
			was = s
			s.pages = uint16(min(int(s.pages)+1, math.MaxUint16))
			valueBit(&s.values, value)
			s.led = s.led || led > 0
			return s
		})
		switch {
		case s.barren(barrenAfter):
			b.any.Store(true)
		case was.barren(barrenAfter) && (s.led || s.valuesSeen() > maxFilterValues):
			unlearnt = append(unlearnt, k)
		}
		if path.naming(name, s) && !before.naming(name, was) {
			named = true
			b.anyNamed.Store(true)
		}
	}
	return unlearnt, named
}

// naming reports whether the parameter name, whose state on the host is
// s, names the pages of a path whose state is p: every page weighed of
// the path carries it, and it has set more values than a filter has (a
// wiki's ?title=, ?id=). A link that changes its value alone is another
// page, not a variant (barren.another).
func (p pathState) naming(name string, s paramState) bool {
	return p.pages >= 2 && p.carried(name) && s.valuesSeen() > maxFilterValues
}

// another reports whether u, linked from via, is another page of via's
// path that a parameter names (pathState.naming): only that parameter's
// value differs (oneChanged), and it holds no space (a search's terms,
// ?q=red+wool, name no page).
func (b *barren) another(u canon.URL, via string) bool {
	if b == nil || !b.anyNamed.Load() {
		return false
	}
	path, q, ok := pathQuery(u.Authority, via)
	if !ok || path != u.Path {
		return false
	}
	name, value, _, ok := oneChanged(u.Query, q)
	if !ok || strings.Contains(value, "+") || strings.Contains(value, "%20") {
		return false
	}
	p, _ := b.paths.Peek(u.Authority + u.Path)
	s, _ := b.params.Peek(paramKey(u.Authority, name))
	return p.naming(name, s)
}

// holds returns the key of a parameter of u barren on its host on the
// evidence of pages pages, that does not route u's path, or "".
func (b *barren) holds(u canon.URL, pages int) string {
	if !b.any.Load() {
		return ""
	}
	path, _ := b.paths.Peek(u.Authority + u.Path)
	for name, value := range canon.Params(u.Query) {
		if canon.IsNumber(value) || path.pages >= 2 && path.carried(name) {
			continue
		}
		k := paramKey(u.Authority, name)
		if s, ok := b.params.Peek(k); ok && s.barren(pages) {
			return k
		}
	}
	return ""
}

// barrenLink returns the key of a parameter barren on u's host (on the
// evidence of pages pages) that u carries, when via, the page that links
// it, is of its own path (the listing itself, or another of its
// variants); else "". A link from elsewhere on the host (the front page
// linking a collection, /shop?color=red) is the site's choice, and is
// queued as usual.
func (b *budgets) barrenLink(u canon.URL, via string, pages int) string {
	if b == nil || !b.barren.any.Load() || u.Query == "" {
		return ""
	}
	if path, _, ok := pathQuery(u.Authority, via); !ok || path != u.Path {
		return ""
	}
	return b.barren.holds(u, pages)
}
