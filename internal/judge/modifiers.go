package judge

import (
	"bytes"
	"math/bits"
	"strings"
	"sync/atomic"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/hostmap"
)

// Path modifiers: the segments a shop writes its facets with when it puts
// them in the path, as many do for search engines: /c/shoes/color-red/,
// then /c/shoes/color-red/size-42/ and /c/shoes/size-42/color-red/. Such
// a path has no query and no date, so it was of no family, and a facet
// page linking the next facets was bounded only by the pattern cap and
// the near-duplicate cut: a shop of 20 categories, 60 products each and
// three facets cost 5,923 requests, 4,024 of them facet pages, and its
// host was cut off with 917 of its 1,200 products fetched.
//
// A segment is a modifier of its host when it is appended, at the end of
// a new URL, after pathAfter distinct segments or more (besides the one
// it followed first, which only a bit notes: a facet's value follows
// every category and every other facet's values), and is seen both after
// and before a segment that is so appended: facets stack, in the order
// clicked (/color-red/size-42/ and /size-42/color-red/). The last rule
// keeps the pages of many parents apart: a directory's
// /us/ca/san-francisco/plumbers/ follows many cities, but no city follows
// many segments, and an ending that follows everything
// (/plumbers/page-2/) comes after the trade, never before it; versioned
// documentation's /docs/v1/install/ follows many versions, but no version
// does. A number alone is never a modifier (an id, the 2 of /page/2/), nor
// is a date. A shop that writes its facets in one fixed order learns only
// those of the middle, if any.
//
// Some shops write a filter as a name and a value, two segments
// (/c/shoes/color/red/size/42/): the pair is then the unit, whatever its
// value (a number, here), and is learnt as a segment is, after the
// segment before it and next to the pair before it.
//
// The URLs whose path has modifiers are a path family: those of one host
// whose paths are the same once their modifiers are taken out (every
// facet page of /c/shoes/), bounded by the trap budget as a query family
// is. The category's own page is of no family, so what it links into its
// facets is an in-link, queued as usual; what the facet pages link among
// themselves counts. The next page of a listing (/page-3/ from /page-2/,
// nextInPath), or a numeric facet's next value, is queued past the
// budget, up to maxNamed budgets' worth.
//
// What is learnt is bounded as the families are, and the modifiers are
// saved with the trap budgets, so that a resumed crawl knows the family
// of the URLs it held.
const pathAfter = 8

// segState is what the new URLs of a host showed of a unit (a segment, or
// a pair) that ended them: the segments they followed (a bit each of 128,
// by hash: a count of distinct ones good to some forty), and whether it
// was seen after an appended unit, and before one.
type segState struct {
	after       [2]uint64
	left, right bool
}

// appended reports whether the unit followed pathAfter distinct segments
// or more.
func (s segState) appended() bool {
	return bits.OnesCount64(s.after[0])+bits.OnesCount64(s.after[1]) >= pathAfter
}

// modifiers is what the judge has learnt of its hosts' path segments. It
// is safe for concurrent use.
type modifiers struct {
	segs   *hostmap.Map[segState] // by the hashKey of a unit's hash (segHash, pairHash)
	learnt *hostmap.Map[bool]     // the modifiers, so keyed: apart, so that the states of the segments that end URLs do not push them out
	hosts  *hostmap.Map[uint8]    // the hosts with modifiers (hostModifiers), and with pairs among them (hostPairs)
	any    atomic.Bool            // a modifier was learnt
	// legacy: the modifiers were read back from a store that kept no
	// hosts (an older build's), so that any host may have them, and
	// pairs among them.
	legacy atomic.Bool
	// once has a bit set for each unit of a host that ended a new URL (by
	// hash): a unit gets a state in segs only when it ends a second, so
	// that the slug that ends each article's URL, the most of a crawl's,
	// costs a bit and no state (until the bitset fills: it is never
	// cleared); a pair is looked at only once its last segment ended a
	// URL before.
	once []atomic.Uint64
}

// onceBits is the size of modifiers.once: 1 MiB.
const onceBits = 1 << 23

func newModifiers(maxSegments, partitions int) *modifiers {
	return &modifiers{segs: hostmap.NewBounded[segState](partitions, maxSegments, nil),
		learnt: hostmap.NewBounded[bool](partitions, maxSegments, nil), hosts: hostmap.NewBounded[uint8](partitions, maxSegments, nil),
		once: make([]atomic.Uint64, onceBits/64)}
}

// What modifiers.hosts notes of a host.
const (
	hostModifiers = 1 << iota // it has modifiers
	hostPairs                 // pairs among them
)

// hostHash is where the hashes of a host's units start.
func hostHash(authority string) uint64 { return fnvByte(fnvString(fnvOffset, authority), 0) }

// segHash is the hash of a segment of the paths of the host of hostHash
// h.
func segHash(h uint64, seg string) uint64 { return fnvString(h, seg) }

// pairHash is the hash of a pair of segments, name/value, of the paths
// of the host of hostHash h: the segHash of "name/value".
func pairHash(h uint64, name, value string) uint64 {
	return fnvString(fnvByte(fnvString(h, name), '/'), value)
}

// lastSegs returns the last four segments of a path (fewer at the
// root), the last one last, ignoring a trailing slash; none when the last
// is empty (/a//).
func lastSegs(path string) (segs [4]string, n int) {
	path = strings.TrimSuffix(path, "/")
	if path == "" || strings.HasSuffix(path, "/") {
		return segs, 0
	}
	for n < len(segs) {
		i := strings.LastIndexByte(path, '/')
		segs[len(segs)-1-n] = path[i+1:]
		n++
		if i <= 0 {
			break
		}
		path = path[:i]
	}
	return segs, n
}

// canModify reports whether seg may be a modifier: not a number, nor a
// date.
func canModify(seg string) bool {
	return seg != "" && !canon.IsNumber(seg) && !isWholeDate(seg)
}

// learn notes u, a URL new to the crawl: its last segment follows the one
// before it, and so does its last pair of segments, a filter's name and
// value (/size/42/: a unit of its own, whose value may be a number, after
// /color/red/), unless the name is a page of its own (an appended
// segment: a directory of a code forge's tree). Of two units that are
// both appended, next to each other, the first was seen before an
// appended unit and the second after one; one seen both ways is a
// modifier.
func (m *modifiers) learn(u canon.URL) {
	if u.Query != "" {
		return // the same path with another query: not another parent
	}
	all, n := lastSegs(u.Path)
	if n == 0 {
		return
	}
	segs, last := all[len(all)-n:], n-1
	h := hostHash(u.Authority)
	if m.first(segHash(h, segs[last])) {
		return // the first URL it ends
	}
	if canModify(segs[last]) {
		before := "" // the root
		if n >= 2 {
			before = segs[last-1]
		}
		m.learnUnit(u.Authority, segHash(h, segs[last]), before, segHash(h, before), canModify(before), false)
	}
	if n < 3 || !canModify(segs[last-1]) {
		return
	}
	if s, ok := m.segs.Peek(hashKey(segHash(h, segs[last-1]))); ok && s.appended() {
		return // the name is a page of its own
	}
	if sh := pairHash(h, segs[last-1], segs[last]); !m.first(sh) {
		var prev uint64
		if n >= 4 {
			prev = pairHash(h, segs[last-3], segs[last-2])
		}
		m.learnUnit(u.Authority, sh, segs[last-2], prev, n >= 4 && canModify(segs[last-3]), true)
	}
}

// first reports whether the unit of hash sh ends a URL for the first
// time, and notes that it has.
func (m *modifiers) first(sh uint64) bool {
	bit := (sh >> 32) % onceBits
	w := &m.once[bit/64]
	if w.Load()&(1<<(bit%64)) != 0 {
		return false
	}
	w.Or(1 << (bit % 64))
	return true
}

// learnUnit notes that the unit (a segment, or a pair) of hash sh ended a
// new URL after the segment before, and after the unit of hash prev, if
// that may be a modifier (ok).
func (m *modifiers) learnUnit(authority string, sh uint64, before string, prev uint64, ok, pair bool) {
	k := hashKey(sh)
	s := m.segs.Update(k, func(s segState) segState {
		valueBit(&s.after, before) // by maphash: FNV's bits follow a last byte changed too little
		return s
	})
	if !s.appended() || !ok {
		return
	}
	pk := hashKey(prev)
	if p, ok := m.segs.Peek(pk); !ok || !p.appended() {
		return
	}
	m.nextTo(authority, k, false, pair)
	m.nextTo(authority, pk, true, pair)
}

// nextTo notes that the appended unit k (a pair, or a segment) of the
// paths of authority was seen before another appended unit (before) or
// after one, and learns it a modifier once it has been seen both ways.
func (m *modifiers) nextTo(authority, k string, before, pair bool) {
	s := m.segs.Update(k, func(s segState) segState {
		if before {
			s.right = true
		} else {
			s.left = true
		}
		return s
	})
	if !s.left || !s.right {
		return
	}
	if _, ok := m.learnt.Get(k); !ok {
		m.learnt.Update(k, func(bool) bool { return true })
		note := uint8(hostModifiers)
		if pair {
			note |= hostPairs
		}
		m.hosts.Update(authority, func(n uint8) uint8 { return n | note })
		m.any.Store(true)
	}
}

// family returns the path family of a URL without a query or a date: a
// hash of its scheme, host and the segments of its path that are not
// modifiers, or none when all are not.
func (m *modifiers) family(scheme, authority, path string) family {
	if m == nil || !m.any.Load() {
		return family{}
	}
	note, ok := m.hosts.Peek(authority)
	if m.legacy.Load() {
		note, ok = hostModifiers|hostPairs, true
	}
	if !ok {
		return family{} // a host without modifiers: no look-up a segment
	}
	h := fnvString(fnvString(fnvString(fnvOffset, scheme), "://"), authority)
	hh := hostHash(authority)
	pairs := note&hostPairs != 0
	found := false
	var name string // a segment held back: the name of a pair, maybe
	var nameMod bool
	for seg := range strings.SplitSeq(strings.Trim(path, "/"), "/") {
		if name != "" {
			if m.learntHash(pairHash(hh, name, seg)) {
				found, name = true, ""
				continue
			}
			if nameMod {
				found = true
			} else {
				h = fnvString(fnvByte(h, '/'), name)
			}
			name = ""
		}
		mod := canModify(seg) && m.learntHash(segHash(hh, seg))
		switch {
		case pairs && canModify(seg):
			name, nameMod = seg, mod
		case mod:
			found = true
		default:
			h = fnvString(fnvByte(h, '/'), seg)
		}
	}
	if name != "" {
		if nameMod {
			found = true
		} else {
			h = fnvString(fnvByte(h, '/'), name)
		}
	}
	if !found {
		return family{}
	}
	return family{kind: pathFamily, hash: fnvByte(h, 'm')}
}

// nextInPath reports whether u, linked from via, is via's path with one
// segment's number changed, and no query: a listing's next page
// (/c/shoes/page-3/ from /c/shoes/page-2/, /color-red/page/3/ from
// /color-red/page/2/).
func nextInPath(u canon.URL, via string) bool {
	path, q, ok := pathQuery(u.Authority, via)
	if !ok || q != "" || u.Query != "" || path == u.Path || strings.Count(path, "/") != strings.Count(u.Path, "/") {
		return false
	}
	a, b := u.Path, path
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	j := 0
	for j < len(a)-i && j < len(b)-i && a[len(a)-1-j] == b[len(b)-1-j] {
		j++
	}
	// Back to the whole number: page-12 from page-13 shares the 1.
	for i > 0 && a[i-1] >= '0' && a[i-1] <= '9' {
		i--
	}
	for j > 0 && a[len(a)-j] >= '0' && a[len(a)-j] <= '9' {
		j--
	}
	return smallNumber(a[i:len(a)-j]) && smallNumber(b[i:len(b)-j])
}

// The modifiers in the store: each one's key, 8 bytes.
const metaPathModifiers = "trapcounts/modifiers"

// marshal encodes the modifiers in memory.
func (m *modifiers) marshal() []byte {
	var out []byte
	m.learnt.Each(func(k string, _ bool) { out = append(out, k...) })
	return out
}

// unmarshal reads back what marshal wrote.
func (m *modifiers) unmarshal(v []byte) error {
	if len(v)%8 != 0 {
		return errFamilies
	}
	for ; len(v) > 0; v = v[8:] {
		m.learnt.Update(string(v[:8]), func(bool) bool { return true })
		m.any.Store(true)
	}
	return nil
}

// The hosts with modifiers in the store: for each, what hosts notes of it
// (a byte) and its authority, then '\n'.
const metaModifierHosts = "trapcounts/modifier-hosts"

// marshalHosts encodes the hosts with modifiers in memory.
func (m *modifiers) marshalHosts() []byte {
	var out []byte
	m.hosts.Each(func(host string, note uint8) {
		out = append(append(append(out, note), host...), '\n')
	})
	return out
}

// unmarshalHosts reads back what marshalHosts wrote; without it (ok
// false: a store of an older build), any host may have modifiers.
func (m *modifiers) unmarshalHosts(v []byte, ok bool) error {
	if !ok {
		m.legacy.Store(m.any.Load())
		return nil
	}
	for len(v) > 0 {
		i := bytes.IndexByte(v, '\n')
		if i < 1 {
			m.legacy.Store(m.any.Load())
			return errFamilies
		}
		note, host := v[0], string(v[1:i])
		m.hosts.Update(host, func(n uint8) uint8 { return n | note })
		v = v[i+1:]
	}
	return nil
}

// learntHash reports whether the unit of hash h (segHash, pairHash) is a
// modifier.
func (m *modifiers) learntHash(h uint64) bool {
	_, ok := m.learnt.Peek(hashKey(h))
	return ok
}
