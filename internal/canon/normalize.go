package canon

import (
	"bytes"
	"slices"
	"strings"

	"github.com/weft-crawler/weft/internal/pct"
)

// canonicalPath canonicalises a hierarchical path as serialised by the
// WHATWG parser: "" or "/seg/seg...".
func (c *Canonicalizer) canonicalPath(p string) string {
	if p == "" {
		return "/"
	}
	if strings.IndexByte(p, '%') < 0 && (len(c.pathParams) == 0 || strings.IndexByte(p, ';') < 0) {
		return p // the common case: nothing to do, nothing allocated
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		s = normalizeEscapes(c.stripPathParams(s))
		// The parser resolved dot segments, but removing ";sid=1" from
		// "..;sid=1" or decoding "%2e" in "%2e;sid=1" makes new ones;
		// resolve them as the parser would, or parsing the result again
		// would change it.
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
			continue
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
			continue
		}
		out = append(out, s)
	}
	// out is not empty: the last segment always adds one.
	return "/" + strings.Join(out, "/")
}

// stripPathParams removes the ";name" and ";name=value" parameters of one
// path segment whose name is a session parameter.
func (c *Canonicalizer) stripPathParams(seg string) string {
	i := strings.IndexByte(seg, ';')
	if i < 0 || len(c.pathParams) == 0 {
		return seg
	}
	var b strings.Builder
	b.WriteString(seg[:i])
	changed := false
	for rest := seg[i+1:]; ; {
		param, tail, more := strings.Cut(rest, ";")
		name, _, _ := strings.Cut(param, "=")
		if matchName(name, c.pathParams, nil) {
			changed = true
		} else {
			b.WriteByte(';')
			b.WriteString(param)
		}
		if !more {
			break
		}
		rest = tail
	}
	if !changed {
		return seg
	}
	return b.String()
}

// canonicalQuery strips, normalises and sorts the parameters of query q
// (without "?") and returns the result and its number of parameters.
func (c *Canonicalizer) canonicalQuery(q string) (string, int) {
	if q == "" {
		return "", 0
	}
	var buf [16]string
	params := buf[:0]
	changed := false
	for rest := q; ; {
		param, tail, more := strings.Cut(rest, "&")
		name, _, _ := strings.Cut(param, "=")
		switch {
		case param == "":
			changed = true
		case matchName(name, c.stripParams, c.stripPrefixes):
			changed = true
		default:
			if n := normalizeEscapes(param); n != param {
				param = n
				changed = true
			}
			params = append(params, param)
		}
		if !more {
			break
		}
		rest = tail
	}
	if len(params) > 1 && !slices.IsSortedFunc(params, compareParams) {
		slices.SortFunc(params, compareParams)
		changed = true
	}
	if !changed {
		return q, len(params)
	}
	return strings.Join(params, "&"), len(params)
}

// compareParams orders query parameters by name, then value, then the whole
// parameter (so "a" comes before "a="), comparing escaped bytes.
func compareParams(a, b string) int {
	an, av, _ := strings.Cut(a, "=")
	bn, bv, _ := strings.Cut(b, "=")
	if c := strings.Compare(an, bn); c != 0 {
		return c
	}
	if c := strings.Compare(av, bv); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// matchName reports whether the escaped parameter name, percent-decoded and
// lower-cased, is in names or starts with one of prefixes. It allocates
// nothing for names up to 64 bytes.
func matchName(name string, names map[string]struct{}, prefixes [][]byte) bool {
	if name == "" {
		return false
	}
	var buf [64]byte
	key := buf[:0]
	for i := 0; i < len(name); i++ {
		ch := name[i]
		if ch == '%' && i+2 < len(name) {
			if v, ok := pct.Decode(name[i+1], name[i+2]); ok {
				ch = v
				i += 2
			}
		}
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		key = append(key, ch)
	}
	if _, ok := names[string(key)]; ok {
		return true
	}
	for _, p := range prefixes {
		if bytes.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// normalizeEscapes decodes percent escapes of unreserved characters and
// upper-cases the hex digits of the others. It returns s itself when nothing
// changes.
//
// Malformed escapes ("%zz", a trailing "%") are kept, as WHATWG keeps them,
// and then nothing is decoded: decoding could complete one ("%7%41" would
// become "%7A"), and the result would decode again on the next pass.
func normalizeEscapes(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	decode := !hasMalformedEscape(s[i:])
	var b []byte
	for ; i < len(s); i++ {
		var ch byte
		ok := s[i] == '%' && i+2 < len(s)
		if ok {
			ch, ok = pct.Decode(s[i+1], s[i+2])
		}
		if !ok {
			if b != nil {
				b = append(b, s[i])
			}
			continue
		}
		hi, lo := upperHex(s[i+1]), upperHex(s[i+2])
		switch {
		case decode && pct.IsUnreserved(ch):
			if b == nil {
				b = append(make([]byte, 0, len(s)), s[:i]...)
			}
			b = append(b, ch)
		case hi != s[i+1] || lo != s[i+2]:
			if b == nil {
				b = append(make([]byte, 0, len(s)), s[:i]...)
			}
			b = append(b, '%', hi, lo)
		default:
			if b != nil {
				b = append(b, s[i:i+3]...)
			}
		}
		i += 2
	}
	if b == nil {
		return s
	}
	return string(b)
}

func hasMalformedEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !pct.IsHex(s[i+1]) || !pct.IsHex(s[i+2])) {
			return true
		}
	}
	return false
}

func upperHex(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - ('a' - 'A')
	}
	return c
}
