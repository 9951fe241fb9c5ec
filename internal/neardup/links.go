package neardup

import (
	"math/bits"
	"strings"

	"github.com/weft-crawler/weft/internal/extract"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/store"
)

// What a page links to tells a near-duplicate that copies its original's
// links (a mirror, a print view, a session's copy) from one that reads as
// its original but lists other things (a listing's next page, whose text
// is its template's and a few items'): the links of the first are
// followed already, the second's lead to what only it lists. Each
// original keeps a Bloom filter of its links (store.SimRecord.Links); what
// the near-duplicates it vouched for linked to is kept with it in memory
// for the run (Index.listings), so that a copy of a listing's second page
// is a copy of it too.
//
// A link counts by its path as written, whatever the scheme and host
// before it, without its fragment, its path parameters
// (;jsessionid=), its empty, "." and ".." segments, and with generated
// segments (scope.IsToken: a session id, a hash) made one: the links of a
// session's copy, each with its own id, are those of the original, while
// /item/12 and /item/16 differ; a link written absolute on one page and
// root-relative on another is one (a link relative to its page's
// directory is its own). Of its query only the numbers it sets count,
// and of those only the ones the page's links set to mostly distinct
// values (idParams): a facet's words, a session's ids and a number in
// most links (a cache-buster's, a language's) make no other link, but a
// forum's listing links viewtopic.php?t=6020, its next page, which reads
// as its template, other topics. A link's pattern leaves its query out.
//
// A link of the page's own pattern (its path with each run of digits one
// digit) is not something else: the next day of a calendar whose every
// day is the same story (/day/12 linking /day/13) is a copy, links and
// all, where a category's next page (/c/3?page=2) lists products
// (/product/16). An original vouches for at most maxListed near-duplicates
// that list other things in a run; past that they are copies, links and
// all: a trap of copies that link other things (a calendar's days each
// linking its week) costs that many pages, and is cut off as any other.
const (
	// newLinks is how many links a near-duplicate must have that its
	// original has not, and that are not of its own pattern, for its
	// links to be followed.
	newLinks  = 2
	maxListed = 100
	linkBits  = store.LinkWords * 64
)

// linksAgainst adds the links of a page at url to a filter, and counts
// those not of the page's own pattern that neither the filter orig nor
// the wider one listed has.
func linksAgainst(links []extract.Link, ids *idParams, url string, orig *[store.LinkWords]uint64, listed *[listWords]uint64) (filter [store.LinkWords]uint64, news int) {
	_, own := linkKeys(url, nil)
	for _, l := range links {
		path, pattern := linkKeys(l.URL, ids)
		isNew := false
		for _, b := range bloomBits(path, linkBits) {
			filter[b/64] |= 1 << (b % 64)
			isNew = isNew || orig[b/64]&(1<<(b%64)) == 0
		}
		if !isNew || pattern == own {
			continue
		}
		for _, b := range bloomBits(path, listBits) {
			if listed[b/64]&(1<<(b%64)) == 0 {
				news++
				break
			}
		}
	}
	return filter, news
}

// idParams are the query parameters that a page's links set to numbers,
// and which of them name what the links lead to: those whose values are
// mostly distinct (a topic list's t=), not one number in most links (a
// cache-buster's, a session's, a language's), so that one more link
// (a language switch) changes nothing. Names are kept by hash in idSlots
// slots; a name past them counts.
type idParams struct {
	slots [idSlots]idSlot
	over  bool // a name found no slot
}

type idSlot struct {
	name   uint64 // its hash, never zero; zero: a free slot
	values uint64 // a bit of 64 for each value, by hash
	links  int    // the links that set it
}

const idSlots = 32

// idParamsOf reads the numbers a page's links set in their queries.
func idParamsOf(links []extract.Link) *idParams {
	var ids idParams
	for _, l := range links {
		_, query, ok := strings.Cut(l.URL, "?")
		if !ok {
			continue
		}
		query, _, _ = strings.Cut(query, "#")
		for param := range strings.SplitSeq(query, "&") {
			name, value, ok := idParam(param)
			if !ok {
				continue
			}
			sl := ids.slot(name, true)
			if sl == nil {
				ids.over = true
				continue
			}
			sl.values |= 1 << (hashString(value) % 64)
			sl.links++
		}
	}
	return &ids
}

// slot returns name's slot, claiming a free one if add, or nil.
func (ids *idParams) slot(name string, add bool) *idSlot {
	h := hashString(name) | 1
	for k := range uint64(idSlots) {
		sl := &ids.slots[(h+k)%idSlots]
		switch {
		case sl.name == h:
			return sl
		case sl.name == 0 && add:
			sl.name = h
			return sl
		case sl.name == 0:
			return nil
		}
	}
	return nil
}

func hashString(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h ^ h>>31
}

// idParam splits a query's parameter that sets a number of nine digits at
// most (an id, not a timestamp).
func idParam(param string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(param, "=")
	return name, value, ok && value != "" && len(value) <= 9 && strings.Trim(value, "0123456789") == ""
}

// counts reports whether name names what the page's links lead to: its
// values mostly distinct, at least half as many as the links that set it
// (of at most 64, a hash's bits).
func (ids *idParams) counts(name string) bool {
	sl := ids.slot(name, false)
	if sl == nil {
		return ids.over
	}
	return 2*bits.OnesCount64(sl.values) > min(sl.links, 64)
}

// linkKeys hashes href's path as a link counts, with the numbers its
// query sets that name pages (ids; nil: none), and its pattern (without
// them).
func linkKeys(href string, ids *idParams) (path, pattern uint64) {
	var query string
	if i := strings.IndexAny(href, "?#"); i >= 0 {
		if href[i] == '?' {
			query, _, _ = strings.Cut(href[i+1:], "#")
		}
		href = href[:i]
	}
	if i := strings.Index(href, "//"); i >= 0 && !strings.Contains(href[:i], "/") {
		// An absolute link, or one relative to the scheme: its path.
		href = href[i+2:]
		if j := strings.IndexByte(href, '/'); j >= 0 {
			href = href[j:]
		} else {
			href = ""
		}
	}
	path, pattern = fnvOffset, fnvOffset
	for seg := range strings.SplitSeq(href, "/") {
		if i := strings.IndexByte(seg, ';'); i >= 0 {
			seg = seg[:i] // a path parameter: ;jsessionid=
		}
		switch {
		case seg == "" || seg == "." || seg == "..":
			continue
		case scope.IsToken(seg):
			seg = "*"
		}
		digits := false
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			path = (path ^ uint64(c)) * fnvPrime
			switch {
			case c < '0' || c > '9':
				pattern = (pattern ^ uint64(c)) * fnvPrime
				digits = false
			case !digits: // a run of digits, one mark
				pattern *= fnvPrime
				digits = true
			}
		}
		path = (path ^ '/') * fnvPrime
		pattern = (pattern ^ '/') * fnvPrime
	}
	if query != "" && ids != nil {
		path = queryNumbers(path, query, ids)
	}
	return path, pattern
}

// queryNumbers adds to a link's path hash the numbers its query sets
// that name pages (idParams), in any order.
func queryNumbers(path uint64, query string, ids *idParams) uint64 {
	var sum uint64
	for param := range strings.SplitSeq(query, "&") {
		name, _, ok := idParam(param)
		if !ok || !ids.counts(name) {
			continue
		}
		sum += hashString(param)
	}
	if sum == 0 {
		return path
	}
	return (path ^ sum) * fnvPrime
}

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// bloomBits are the three bits a link's key sets in a filter of size bits.
func bloomBits(h, size uint64) [3]uint64 {
	h ^= h >> 29
	return [3]uint64{h % size, (h >> 20) % size, (h >> 40) % size}
}
