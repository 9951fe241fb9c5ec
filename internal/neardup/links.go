package neardup

import (
	"strings"

	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/store"
)

// Links is what a page links to, to tell a near-duplicate that copies its
// original's links (a mirror, a print view, a session's copy) from one
// that reads as its original but lists other things (a listing's next
// page, whose text is its template's and a few items'): the links of the
// first are followed already, the second's lead to what only it lists.
//
// A link counts by its path as written, whatever the scheme and host
// before it, without its query or fragment, its path parameters
// (;jsessionid=), its empty, "." and ".." segments, and with generated
// segments (scope.IsToken: a session id, a hash) made one: the links of a
// session's copy, each with its own id, are those of the original, while
// /item/12 and /item/16 differ; one link written absolute on one page and
// relative on another is one. A query is left out for the same reason, so
// that a facet's or a page number's variants of one path are one link.
//
// A link of the page's own pattern (its path with each run of digits one
// digit) is not something else: the next day of a calendar whose every
// day is the same story (/day/12 linking /day/13) is a copy, links and
// all, where a category's next page (/c/3?page=2) lists products
// (/product/16). The first maxLinkKeys links are kept, with a Bloom filter
// of them (store.SimRecord.Links) to be judged against.
type Links struct {
	keys  [maxLinkKeys]uint64 // each link's path
	pats  [maxLinkKeys]uint64 // each link's pattern
	n     int
	own   uint64 // the page's pattern
	bloom [store.LinkWords]uint64
}

const (
	maxLinkKeys = 128
	// newLinks is how many links a near-duplicate must have that its
	// original has not, and that are not of its own pattern, for its
	// links to be followed.
	newLinks = 2
	linkBits = store.LinkWords * 64
)

// Add counts the link href, as the page writes it.
func (l *Links) Add(href string) {
	if l.n == maxLinkKeys {
		return
	}
	l.keys[l.n], l.pats[l.n] = linkKeys(href)
	for _, b := range bloomBits(l.keys[l.n]) {
		l.bloom[b/64] |= 1 << (b % 64)
	}
	l.n++
}

// linkKeys hashes href's path as Links counts it, and its pattern.
func linkKeys(href string) (path, pattern uint64) {
	if i := strings.IndexAny(href, "?#"); i >= 0 {
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
	return path, pattern
}

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// bloomBits are the three bits of the filter a key sets.
func bloomBits(h uint64) [3]uint64 {
	h ^= h >> 29
	return [3]uint64{h % linkBits, (h >> 20) % linkBits, (h >> 40) % linkBits}
}

// newTo reports whether the page links to newLinks or more things, not of
// its own pattern, that the original whose filter is orig does not. An
// original of an older weft has none: every such link of the page is new
// to it.
func (l *Links) newTo(orig [store.LinkWords]uint64) bool {
	n := 0
	for i, h := range l.keys[:l.n] {
		if l.pats[i] == l.own {
			continue
		}
		for _, b := range bloomBits(h) {
			if orig[b/64]&(1<<(b%64)) == 0 {
				n++
				break
			}
		}
		if n >= newLinks {
			return true
		}
	}
	return false
}
