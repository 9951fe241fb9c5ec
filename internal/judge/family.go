package judge

import (
	"encoding/binary"
	"strings"

	"github.com/weft-crawler/weft/internal/canon"
)

// A URL family is what a faceted search or a calendar generates: the URLs
// of one scheme, host and path that differ only in their query (a query
// family), or the URLs of one host whose paths differ only in their
// date-like segments (a run of them standing for one date, whatever its
// precision), or whose query carries a date (a date family). The
// trap budget (budget.go) bounds each family by what its pages are worth.

// famKind is the kind of a URL's family.
type famKind uint8

const (
	noFamily famKind = iota
	queryFamily
	dateFamily
	pathFamily
)

// family names a URL's family: its kind and a hash of its scheme, host,
// and path with the date-like segments replaced (and, for a query family,
// the mark of a query). The zero family is none.
type family struct {
	kind famKind
	hash uint64
}

func (f family) none() bool { return f.kind == noFamily }

// FNV-1a, 64 bits: a family's key is hashed as its URL is read, without
// building it; two families share one in about 2^32.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func fnvByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

// hashKey is a hash as a key of 8 bytes, for the judge's bounded maps.
func hashKey(h uint64) string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], h)
	return string(b[:])
}

// familyOf returns the family of u, or none.
func (b *budgets) familyOf(u canon.URL) family {
	return b.familyOfParts(u.Scheme, u.Authority, u.Path, u.Query)
}

// familyOfParts is familyOf of a URL's parts: its query or date family,
// else its path family.
func (b *budgets) familyOfParts(scheme, authority, path, query string) family {
	if f := familyOfParts(scheme, authority, path, query); !f.none() || b == nil {
		return f
	}
	return b.mods.family(scheme, authority, path)
}

// familyOfString returns the family of a canonical URL given as a string
// (a page's, as a link's Via names it), or none when it does not split
// into scheme, authority, path and query.
func (b *budgets) familyOfString(raw string) family {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return family{}
	}
	rest, _, _ = strings.Cut(rest, "#")
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		return b.familyOfParts(scheme, rest, "/", "")
	}
	authority, pq := rest[:end], rest[end:]
	path, query, _ := strings.Cut(pq, "?")
	if path == "" {
		path = "/"
	}
	return b.familyOfParts(scheme, authority, path, query)
}

// inLink reports whether via, a page's URL given as a string, is on u's
// host and of another family than fam, u's, or of its family but of
// another kind (otherKind: a front controller's post, /?p=12, linked from
// one of its categories, /?cat=3): a link into the family from elsewhere
// on its host, which the trap budget does not count (budget.go) and only
// a wall holds (walls.go).
func (b *budgets) inLink(u canon.URL, fam family, via string) bool {
	if splitAuthority(via) != u.Authority {
		return false
	}
	if b.familyOfString(via) != fam {
		return true
	}
	_, q, _ := pathQuery(u.Authority, via)
	return fam.kind == queryFamily && otherKind(u.Query, q)
}

// otherKind reports whether two queries of one path, both set, share no
// parameter name: pages of two kinds that one script serves (WordPress's
// plain links: a post, ?p=12, a category, ?cat=3, a page of the blog,
// ?paged=2), not one page's variants, which a faceted search's are (a
// filter set, changed or dropped, ?color=red to ?color=red&size=m, keeps
// a name). Without it, a blog whose every URL is "/" and a query was one
// family, held once its budget was spent: 76 of 300 posts fetched.
func otherKind(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	for name := range canon.Params(a) {
		if _, in := canon.ParamValue(b, name); in {
			return false
		}
	}
	return true
}

// nextOf reports whether u, linked from via, is via with one parameter's
// number changed (a number of six digits at most), and nothing else: the
// next page of a listing (?page=3 from ?page=2, ?color=red&page=3 from
// ?color=red&page=2), the next post (?p=13 from ?p=12). A faceted
// search's variants set words (barren.go).
func nextOf(u canon.URL, via string) bool {
	path, q, ok := pathQuery(u.Authority, via)
	if !ok || path != u.Path {
		return false
	}
	_, value, was, ok := oneChanged(u.Query, q)
	return ok && smallNumber(value) && smallNumber(was)
}

// oneChanged returns the one parameter of query q whose value differs
// from query p's, with both values, when nothing else differs: the same
// names, one value changed (nextOf, barren.another).
func oneChanged(q, p string) (name, value, was string, ok bool) {
	if q == "" || p == "" || strings.Count(q, "&") != strings.Count(p, "&") {
		return "", "", "", false
	}
	for n, v := range canon.Params(q) {
		w, in := canon.ParamValue(p, n)
		switch {
		case in && w == v:
		case ok || !in:
			return "", "", "", false
		default:
			name, value, was, ok = n, v, w, true
		}
	}
	return name, value, was, ok
}

// pathQuery returns the path and the query of via, a URL given as a
// string, when it is on authority.
func pathQuery(authority, via string) (path, query string, ok bool) {
	_, rest, _ := strings.Cut(via, "://")
	rest, ok = strings.CutPrefix(rest, authority)
	if !ok || rest != "" && rest[0] != '/' && rest[0] != '?' && rest[0] != '#' {
		return "", "", false
	}
	rest, _, _ = strings.Cut(rest, "#")
	path, query, _ = strings.Cut(rest, "?")
	if path == "" {
		path = "/"
	}
	return path, query, true
}

// smallNumber reports whether s is a number of at most six digits: a
// page, a post's id, not a timestamp or a counter that a cache-buster or
// a session puts in every link.
func smallNumber(s string) bool { return len(s) <= 6 && canon.IsNumber(s) }

// placeholder stands for a date-like segment in a date family's key.
const placeholder = "\x00d"

// familyOfParts is the family of a URL's parts that its text alone
// tells: a date family when its path has date-like segments or its query
// a date-like parameter; else a query family when it has a query; else
// none.
func familyOfParts(scheme, authority, path, query string) family {
	h := fnvString(fnvString(fnvString(fnvOffset, scheme), "://"), authority)
	// The path, segment by segment, each run of date-like ones written as
	// one placeholder: a date is written whole, or as a year, its month
	// and maybe its day. A calendar's months and its days are then one
	// family (/cal/2026/11/ and /cal/2026/11/05/), so that its months do
	// not grow on the days they lead to.
	dated, run, prev := false, 0, false // run: the segments of a year, month, day run the last one ended; prev: the last one was a date
	rest, _ := strings.CutPrefix(path, "/")
	seg, rest, more := strings.Cut(rest, "/")
	for {
		var next string
		if more {
			next, _, _ = strings.Cut(rest, "/")
		}
		date := true
		switch {
		case isWholeDate(seg):
			run = 0
		case run == 1: // the month after a year (a run starts only with one)
			run = 2
		case run == 2 && isNumberIn(seg, 1, 31):
			run = 3
		case isYear(seg) && more && isNumberIn(next, 1, 12):
			run = 1
		default:
			date, run = false, 0
		}
		switch {
		case date && prev: // the run goes on
		case date:
			h, dated = fnvString(fnvByte(h, '/'), placeholder), true
		default:
			h = fnvString(fnvByte(h, '/'), seg)
		}
		prev = date
		if !more {
			break
		}
		seg, rest, more = strings.Cut(rest, "/")
	}
	inQuery := dateInQuery(query)
	switch {
	case dated || inQuery:
		h = fnvByte(h, 'd')
		if inQuery {
			h = fnvString(h, "?"+placeholder)
		}
		return family{kind: dateFamily, hash: h}
	case query != "":
		return family{kind: queryFamily, hash: fnvByte(h, '?')}
	}
	return family{}
}

// isYear: four digits. A year alone is as often an id (/product/2019) as
// a year; it makes a date only with a month after it, or within a date
// written whole.
func isYear(s string) bool { return len(s) == 4 && canon.IsNumber(s) }

// isNumberIn: one or two digits, from lo to hi.
func isNumberIn(s string, lo, hi int) bool {
	if len(s) == 0 || len(s) > 2 || !canon.IsNumber(s) {
		return false
	}
	n := int(s[0] - '0')
	if len(s) == 2 {
		n = n*10 + int(s[1]-'0')
	}
	return n >= lo && n <= hi
}

// isWholeDate reports a segment or a value that is a date written whole,
// an extension aside: 2026-11-05, 2026-11, 2026_11_05, 2026.11.05,
// 05-11-2026, 11-05-2026, 20261105 (a year from 1900 to 2100: eight
// digits are as often a number).
func isWholeDate(s string) bool {
	if i := strings.LastIndexByte(s, '.'); i > 0 && !canon.IsNumber(s[i+1:]) {
		s = s[:i] // .html
	}
	if len(s) == 8 && canon.IsNumber(s) {
		y := int(s[0]-'0')*1000 + int(s[1]-'0')*100 + int(s[2]-'0')*10 + int(s[3]-'0')
		return y >= 1900 && y <= 2100 && isNumberIn(s[4:6], 1, 12) && isNumberIn(s[6:8], 1, 31)
	}
	var parts [3]string
	n := 0
	sep := byte(0)
	for start, i := 0, 0; i <= len(s); i++ {
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			continue
		}
		if n == len(parts) || i == start {
			return false
		}
		parts[n] = s[start:i]
		n++
		if i < len(s) {
			switch c := s[i]; {
			case c != '-' && c != '_' && c != '.':
				return false
			case sep == 0:
				sep = c
			case c != sep:
				return false
			}
		}
		start = i + 1
	}
	switch {
	case n == 2:
		return isYear(parts[0]) && isNumberIn(parts[1], 1, 12)
	case n != 3:
		return false
	case isYear(parts[0]):
		return isNumberIn(parts[1], 1, 12) && isNumberIn(parts[2], 1, 31)
	case isYear(parts[2]): // day-month-year or month-day-year
		return isNumberIn(parts[0], 1, 31) && isNumberIn(parts[1], 1, 31) &&
			(isNumberIn(parts[0], 1, 12) || isNumberIn(parts[1], 1, 12))
	}
	return false
}

// dateNames are the query parameters whose number is a part of a date.
var dateNames = [...]string{"date", "day", "month", "year", "week", "yr", "mon", "mo", "yy", "mm", "dd", "d", "m", "y"}

// dateInQuery reports a query with a date-like parameter: a value that is
// a date written whole, or a number of up to four digits named as a part
// of a date (?year=2026&month=11).
func dateInQuery(query string) bool {
	for name, value := range canon.Params(query) {
		if isWholeDate(value) {
			return true
		}
		if len(value) > 4 || !canon.IsNumber(value) {
			continue
		}
		for _, d := range dateNames {
			if strings.EqualFold(name, d) {
				return true
			}
		}
	}
	return false
}
