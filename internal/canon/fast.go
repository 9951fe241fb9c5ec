package canon

import (
	"strings"
)

// The fast path resolves the links most pages are made of (an absolute
// http or https URL with a plain host name, a path from the root, a path
// relative to the page, a query or a fragment, all in printable ASCII)
// without the WHATWG parser, which spends most of a resolution building
// and cloning its URL structure. It implements the parser's own steps for
// exactly those inputs (the special-scheme path state with its dot
// segments, the default ports, the percent-encode sets, which leave every
// byte it accepts as it is) and gives up on anything else: user info, a
// backslash, a space or control, a byte above 0x7e, a byte the parser
// would percent-encode, a host that is not lower-cased ASCII letters,
// digits, hyphens and dots, that ends in a number or a dot, or that is
// punycode, unless it is an IPv4 address as the parser writes one.
// TestFastPathAgrees and FuzzFastPath hold it to the parser's
// results.

// fastBase is what the fast path needs of a base URL: an http or https
// URL, as the WHATWG parser serialised it.
type fastBase struct {
	scheme string   // "http" or "https"
	host   string   // as the parser gave it (lower case, punycode, IP literal)
	ip     bool     // host is an IP address: its dots are kept
	port   string   // "" when the default
	path   []string // the path's segments, percent-encoded as the parser left them
	query  string   // without "?"; "" when none or empty

	// What a reference without an authority or a path reuses, so that
	// resolving it allocates no copy of them.
	pathname  string // "/" and path joined by "/"
	chost     string // host as canonical wants it
	authority string // chost, and ":port" if any
}

// pathByte and queryByte tell the bytes the fast path takes as they are,
// in a path and in a query: the printable ASCII that the parser's path
// and special-query percent-encode sets leave alone, less the backslash
// (a slash to the parser, in a path) and what starts another part.
var pathByte, queryByte [256]bool

func init() {
	for b := 0x21; b <= 0x7e; b++ {
		switch b {
		case '"', '#', '<', '>', '`', '{', '}', '\\':
			continue
		}
		queryByte[b] = b != '\''
		pathByte[b] = b != '?'
	}
}

// newFastBase returns the fast path's view of a parsed base, or nil when
// the base is not an http or https URL with a host.
func newFastBase(scheme, host, port, pathname, query string, ip bool) *fastBase {
	if (scheme != "http" && scheme != "https") || host == "" || !strings.HasPrefix(pathname, "/") {
		return nil
	}
	fb := &fastBase{scheme: scheme, host: host, ip: ip, port: port, path: strings.Split(pathname[1:], "/"), query: query}
	fb.pathname = joinPath(fb.path)
	fb.chost = trimFastHost(host, ip)
	fb.authority = fb.chost
	if port != "" {
		fb.authority += ":" + port
	}
	return fb
}

// fastResolve resolves ref against b when the fast path can, and reports
// whether it could. ref has passed Canonicalizer.check.
func (c *Canonicalizer) fastResolve(b *fastBase, ref string) (URL, bool) {
	p, ok := fastParts(b, ref)
	if !ok {
		return URL{}, false
	}
	host := trimFastHost(p.host, p.ip)
	authority := b.authority
	if host != b.chost || p.port != b.port {
		authority = "" // buildWith joins host and port
	}
	return c.buildWith(p.scheme, host, p.port, authority, p.path, p.query), true
}

// fastURL is a URL as the parser serialises it, in parts.
type fastURL struct {
	scheme, host, port string // host as fastBase.host; port "" when the default
	path, query        string // query without "?"; "" when none or empty
	ip                 bool   // host is an IP address
}

// absolute is the base against which the fast path parses an absolute
// URL: an http or https URL with an authority takes nothing from its
// base, and this one has nothing to give.
var absolute = &fastBase{}

// fastAbsolute parses the absolute URL raw when the fast path can: an
// http or https URL with an authority, which the parser would not need a
// base for either.
func fastAbsolute(raw string) (fastURL, bool) {
	if !hasHTTPScheme(raw) || !strings.HasPrefix(raw[strings.IndexByte(raw, ':')+1:], "//") {
		return fastURL{}, false
	}
	return fastParts(absolute, raw)
}

// fastParts resolves ref against b as the parser would, when the fast
// path can, and gives the result's parts as the parser serialises them.
func fastParts(b *fastBase, ref string) (fastURL, bool) {
	// What follows "#" is dropped whatever it holds.
	if i := strings.IndexByte(ref, '#'); i >= 0 {
		ref = ref[:i]
	}
	scheme, host, port, ip := b.scheme, b.host, b.port, b.ip
	rest := ref
	newAuth := true // ref names its own host
	switch {
	case strings.HasPrefix(rest, "//"):
		var ok bool
		if host, port, rest, ip, ok = fastAuthority(scheme, rest[2:]); !ok {
			return fastURL{}, false
		}
	case hasHTTPScheme(rest):
		i := strings.IndexByte(rest, ':')
		scheme = strings.ToLower(rest[:i])
		if !strings.HasPrefix(rest[i+1:], "//") {
			return fastURL{}, false // "http:x": relative to a base of the same scheme, or not; the parser decides
		}
		var ok bool
		if host, port, rest, ip, ok = fastAuthority(scheme, rest[i+3:]); !ok {
			return fastURL{}, false
		}
	default:
		if colonBeforeSlash(rest) {
			return fastURL{}, false // another scheme, or a "c:" that may be one
		}
		newAuth = false
	}
	pathPart, query, hasQuery := strings.Cut(rest, "?")
	for i := 0; i < len(pathPart); i++ {
		if !pathByte[pathPart[i]] {
			return fastURL{}, false
		}
	}
	for i := 0; i < len(query); i++ {
		if !queryByte[query[i]] {
			return fastURL{}, false
		}
	}
	// The path: most are from the root with no dot segment, and are
	// their own result; the segments of the others are gathered in buf.
	var buf [32]string
	var path string
	switch {
	case newAuth && pathPart == "":
		path = "/" // an authority without a path
	case strings.HasPrefix(pathPart, "/"):
		if hasDotSegment(pathPart) {
			path = joinPath(fastPath(buf[:0], pathPart, true))
		} else {
			path = pathPart
		}
	case pathPart == "":
		// "?q" or "" (a fragment only): the base's path; its query unless
		// one is given.
		path = b.pathname
		if !hasQuery {
			query = b.query
		}
	default:
		segs := append(buf[:0], b.path[:len(b.path)-1]...)
		path = joinPath(fastPath(segs, pathPart, false))
	}
	return fastURL{scheme: scheme, host: host, port: port, path: path, query: query, ip: ip}, true
}

// hasDotSegment reports whether a path from the root has a segment that
// fastPath resolves ("." or "..", also as "%2e"), so that its result is
// not the path itself.
func hasDotSegment(p string) bool {
	for i := 0; i < len(p); { // p[i] is a '/'
		seg := p[i+1:]
		if j := strings.IndexByte(seg, '/'); j >= 0 {
			seg = seg[:j]
		}
		if isSingleDot(seg) || isDoubleDot(seg) {
			return true
		}
		i += 1 + len(seg)
	}
	return false
}

// hasHTTPScheme reports whether s starts with "http:" or "https:", in any
// case.
func hasHTTPScheme(s string) bool {
	return len(s) >= 5 && strings.EqualFold(s[:5], "http:") || len(s) >= 6 && strings.EqualFold(s[:6], "https:")
}

// colonBeforeSlash reports whether a ":" comes before the first "/", "?"
// or the end: a reference that may start with a scheme.
func colonBeforeSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':':
			return true
		case '/', '?':
			return false
		}
	}
	return false
}

// fastAuthority reads host[:port] at the start of s, up to "/", "?" or the
// end, and returns them as the parser would (the host lower-cased, the
// port without leading zeros, "" when the scheme's default) with the rest
// of s, and whether the host is an IP address. It gives up on anything but
// a plain ASCII host name or an IPv4 address as the parser writes one.
func fastAuthority(scheme, s string) (host, port, rest string, ip, ok bool) {
	end := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '/' || s[i] == '?' {
			end = i
			break
		}
	}
	auth, rest := s[:end], s[end:]
	host, port, hasPort := strings.Cut(auth, ":")
	if !plainHost(host) {
		if !dottedQuad(host) {
			return "", "", "", false, false
		}
		ip = true
	}
	if hasPort {
		var ok bool
		if port, ok = fastPort(scheme, port); !ok {
			return "", "", "", false, false
		}
	}
	return strings.ToLower(host), port, rest, ip, true
}

// dottedQuad reports whether h is an IPv4 address as the parser writes
// one: four decimal numbers up to 255, none with a leading zero. The
// parser also reads other spellings of an address (hexadecimal, octal,
// fewer parts) and writes them in this form; those are left to it.
func dottedQuad(h string) bool {
	for part := range 4 {
		n, digits := 0, 0
		for digits < len(h) && '0' <= h[digits] && h[digits] <= '9' {
			n = n*10 + int(h[digits]-'0')
			digits++
		}
		if digits == 0 || digits > 3 || n > 255 || digits > 1 && h[0] == '0' {
			return false
		}
		h = h[digits:]
		if part == 3 {
			return h == ""
		}
		if h == "" || h[0] != '.' {
			return false
		}
		h = h[1:]
	}
	return false
}

// plainHost reports whether h is a host name the parser takes as it is,
// but for case: labels of ASCII letters, digits and hyphens, none empty,
// none punycode, the last not a number (which would make an IPv4
// address) and no trailing dot.
func plainHost(h string) bool {
	if h == "" {
		return false
	}
	start := 0
	for i := 0; i <= len(h); i++ {
		if i < len(h) && h[i] != '.' {
			c := h[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
			continue
		}
		label := h[start:i]
		if label == "" || len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
			return false
		}
		if i == len(h) && isNumberLabel(label) {
			return false
		}
		start = i + 1
	}
	return true
}

// fastPort returns the port p as the parser serialises it: without
// leading zeros, "" when the scheme's default or empty; false when it is
// not a number up to 65535.
func fastPort(scheme, p string) (string, bool) {
	if p == "" {
		return "", true
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return "", false
		}
		if n = n*10 + int(p[i]-'0'); n > 65535 {
			return "", false
		}
	}
	if scheme == "http" && n == 80 || scheme == "https" && n == 443 {
		return "", true
	}
	p = strings.TrimLeft(p, "0")
	if p == "" {
		p = "0"
	}
	return p, true
}

// fastPath appends the segments of p to segs as the parser's path state
// does for a special URL: "." and ".." (also as "%2e") are resolved, and
// one at the end leaves an empty last segment. abs says p starts with "/".
func fastPath(segs []string, p string, abs bool) []string {
	if abs {
		p = p[1:]
	}
	for {
		seg, rest, more := strings.Cut(p, "/")
		switch {
		case isDoubleDot(seg):
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
			if !more {
				segs = append(segs, "")
			}
		case isSingleDot(seg):
			if !more {
				segs = append(segs, "")
			}
		default:
			segs = append(segs, seg)
		}
		if !more {
			return segs
		}
		p = rest
	}
}

func isSingleDot(s string) bool { return s == "." || strings.EqualFold(s, "%2e") }

func isDoubleDot(s string) bool {
	switch len(s) {
	case 2:
		return s == ".."
	case 4:
		return strings.EqualFold(s, ".%2e") || strings.EqualFold(s, "%2e.")
	case 6:
		return strings.EqualFold(s, "%2e%2e")
	}
	return false
}

// joinPath is "/" and the segments joined by "/", built in one allocation.
func joinPath(segs []string) string {
	n := len(segs)
	for _, s := range segs {
		n += len(s)
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(s)
	}
	if len(segs) == 0 {
		b.WriteByte('/')
	}
	return b.String()
}

// trimFastHost is the host canonical would give: trailing dots of a
// domain trimmed (a base's; a reference's host has none).
func trimFastHost(host string, ip bool) string {
	if ip {
		return host
	}
	return trimHostDots(host)
}
