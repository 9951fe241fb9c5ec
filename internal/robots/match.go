package robots

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	"github.com/weft-crawler/weft/internal/pct"
)

// ruleSet is a policy's rules in match order, and their literals.
type ruleSet struct {
	rules []rule
	lits  []lit  // the rules' literals, each rule's in a run
	arena []byte // the literals' bytes
}

// rule is one Allow or Disallow pattern in comparison form.
type rule struct {
	prio     int32  // length of the pattern in comparison form, '*' and '$' included
	minLen   int32  // the sum of its literals' lengths: no shorter path can match
	first, n uint32 // its literals: lits[first:first+n], the pattern's literals between '*'s
	allow    bool   // Allow rather than Disallow
	anchored bool   // the pattern ended in '$': it must match the whole path
}

// lit is a literal of a pattern: arena[off:end]. A rule's first must be a
// prefix of the path (it is empty when the pattern starts with '*').
type lit struct{ off, end uint32 }

// lit returns literal i.
func (rs *ruleSet) lit(i uint32) []byte {
	l := rs.lits[i]
	return rs.arena[l.off:l.end:l.end]
}

// prefix returns r's first literal, which a path it matches starts with.
func (rs *ruleSet) prefix(r *rule) []byte { return rs.lit(r.first) }

// Allowed reports whether the URL with this path and query may be fetched.
// pathAndQuery is the URL's path plus "?query" if any, as it appears in the
// (percent-encoded) URL; a missing leading '/' is supplied and a "#fragment"
// is ignored. /robots.txt itself is always allowed (RFC 9309 §2.2.2).
//
// Rule and URL are compared in RFC 9309 §2.2.2's form: an octet compares
// equal whether or not it is %-encoded, except the reserved characters of
// RFC 3986 (":/?#[]@!$&'()*+,;="), for which "/" and "%2F" stay distinct;
// hex digits compare case-insensitively; non-ASCII octets and octets that
// may not appear raw in a URL (space, '"', '<', control characters, a '%'
// that starts no escape) compare as their %-escapes.
//
// Allowed does not allocate for a path of up to 512 bytes in comparison
// form, and is safe for concurrent use.
func (p *Policy) Allowed(pathAndQuery string) bool {
	if p == nil {
		return false
	}
	if p.Outcome == NoRules {
		return true
	}
	var buf [512]byte
	path := canonPath(buf[:0], pathAndQuery)
	if isRobotsTxt(path) {
		return true
	}
	if p.Outcome != Rules {
		return false
	}
	var i int
	if p.index != nil {
		i = p.index.first(&p.ruleSet, path)
	} else {
		i = p.firstMatch(path)
	}
	return i < 0 || p.rules[i].allow
}

// firstMatch returns the index of the first rule that matches path, -1 if
// none does: with rules in compile's order, the one that decides.
func (rs *ruleSet) firstMatch(path []byte) int {
	for i := range rs.rules {
		if rs.matches(&rs.rules[i], path) {
			return i
		}
	}
	return -1
}

// indexMin is the number of rules from which a Policy builds an index: below
// it, trying every rule in order is as fast (BenchmarkAllowed*).
const indexMin = 64

// prefixIndex finds the rules whose leading literal (prefix) is a prefix
// of a path without trying every rule: only those can match. Rules are
// grouped by the length of that literal; within a group they are sorted by
// it, then by rule index, so for each length no longer than the path one
// binary search finds the candidates, in rule order. A file of 2,000 rules
// has a few dozen lengths, so a lookup costs a few dozen searches instead of
// 2,000 tries.
type prefixIndex struct {
	groups []prefixGroup // by n, ascending
}

type prefixGroup struct {
	n     int     // the length of the prefix of every rule in the group
	rules []int32 // rule indices, sorted by (prefix, index)
}

func newPrefixIndex(rs *ruleSet) *prefixIndex {
	rules := rs.rules
	order := make([]int32, len(rules))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		pa, pb := rs.prefix(&rules[a]), rs.prefix(&rules[b])
		if c := cmp.Compare(len(pa), len(pb)); c != 0 {
			return c
		}
		if c := bytes.Compare(pa, pb); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	x := &prefixIndex{}
	for start := 0; start < len(order); {
		n := len(rs.prefix(&rules[order[start]]))
		end := start + 1
		for end < len(order) && len(rs.prefix(&rules[order[end]])) == n {
			end++
		}
		x.groups = append(x.groups, prefixGroup{n: n, rules: order[start:end:end]})
		start = end
	}
	return x
}

// first is firstMatch, through the index.
func (x *prefixIndex) first(rs *ruleSet, path []byte) int {
	rules := rs.rules
	best := -1
	for _, g := range x.groups {
		if g.n > len(path) {
			break
		}
		key := path[:g.n]
		lo, hi := 0, len(g.rules)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if bytes.Compare(rs.prefix(&rules[g.rules[m]]), key) < 0 {
				lo = m + 1
			} else {
				hi = m
			}
		}
		for _, ri := range g.rules[lo:] {
			r := &rules[ri]
			if best >= 0 && int(ri) > best || !bytes.Equal(rs.prefix(r), key) {
				break
			}
			if rs.matches(r, path) {
				best = int(ri)
				break
			}
		}
	}
	return best
}

// isRobotsTxt reports whether the comparison-form path names /robots.txt,
// with or without a query.
func isRobotsTxt(path []byte) bool {
	const name = "/robots.txt"
	return len(path) >= len(name) && string(path[:len(name)]) == name &&
		(len(path) == len(name) || path[len(name)] == '?')
}

// matches reports whether the rule's pattern matches the path.
func (rs *ruleSet) matches(r *rule, path []byte) bool {
	first := rs.prefix(r)
	if len(path) < int(r.minLen) || !bytes.HasPrefix(path, first) {
		return false
	}
	if r.n == 1 {
		return !r.anchored || len(path) == len(first)
	}
	// Each inner literal is matched at its leftmost position after the
	// previous one: no later position could let the rest match where the
	// leftmost does not. This is linear in the path per literal, where
	// grobotstxt's position-set matcher allocates per call.
	lastLit := rs.lit(r.first + r.n - 1)
	if r.anchored && !bytes.HasSuffix(path, lastLit) {
		return false // cheap, and the usual reason "*.pdf$" fails
	}
	pos := len(first)
	for i := r.first + 1; i < r.first+r.n-1; i++ {
		s := rs.lit(i)
		j := bytes.Index(path[pos:], s)
		if j < 0 {
			return false
		}
		pos += j + len(s)
	}
	if r.anchored {
		return len(path)-pos >= len(lastLit) && bytes.HasSuffix(path, lastLit)
	}
	return bytes.Index(path[pos:], lastLit) >= 0
}

// canonPath appends the comparison form of a URL's path and query to dst,
// without the fragment and with a leading '/'.
func canonPath(dst []byte, pathAndQuery string) []byte {
	if i := strings.IndexByte(pathAndQuery, '#'); i >= 0 {
		pathAndQuery = pathAndQuery[:i]
	}
	if pathAndQuery == "" || pathAndQuery[0] != '/' {
		dst = append(dst, '/')
	}
	return appendCanon(dst, pathAndQuery)
}

// Octets kept as they are in comparison form: RFC 3986's unreserved
// (ALPHA DIGIT "-._~") and reserved (":/?#[]@!$&'()*+,;=") characters.
// Bit c of plainLo is octet c; bit c-64 of plainHi is octet c.
const (
	plainLo uint64 = 1<<'!' | 1<<'#' | 1<<'$' | 1<<'&' | 1<<'\'' | 1<<'(' | 1<<')' |
		1<<'*' | 1<<'+' | 1<<',' | 1<<'-' | 1<<'.' | 1<<'/' | (1<<10-1)<<'0' |
		1<<':' | 1<<';' | 1<<'=' | 1<<'?'
	plainHi uint64 = 1<<('@'-64) | (1<<26-1)<<('A'-64) | 1<<('['-64) | 1<<(']'-64) |
		1<<('_'-64) | (1<<26-1)<<('a'-64) | 1<<('~'-64)
)

func isPlain(c byte) bool {
	if c < 64 {
		return plainLo>>c&1 != 0
	}
	return c < 128 && plainHi>>(c-64)&1 != 0
}

const upperHex = "0123456789ABCDEF"

// appendCanon appends the RFC 9309 §2.2.2 comparison form of s to dst:
// %-escapes of unreserved octets are decoded ("%7E" → "~"), other escapes
// get upper-case hex ("%2f" → "%2F"), and every octet that is neither
// unreserved nor reserved is escaped (non-ASCII, space, '"', '<', '>', '\',
// '^', '`', '{', '|', '}', controls, and a '%' that starts no escape). The
// form is idempotent, and '*' and '$', being reserved, survive in patterns.
func appendCanon(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && isPlain(s[j]) {
			j++
		}
		dst = append(dst, s[i:j]...)
		if j == len(s) {
			break
		}
		c := s[j]
		if c == '%' && j+2 < len(s) {
			if v, ok := pct.Decode(s[j+1], s[j+2]); ok {
				if pct.IsUnreserved(v) {
					dst = append(dst, v)
				} else {
					dst = append(dst, '%', upperHex[v>>4], upperHex[v&15])
				}
				i = j + 3
				continue
			}
		}
		dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		i = j + 1
	}
	return dst
}
