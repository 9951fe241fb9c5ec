// Package canon resolves links the way a browser does (the WHATWG URL
// Standard) and rewrites them into one canonical form, so that URLs that name
// the same resource compare equal as strings.
//
// The canonical form is the WHATWG serialisation of the URL with these
// changes:
//
//   - user name and password are dropped: a crawler must not send or store
//     credentials found in links;
//   - the fragment is dropped;
//   - the default port of the scheme is dropped (WHATWG does this for
//     http:80, https:443, ws, wss and ftp); other ports are kept, so
//     "http://h:443/" stays as written;
//   - one or more trailing dots of a domain host are dropped
//     ("example.com." becomes "example.com");
//   - an empty hierarchical path becomes "/";
//   - path parameters named in Config.PathSessionParams are removed from
//     every path segment ("/a/b;jsessionid=X" becomes "/a/b"), and dot
//     segments that this uncovers are resolved;
//   - in path and query, percent escapes of unreserved characters
//     (ALPHA, DIGIT, "-", ".", "_", "~"; RFC 3986 §2.3) are decoded and
//     all other escapes are written with upper-case hex digits, so "%7e",
//     "%7E" and "~" are one URL. Characters the WHATWG parser left
//     unescaped stay unescaped;
//   - query parameters named in Config.StripParams or starting with one of
//     Config.StripParamPrefixes are removed (names are compared after
//     percent-decoding, case-insensitively), empty parameters ("a=1&&b=2")
//     are dropped, and the rest are sorted by name, then by value, comparing
//     the bytes of their escaped form. Duplicate names are all kept. "a" and
//     "a=" stay distinct, since servers may tell them apart; "a" sorts first;
//   - a query that ends up empty is written without "?".
//
// Host names are lower-cased and converted to punycode by the WHATWG host
// parser; IPv4 addresses are normalised to dotted decimal and IPv6 addresses
// to their compressed form in brackets. "www." and trailing slashes are left
// alone: whether they matter is for the server's redirects to say.
//
// Canonicalisation is idempotent: parsing a canonical URL again yields the
// same URL.
package canon

import (
	"errors"
	"math"
	"net/netip"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	whatwgerrors "github.com/nlnwa/whatwg-url/errors"
	whatwg "github.com/nlnwa/whatwg-url/url"
)

// Causes of an *Error that the WHATWG parser does not report.
var (
	// ErrEmpty: the input is empty or holds only spaces and control
	// characters.
	ErrEmpty = errors.New("empty url")
	// ErrTooLong: the input, or its canonical form, is longer than
	// Config.MaxLength.
	ErrTooLong = errors.New("url too long")
	// ErrTooManySegments: the input's path has more segments than
	// Config.MaxSegments.
	ErrTooManySegments = errors.New("too many path segments")
)

// Error reports a URL that could not be parsed or resolved.
type Error struct {
	Op   string // "parse" or "resolve"
	URL  string // the input: the absolute URL for parse, the reference for resolve
	Base string // the base URL for resolve; "" for parse
	Err  error  // ErrEmpty or the WHATWG parser's validation error
}

// maxErrURL bounds how much of a URL an error message repeats: links can be
// data: URLs of megabytes.
const maxErrURL = 200

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("canon: ")
	b.WriteString(e.Op)
	b.WriteByte(' ')
	b.WriteString(quoteShort(e.URL))
	if e.Op == "resolve" {
		b.WriteString(" against ")
		b.WriteString(quoteShort(e.Base))
	}
	b.WriteString(": ")
	b.WriteString(reason(e.Err))
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Reason is the cause alone, in lower case, without the URL.
func (e *Error) Reason() string { return reason(e.Err) }

func quoteShort(s string) string {
	if len(s) > maxErrURL {
		cut := maxErrURL
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return `"` + strings.ToValidUTF8(s[:cut], "\uFFFD") + `"...`
	}
	return `"` + strings.ToValidUTF8(s, "\uFFFD") + `"`
}

// reason renders the cause in lower case: the WHATWG library's own messages
// are capitalised sentences prefixed with "Error:".
func reason(err error) string {
	if err == nil {
		return "unknown error"
	}
	t := string(whatwgerrors.Type(err))
	if t == "" {
		return err.Error()
	}
	r, n := utf8.DecodeRuneInString(t)
	t = string(unicode.ToLower(r)) + t[n:]
	if d := whatwgerrors.Description(err); d != "" {
		t += ": " + strings.ToValidUTF8(d, "\uFFFD")
	}
	return t
}

// Config says which parameters canonicalisation removes and which input it
// refuses to parse. For the slices nil selects the default and an empty
// non-nil slice removes nothing. The zero Config is ready to use.
type Config struct {
	// StripParams are query parameter names removed, compared
	// case-insensitively. Nil means DefaultStripParams().
	StripParams []string
	// StripParamPrefixes remove every query parameter whose name starts
	// with one of them, compared case-insensitively. Nil means "utm_".
	StripParamPrefixes []string
	// PathSessionParams are ";name=value" path parameters removed from any
	// path segment, compared case-insensitively. Nil means "jsessionid",
	// "phpsessid" and "sid".
	PathSessionParams []string

	// MaxLength is the longest input, in bytes, that Parse, NewBase and
	// Resolve accept; longer input fails with ErrTooLong before it is
	// parsed, and so does input whose canonical form is longer. Zero means
	// 8192; negative means no limit.
	MaxLength int
	// MaxSegments is the most "/" and "\" (the two of "//host" included)
	// the input may hold before its query or fragment; more fail with
	// ErrTooManySegments before parsing. Zero means 256; negative means no
	// limit. The WHATWG library builds a
	// path in time quadratic in its number of segments (30 ms for 4,000), so
	// a page full of such links would stall a worker; no real site needs
	// hundreds of segments.
	MaxSegments int
}

// Defaults for the zero Config.
const (
	DefaultMaxLength   = 8192
	DefaultMaxSegments = 256
)

// DefaultStripParams returns the query parameters removed when
// Config.StripParams is nil: click identifiers that advertising and analytics
// tools append to links, and session identifiers. None of them names a
// different resource, but each makes links unique and would make a crawler
// fetch one page many times. It returns a new slice on every call.
func DefaultStripParams() []string {
	return []string{
		"gclid",        // Google Ads click ID
		"gclsrc",       // Google Ads click source
		"dclid",        // Google Display & Video 360 click ID
		"gbraid",       // Google Ads click ID for iOS app campaigns
		"wbraid",       // Google Ads click ID for iOS web campaigns
		"_ga",          // Google Analytics client ID (cross-domain linker)
		"_gl",          // Google Analytics cross-domain linker
		"fbclid",       // Facebook click ID
		"igshid",       // Instagram share ID
		"msclkid",      // Microsoft Advertising click ID
		"yclid",        // Yandex Direct click ID
		"twclid",       // X (Twitter) click ID
		"ttclid",       // TikTok click ID
		"li_fat_id",    // LinkedIn first-party ad tracking ID
		"mc_eid",       // Mailchimp subscriber ID
		"mc_cid",       // Mailchimp campaign ID
		"_hsenc",       // HubSpot email tracking
		"_hsmi",        // HubSpot email tracking
		"mkt_tok",      // Marketo email tracking token
		"phpsessid",    // PHP session ID
		"jsessionid",   // Java servlet session ID
		"sid",          // generic session ID
		"sessionid",    // generic session ID
		"aspsessionid", // classic ASP session ID
		"cfid",         // ColdFusion client ID
		"cftoken",      // ColdFusion client token
	}
}

func defaultStripPrefixes() []string { return []string{"utm_"} }

func defaultPathSessionParams() []string { return []string{"jsessionid", "phpsessid", "sid"} }

// Canonicalizer parses, resolves and canonicalises URLs. It is immutable
// after New and safe for concurrent use.
type Canonicalizer struct {
	parser        whatwg.Parser
	stripParams   map[string]struct{} // lower case
	stripPrefixes [][]byte            // lower case
	pathParams    map[string]struct{} // lower case
	maxLength     int                 // negative: no limit
	maxSegments   int                 // negative: no limit
}

// New returns a Canonicalizer for cfg.
func New(cfg Config) *Canonicalizer {
	strip := cfg.StripParams
	if strip == nil {
		strip = DefaultStripParams()
	}
	prefixes := cfg.StripParamPrefixes
	if prefixes == nil {
		prefixes = defaultStripPrefixes()
	}
	pathParams := cfg.PathSessionParams
	if pathParams == nil {
		pathParams = defaultPathSessionParams()
	}
	c := &Canonicalizer{
		// The default options are the WHATWG standard with UTF-8: what a
		// browser does. Everything beyond it is done in canonical.
		parser:      whatwg.NewParser(),
		stripParams: lowerSet(strip),
		pathParams:  lowerSet(pathParams),
		maxLength:   cfg.MaxLength,
		maxSegments: cfg.MaxSegments,
	}
	if c.maxLength == 0 {
		c.maxLength = DefaultMaxLength
	}
	if c.maxSegments == 0 {
		c.maxSegments = DefaultMaxSegments
	}
	for _, p := range prefixes {
		if p != "" {
			c.stripPrefixes = append(c.stripPrefixes, []byte(strings.ToLower(p)))
		}
	}
	return c
}

func lowerSet(names []string) map[string]struct{} {
	m := make(map[string]struct{}, len(names))
	for _, n := range names {
		m[strings.ToLower(n)] = struct{}{}
	}
	return m
}

// URL is a canonical URL and its parts. Compare URLs by String.
type URL struct {
	String    string // the canonical URL
	Scheme    string // lower case, without ":"
	Host      string // lower-case host name in punycode, IPv4 address or bracketed IPv6 address (other schemes: as WHATWG parses it)
	Port      string // "" when default for the scheme
	Authority string // Host, plus ":"+Port when Port != "": the politeness key
	Path      string // canonical path; never empty for http and https
	Query     string // canonical query without "?"; "" if none
	NQuery    int    // number of query parameters after stripping
}

// PathQuery returns the path and, if there is one, "?" and the query: the
// request target of an HTTP request.
func (u URL) PathQuery() string {
	if u.Query == "" {
		return u.Path
	}
	return u.Path + "?" + u.Query
}

// WithoutParams returns u without the query parameters whose (canonical)
// names drop says to drop, and whether it dropped any.
func (u URL) WithoutParams(drop func(name string) bool) (URL, bool) {
	if u.Query == "" {
		return u, false
	}
	q, n, dropped := dropPairs(u.Query, drop)
	if !dropped {
		return u, false
	}
	base := strings.TrimSuffix(u.String, "?"+u.Query)
	u.Query, u.NQuery, u.String = q, n, base
	if q != "" {
		u.String = base + "?" + q
	}
	return u, true
}

// DropParams is WithoutParams for a canonical URL given as a string: raw
// without the query parameters whose names drop says to drop.
func DropParams(raw string, drop func(name string) bool) string {
	base, q, ok := strings.Cut(raw, "?")
	if !ok {
		return raw
	}
	q, _, dropped := dropPairs(q, drop)
	switch {
	case !dropped:
		return raw
	case q == "":
		return base
	}
	return base + "?" + q
}

// dropPairs returns query without the parameters whose names drop says to
// drop, the number left, and whether it dropped any (query as it is when
// it did not).
func dropPairs(query string, drop func(name string) bool) (string, int, bool) {
	found := false
	for pair := range strings.SplitSeq(query, "&") {
		if name, _, _ := strings.Cut(pair, "="); drop(name) {
			found = true
			break
		}
	}
	if !found {
		return query, 0, false
	}
	var b strings.Builder
	n := 0
	for pair := range strings.SplitSeq(query, "&") {
		if name, _, _ := strings.Cut(pair, "="); !drop(name) {
			if n > 0 {
				b.WriteByte('&')
			}
			b.WriteString(pair)
			n++
		}
	}
	return b.String(), n, true
}

// Parse canonicalises the absolute URL raw.
func (c *Canonicalizer) Parse(raw string) (URL, error) {
	if err := c.check(raw); err != nil {
		return URL{}, &Error{Op: "parse", URL: raw, Err: err}
	}
	var out URL
	if p, ok := fastAbsolute(raw); ok {
		// Most URLs parsed are ones the crawl canonicalised itself (its
		// leases, its captures): the fast path gives what the parser would.
		out = c.buildWith(p.scheme, trimFastHost(p.host, p.ip), p.port, "", p.path, p.query)
	} else {
		u, err := c.parser.Parse(raw)
		if err != nil {
			return URL{}, &Error{Op: "parse", URL: raw, Err: err}
		}
		out = c.canonical(u)
	}
	if c.tooLong(out) {
		return URL{}, &Error{Op: "parse", URL: raw, Err: ErrTooLong}
	}
	return out, nil
}

// tooLong reports whether a canonical URL is longer than MaxLength: an
// input within it can grow past it (each invalid UTF-8 byte becomes the
// nine bytes of an escaped U+FFFD, a reference is joined to its base),
// and every URL the crawl keeps must parse again.
func (c *Canonicalizer) tooLong(u URL) bool {
	return c.maxLength >= 0 && len(u.String) > c.maxLength
}

// Resolve resolves the reference ref, as found in a link, against base as a
// browser would, and canonicalises the result. Unlike a browser it rejects an
// empty or blank ref (a browser resolves it to the base itself) with ErrEmpty:
// such a link adds nothing to a crawl.
//
// Resolution starts from the canonical base, which differs from the page's
// own URL only in parts that cannot change the canonical result: the
// fragment, user info, stripped parameters. Use ResolveString to resolve
// against a URL exactly as fetched, and NewBase to resolve many links
// against one page: Resolve parses base anew on every call.
func (c *Canonicalizer) Resolve(base URL, ref string) (URL, error) {
	return c.ResolveString(base.String, ref)
}

// ResolveString is Resolve with a base URL given as a string, which need not
// be canonical: a page's URL as fetched, or its <base href> resolved
// against it.
func (c *Canonicalizer) ResolveString(base, ref string) (URL, error) {
	if err := c.check(ref); err != nil {
		return URL{}, &Error{Op: "resolve", URL: ref, Base: base, Err: err}
	}
	b, err := c.NewBase(base)
	if err != nil {
		return URL{}, &Error{Op: "resolve", URL: ref, Base: base, Err: errors.Unwrap(err)}
	}
	return b.Resolve(ref)
}

// Base is a parsed base URL against which the links of one page are
// resolved. Parsing the base once saves about half the cost of each
// resolution. A Base is safe for concurrent use.
type Base struct {
	c   *Canonicalizer
	raw string
	// fast is the base as the fast path sees it; nil when the base is
	// not one it serves.
	fast *fastBase

	// url is the base as the WHATWG parser gives it, parsed when a
	// reference first needs it (a base the fast path serves is often
	// never needed whole), and never modified after: the parser clones a
	// base before using it.
	once sync.Once
	url  *whatwg.Url
	err  error
}

// NewBase parses the absolute URL raw, as fetched or as given by a page's
// <base href>, for use as a base. raw need not be canonical: links resolve
// against it exactly as a browser would resolve them.
func (c *Canonicalizer) NewBase(raw string) (*Base, error) {
	if err := c.check(raw); err != nil {
		return nil, &Error{Op: "parse", URL: raw, Err: err}
	}
	if p, ok := fastAbsolute(raw); ok {
		return &Base{c: c, raw: raw, fast: newFastBase(p.scheme, p.host, p.port, p.path, p.query, p.ip)}, nil
	}
	b := &Base{c: c, raw: raw}
	u, err := b.parsed()
	if err != nil {
		return nil, &Error{Op: "parse", URL: raw, Err: err}
	}
	b.fast = newFastBase(u.Scheme(), u.Hostname(), u.Port(), u.Pathname(), u.Query(), u.IsIPv4() || u.IsIPv6())
	return b, nil
}

// parsed is the base as the WHATWG parser gives it.
func (b *Base) parsed() (*whatwg.Url, error) {
	b.once.Do(func() {
		b.url, b.err = b.c.parser.Parse(b.raw)
		if b.err == nil {
			// The parser clones the base for each reference, and Clone
			// fills in the lazily built query parameters of the
			// original: build them now, so that concurrent resolutions
			// only read the base.
			b.url.SearchParams()
		}
	})
	return b.url, b.err
}

// Resolve resolves ref against b and canonicalises the result, like
// Canonicalizer.Resolve.
func (b *Base) Resolve(ref string) (URL, error) {
	if err := b.c.check(ref); err != nil {
		return URL{}, &Error{Op: "resolve", URL: ref, Base: b.raw, Err: err}
	}
	if b.fast != nil {
		if out, ok := b.c.fastResolve(b.fast, ref); ok {
			if b.c.tooLong(out) {
				return URL{}, &Error{Op: "resolve", URL: ref, Base: b.raw, Err: ErrTooLong}
			}
			return out, nil
		}
	}
	return b.slowResolve(ref)
}

// slowResolve is Resolve through the WHATWG parser, for every reference:
// the fast path is checked against it.
func (b *Base) slowResolve(ref string) (URL, error) {
	base, err := b.parsed()
	if err != nil {
		// The fast path took the base, and the parser would not: they
		// disagree, which TestFastParseAgrees rules out.
		return URL{}, &Error{Op: "resolve", URL: ref, Base: b.raw, Err: err}
	}
	u, err := b.c.parser.BasicParser(ref, base, nil, whatwg.NoState)
	if err != nil {
		return URL{}, &Error{Op: "resolve", URL: ref, Base: b.raw, Err: err}
	}
	out := b.c.canonical(u)
	if b.c.tooLong(out) {
		return URL{}, &Error{Op: "resolve", URL: ref, Base: b.raw, Err: ErrTooLong}
	}
	return out, nil
}

// check rejects input before the WHATWG parser sees it: blank input, which
// the parser would take as a reference to the base, and input that would
// cost the parser too much.
func (c *Canonicalizer) check(s string) error {
	if c.maxLength >= 0 && len(s) > c.maxLength {
		return ErrTooLong
	}
	if isBlank(s) {
		return ErrEmpty
	}
	if c.maxSegments >= 0 {
		n := 0
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '/', '\\':
				n++
			case '?', '#':
				i = len(s)
			}
		}
		if n > c.maxSegments {
			return ErrTooManySegments
		}
	}
	return nil
}

// isBlank reports whether s holds nothing but what the WHATWG parser strips
// (C0 controls and spaces), i.e. would be parsed as the empty string.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > ' ' {
			return false
		}
	}
	return true
}

// isSpecial reports whether scheme is one of the WHATWG special schemes,
// which always have a host and a hierarchical path.
func isSpecial(scheme string) bool {
	switch scheme {
	case "http", "https", "ws", "wss", "ftp", "file":
		return true
	}
	return false
}

// trimHostDots removes the trailing dots of a domain. It keeps them when the
// domain would then end in a number, which WHATWG reads as an IPv4 address
// ("00.." is a domain, "00" is 0.0.0.0).
func trimHostDots(host string) string {
	h := strings.TrimRight(host, ".")
	if h == "" || h == host {
		return host
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	if isNumberLabel(last) {
		return host
	}
	return h
}

// isNumberLabel reports whether the WHATWG library's IPv4 parser takes
// label, a host's last, for a number: decimal digits, or what its number
// parser reads, after "0x" (hex) or "0" (octal), with strconv. That also
// takes a sign ("+0" is 0.0.0.0 to it, found by FuzzCanonical), and a run of
// digits too long for int64 before anything else ("1000000000000000000000a"
// is a number out of range to it, an invalid address, found by
// FuzzFastParse).
func isNumberLabel(label string) bool {
	if label == "" {
		return false
	}
	digits := true
	for i := 0; i < len(label); i++ {
		digits = digits && '0' <= label[i] && label[i] <= '9'
	}
	if digits {
		return true
	}
	in, base := label, 10
	switch {
	case len(in) >= 2 && in[0] == '0' && (in[1] == 'x' || in[1] == 'X'):
		in, base = in[2:], 16
	case len(in) >= 2 && in[0] == '0':
		in, base = in[1:], 8
	}
	return in == "" || readsAsNumber(in, base)
}

// readsAsNumber reports whether strconv.ParseInt(s, base, 64) gives a
// number or ErrRange rather than a syntax error, without the allocation of
// its error: it is asked of the last label of every host, "com" included.
// TestReadsAsNumber holds it to strconv.
func readsAsNumber(s string, base int) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	cutoff := math.MaxUint64/uint64(base) + 1
	var n uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		switch c := s[i] | 0x20; {
		case '0' <= s[i] && s[i] <= '9':
			d = uint64(s[i] - '0')
		case 'a' <= c && c <= 'z':
			d = uint64(c-'a') + 10
		default:
			return false
		}
		if d >= uint64(base) {
			return false
		}
		if n >= cutoff {
			return true // out of range before any syntax error
		}
		n *= uint64(base)
		if n+d < n {
			return true
		}
		n += d
	}
	return true
}

// canonical builds the canonical URL from a parsed one.
func (c *Canonicalizer) canonical(u *whatwg.Url) URL {
	scheme := u.Scheme()
	// A special URL always has a host (possibly empty for file:); for other
	// schemes only the serialisation tells a null host from an empty one.
	hasAuthority := isSpecial(scheme) ||
		strings.HasPrefix(u.Href(true)[len(scheme)+1:], "//")
	if hasAuthority && !u.OpaquePath() {
		host := u.Hostname()
		if !u.IsIPv4() && !u.IsIPv6() {
			host = trimHostDots(host)
		}
		return c.build(scheme, host, u.Port(), u.Pathname(), u.Query())
	}

	out := URL{Scheme: scheme, Port: u.Port()}
	if hasAuthority {
		out.Host = u.Hostname()
		if !u.IsIPv4() && !u.IsIPv6() {
			out.Host = trimHostDots(out.Host)
		}
		out.Authority = out.Host
		if out.Port != "" {
			out.Authority = out.Host + ":" + out.Port
		}
	}

	var q string
	q, out.NQuery = c.canonicalQuery(u.Query())
	out.Query = q

	if u.OpaquePath() {
		out.Path = u.Pathname()
		if q == "" {
			// WHATWG strips trailing spaces of an opaque path that is not
			// followed by a query or fragment: do so now that both may be
			// gone, or parsing the result again would change it.
			out.Path = strings.TrimRight(out.Path, " ")
		}
	} else {
		out.Path = c.canonicalPath(u.Pathname())
	}

	n := len(out.Scheme) + 1 + len(out.Path)
	if hasAuthority {
		n += 2 + len(out.Authority)
	}
	if q != "" {
		n += 1 + len(q)
	}
	var b strings.Builder
	b.Grow(n + 2)
	b.WriteString(out.Scheme)
	b.WriteByte(':')
	if hasAuthority {
		b.WriteString("//")
		b.WriteString(out.Authority)
	} else if strings.HasPrefix(out.Path, "//") {
		// Without a host, "//" would read as the start of one: WHATWG
		// serialises such a path behind "/.".
		b.WriteString("/.")
	}
	b.WriteString(out.Path)
	if q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	out.String = b.String()
	return out
}

// build is the canonical URL of a hierarchical URL with an authority, from
// its parts as the WHATWG parser serialises them: the host already as
// canonical wants it, the port "" when the default, pathname and query
// (without "?") percent-encoded as the parser left them.
func (c *Canonicalizer) build(scheme, host, port, pathname, query string) URL {
	return c.buildWith(scheme, host, port, "", pathname, query)
}

// buildWith is build with the authority (host and ":port" if any) given,
// or "" for build to join them.
func (c *Canonicalizer) buildWith(scheme, host, port, authority, pathname, query string) URL {
	out := URL{Scheme: scheme, Host: host, Port: port, Authority: authority}
	if authority == "" {
		out.Authority = host
		if port != "" {
			out.Authority = host + ":" + port
		}
	}
	out.Query, out.NQuery = c.canonicalQuery(query)
	out.Path = c.canonicalPath(pathname)
	n := len(scheme) + 3 + len(out.Authority) + len(out.Path)
	if out.Query != "" {
		n += 1 + len(out.Query)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(out.Authority)
	b.WriteString(out.Path)
	if out.Query != "" {
		b.WriteByte('?')
		b.WriteString(out.Query)
	}
	out.String = b.String()
	return out
}

// SURT returns the URL's Sort-friendly URI Reordering Transform as the
// Internet Archive's surt library computes it for CDX indexes, so that
// pywb and other wayback tools find weft's captures under the keys they
// look up: the host's labels reversed and comma-separated, a leading
// "www", "www2", ... label dropped, then the port if any, ")" and the path
// and query in lower case (escapes included), a trailing "/" dropped unless
// the path is "/". "http://www.Example.com:8080/A/?b=1" gives
// "com,example:8080)/a?b=1". IP addresses are kept as they are. The scheme
// is left out, so http and https captures of a URL share a key.
func (u URL) SURT() string {
	var b strings.Builder
	b.Grow(len(u.Host) + len(u.Port) + len(u.Path) + len(u.Query) + 4)
	host := u.Host
	if isIPHost(host) {
		b.WriteString(host)
	} else {
		labels := strings.Split(strings.TrimSuffix(host, "."), ".")
		if len(labels) > 1 && isWWW(labels[0]) {
			labels = labels[1:]
		}
		for i := len(labels) - 1; i >= 0; i-- {
			b.WriteString(labels[i])
			if i > 0 {
				b.WriteByte(',')
			}
		}
	}
	if u.Port != "" {
		b.WriteByte(':')
		b.WriteString(u.Port)
	}
	b.WriteByte(')')
	path := u.Path
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	b.WriteString(strings.ToLower(path))
	if u.Query != "" {
		b.WriteByte('?')
		b.WriteString(strings.ToLower(u.Query))
	}
	return b.String()
}

// isWWW reports whether a label is "www" followed by digits only.
func isWWW(label string) bool {
	rest, ok := strings.CutPrefix(label, "www")
	if !ok {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return false
		}
	}
	return true
}

// isIPHost reports whether a canonical host is an IPv4 address or a
// bracketed IPv6 address.
func isIPHost(h string) bool {
	if strings.HasPrefix(h, "[") {
		return true
	}
	_, err := netip.ParseAddr(h)
	return err == nil
}
