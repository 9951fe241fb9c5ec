package judge

import (
	"math/bits"
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
// search's terms, which are pages of their own), a link that sets it,
// from a page of its own path (the category's listing, another of its
// variants), is held (HeldBarren). A parameter one such page led
// somewhere with is never barren, so a shop whose filters reach products
// that its listings' pages do not keeps them; nor is one that has shown
// more than maxFilterValues values. The URLs held stay queued at the
// lowest priority, for a continuous crawl to fetch when nothing else
// waits, and are not released by their family's budget; in a crawl that
// ends, which never fetches them, one queued before its parameter was
// learnt barren is dropped when leased (Learnt). What is learnt is kept
// in memory only, bounded as the families are: after a restart it is
// learnt again from a few pages.
const (
	barrenAfter     = 8
	maxFilterValues = 24
)

// HeldBarren: a link, from a page of its own path, that sets a barren
// parameter.
const HeldBarren = "barren-param"

// paramState is what the pages of a host that set one parameter to a
// word showed: how many were weighed (saturating), the values they set
// (a bit each, by hash), and whether one led to a new URL outside its
// family, or the values were too many for a filter's.
type paramState struct {
	pages  uint16
	values uint64
	led    bool
}

func (s paramState) barren() bool {
	return !s.led && s.pages >= barrenAfter && 2*bits.OnesCount64(s.values) <= int(s.pages) && !s.key()
}

// key reports whether the parameter has set more values than a filter
// has: it names pages (an article's slug, a search's terms).
func (s paramState) key() bool { return bits.OnesCount64(s.values) > maxFilterValues }

// barren holds the hosts' parameters' states. It is safe for concurrent
// use; a crawl that has learnt no barren parameter pays one atomic load a
// candidate for it.
type barren struct {
	params *hostmap.Map[paramState] // by authority, NUL and name
	any    atomic.Bool              // some parameter is barren
}

func newBarren(maxParams, partitions int) *barren {
	return &barren{params: hostmap.NewBounded[paramState](partitions, maxParams, nil)}
}

// weighed records a page fetched of a query family, that led to led new
// URLs outside it.
func (b *barren) weighed(u canon.URL, led int) {
	wordParams(u.Query, func(name, value string) {
		s := b.params.Update(u.Authority+"\x00"+name, func(s paramState) paramState {
			s.pages = min(s.pages+1, ^uint16(0))
			s.values |= 1 << (fnvString(fnvOffset, value) % 64)
			s.led = s.led || led > 0
			return s
		})
		if s.barren() {
			b.any.Store(true)
		}
	})
}

// holds reports whether u sets a parameter barren on its host.
func (b *barren) holds(u canon.URL) bool {
	if !b.any.Load() {
		return false
	}
	held := false
	wordParams(u.Query, func(name, _ string) {
		if s, ok := b.params.Peek(u.Authority + "\x00" + name); ok && s.barren() {
			held = true
		}
	})
	return held
}

// barrenLink reports whether u, a page link from via, sets a parameter
// barren on its host, and via is a page of its own path (the listing
// itself, or another of its variants): a link from elsewhere on the host
// (the front page linking a collection, /shop?color=red) is the site's
// choice, and is queued as usual.
func (b *budgets) barrenLink(u canon.URL, via string) bool {
	if b == nil || !b.barren.any.Load() || u.Query == "" {
		return false
	}
	_, rest, _ := strings.Cut(via, "://")
	rest, ok := strings.CutPrefix(rest, u.Authority)
	if !ok {
		return false
	}
	path, _, _ := strings.Cut(rest, "#")
	path, _, _ = strings.Cut(path, "?")
	return (path == u.Path || path == "" && u.Path == "/") && b.barren.holds(u)
}

// wordParams calls fn with the name and value of each of the first
// maxObservedParams parameters of query q whose value is a word, not a
// number (as importance.Variant has it: page=3 and id=42 are numbers, an
// empty value is none).
func wordParams(q string, fn func(name, value string)) {
	for n := 0; q != "" && n < maxObservedParams; n++ {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		name, value, _ := strings.Cut(pair, "=")
		if !canon.IsNumber(value) {
			fn(name, value)
		}
	}
}
