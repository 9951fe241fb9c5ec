// Package scope decides which canonical URLs a crawl accepts: those near
// its seeds (by registrable domain, host or URL prefix), not filtered out by
// scheme, length, query size or file extension, within the depth limit and
// allowed by the include and exclude expressions.
package scope

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/net/publicsuffix"

	"github.com/weft-crawler/weft/internal/canon"
)

// Mode says how seeds widen the scope of a crawl.
type Mode string

const (
	// Domain accepts every host under a seed's registrable domain (its
	// eTLD+1 by the public suffix list): seed www.example.co.uk admits
	// example.co.uk and a.b.example.co.uk, in any scheme and port. A seed
	// whose host is an IP address or itself a public suffix admits that
	// exact host only.
	Domain Mode = "domain"
	// Host accepts the seeds' host names, in any scheme and port.
	Host Mode = "host"
	// Prefix accepts URLs that start with a seed's scheme, authority and
	// path up to and including its last "/": seed http://h/a/b admits
	// http://h/a/ and everything below it, but not https://h/a/ nor
	// http://h/a.
	Prefix Mode = "prefix"
	// Any accepts every host.
	Any Mode = "any"
)

// ParseMode parses the name of a Mode, as given on a command line.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case Domain, Host, Prefix, Any:
		return m, nil
	}
	return "", fmt.Errorf("scope: invalid mode %q: want domain, host, prefix or any", s)
}

// Reason says why Check rejected a URL; "" means it was accepted.
type Reason string

const (
	// ReasonScope: outside the seeds' domain, host or prefix, matched by an
	// exclude expression, or matched by no include expression.
	ReasonScope Reason = "scope"
	// ReasonFilter: scheme not http or https, denied extension, URL too
	// long, or too many query parameters.
	ReasonFilter Reason = "filter"
	// ReasonDepth: more hops from a seed than Config.MaxDepth.
	ReasonDepth Reason = "depth"
	// ReasonRepeats: one path segment occurs more often than
	// Config.MaxPathRepeats, the mark of a relative-link trap
	// ("/a/b/a/b/a/b/...") or a path of empty segments, or the path has
	// more than MaxPathSegments segments.
	ReasonRepeats Reason = "repeats"
)

// Defaults for zero Config fields.
const (
	DefaultMaxURLLength   = 2048
	DefaultMaxQueryParams = 32
	DefaultMaxPathRepeats = 3
	// DefaultMaxDepth is the most link hops from a seed: deep enough for
	// any site's real structure (Heritrix's default is 20 too), shallow
	// enough to stop a chain of generated pages.
	DefaultMaxDepth = 20
)

// Config describes the scope of a crawl. The zero Config accepts http and
// https URLs under the seeds' registrable domains, up to DefaultMaxDepth
// hops from a seed, except media, archives and executables.
type Config struct {
	// Mode is how seeds widen the scope; "" means Domain.
	Mode Mode
	// Include and Exclude are regular expressions (RE2 syntax, as package
	// regexp) matched against the canonical URL, anywhere in it unless
	// anchored. When Include is not empty a URL must match at least one of
	// them; a URL that matches any Exclude is rejected, even a seed.
	Include, Exclude []string
	// DenyExtensions are file name extensions, without the dot, that are
	// not fetched; they are compared case-insensitively with the
	// extension of the last path segment. A URL that an Include
	// expression matches is fetched whatever its extension: naming it is
	// asking for it. Nil means DefaultDenyExtensions(); an empty non-nil
	// slice denies none.
	DenyExtensions []string
	// MaxURLLength is the longest canonical URL accepted, in bytes. Zero
	// means DefaultMaxURLLength (2048); negative means no limit.
	MaxURLLength int
	// MaxQueryParams is the most query parameters (after canonicalisation
	// stripped tracking parameters) a URL may have. Zero means
	// DefaultMaxQueryParams (32): more is a sign of a crawler trap such as
	// a faceted search. Negative means no limit.
	MaxQueryParams int
	// MaxDepth is the most hops from a seed; seeds have depth 0. Zero
	// means DefaultMaxDepth (20); negative means no limit.
	MaxDepth int
	// MaxPathRepeats is the most times one path segment may occur in a
	// URL's path, anywhere in it: a relative link that resolves below
	// its own directory ("a/b/" on /a/b/) makes paths that repeat their
	// segments without end. Zero means DefaultMaxPathRepeats (3), which
	// passes /2024/01/01/ and /tiles/3/3/3.png; negative means no limit.
	// Under this rule a path also has at most MaxPathSegments segments.
	MaxPathRepeats int
}

// DefaultDenyExtensions returns the extensions denied when
// Config.DenyExtensions is nil: files that hold no links for a crawler to
// follow and are costly to fetch. Images and fonts a page shows are
// fetched with it all the same (CheckEmbed); PDFs are not denied: they are
// documents, archived and counted. A URL an Include expression matches is
// not denied by its extension. It returns a new slice on every call.
func DefaultDenyExtensions() []string {
	return []string{
		// Images.
		"jpg", "jpeg", "jpe", "png", "gif", "bmp", "webp", "avif", "heic", "heif",
		"tif", "tiff", "ico", "svg", "svgz", "psd", "raw", "cr2", "nef",
		// Audio.
		"mp3", "wav", "ogg", "oga", "opus", "flac", "aac", "m4a", "wma", "aiff", "mid", "midi",
		// Video.
		"mp4", "m4v", "mkv", "webm", "avi", "mov", "wmv", "flv", "mpg", "mpeg", "3gp", "ogv", "ts",
		// Archives and disk images.
		"zip", "rar", "7z", "tar", "gz", "tgz", "bz2", "tbz2", "xz", "txz", "zst", "lz",
		"lzma", "cab", "iso", "dmg", "img",
		// Fonts.
		"woff", "woff2", "ttf", "otf", "eot",
		// Executables and packages.
		"exe", "msi", "bin", "dll", "so", "apk", "ipa", "deb", "rpm", "jar", "pkg", "appimage",
	}
}

// Validate reports the first invalid field of c.
func (c *Config) Validate() error {
	switch c.Mode {
	case "", Domain, Host, Prefix, Any:
	default:
		return fmt.Errorf("scope: invalid Mode %q: want domain, host, prefix or any", c.Mode)
	}
	if _, err := compileAll("include", c.Include); err != nil {
		return err
	}
	if _, err := compileAll("exclude", c.Exclude); err != nil {
		return err
	}
	for i, e := range c.DenyExtensions {
		if normalizeExt(e) == "" {
			return fmt.Errorf("scope: DenyExtensions[%d] %q: empty extension", i, e)
		}
	}
	return nil
}

func compileAll(field string, exprs []string) ([]*regexp.Regexp, error) {
	var res []*regexp.Regexp
	for i, e := range exprs {
		re, err := regexp.Compile(e)
		if err != nil {
			return nil, fmt.Errorf("scope: %s[%d] %q: %w", field, i, e, err)
		}
		res = append(res, re)
	}
	return res, nil
}

// normalizeExt turns ".PDF" into "pdf".
func normalizeExt(e string) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(e), "."))
}

// maxExt bounds the extensions looked up, so that lower-casing fits on the
// stack.
const maxExt = 16

// maxKeyCache bounds the registrable-domain cache of Domain mode. A domain
// crawl meets a few thousand hosts under its seeds' domains; past this the
// cache starts over rather than grow.
const maxKeyCache = 1 << 16

// Filter applies a Config to canonical URLs. It is safe for concurrent use,
// AddSeed included.
type Filter struct {
	mode      Mode
	include   []*regexp.Regexp
	exclude   []*regexp.Regexp
	deny      map[string]struct{}
	maxLen    int // negative: no limit
	maxParams int // negative: no limit
	maxDepth  int // negative: no limit
	maxRepeat int // negative: no limit

	mu sync.RWMutex
	// allowed holds, in Domain mode, registrable domains and the exact
	// hosts of seeds that have none; in Host mode, host names.
	allowed map[string]struct{}
	// keys caches, in Domain mode, the registrable domain (or the host
	// itself) of hosts that lie under an allowed domain: the public suffix
	// lookup costs 300 ns and an allocation. It does not depend on the
	// seeds, so AddSeed need not clear it.
	keys map[string]string
	// prefixes maps "scheme://authority" to path prefixes, in Prefix mode.
	prefixes map[string][]string
}

// New returns a Filter for cfg, with no seeds yet.
func New(cfg Config) (*Filter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f := &Filter{
		mode:      cfg.Mode,
		maxLen:    cfg.MaxURLLength,
		maxParams: cfg.MaxQueryParams,
		maxDepth:  cfg.MaxDepth,
		maxRepeat: cfg.MaxPathRepeats,
		allowed:   make(map[string]struct{}),
		keys:      make(map[string]string),
		prefixes:  make(map[string][]string),
	}
	if f.mode == "" {
		f.mode = Domain
	}
	if f.maxLen == 0 {
		f.maxLen = DefaultMaxURLLength
	}
	if f.maxParams == 0 {
		f.maxParams = DefaultMaxQueryParams
	}
	if f.maxRepeat == 0 {
		f.maxRepeat = DefaultMaxPathRepeats
	}
	if f.maxDepth == 0 {
		f.maxDepth = DefaultMaxDepth
	}
	f.include, _ = compileAll("include", cfg.Include)
	f.exclude, _ = compileAll("exclude", cfg.Exclude)
	deny := cfg.DenyExtensions
	if deny == nil {
		deny = DefaultDenyExtensions()
	}
	f.deny = make(map[string]struct{}, len(deny))
	for _, e := range deny {
		f.deny[normalizeExt(e)] = struct{}{}
	}
	return f, nil
}

// AddSeed widens the scope to take in u: its registrable domain in Domain
// mode, its host name in Host mode, its prefix in Prefix mode (see Mode). A
// seed is always within the scope it adds, but AddSeed exempts it from
// nothing else: Check still applies filters, depth and Include and Exclude
// to it. URLs without a host are ignored.
func (f *Filter) AddSeed(u canon.URL) {
	if u.Host == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.mode {
	case Domain:
		f.allowed[registrable(u.Host)] = struct{}{}
	case Host:
		f.allowed[u.Host] = struct{}{}
	case Prefix:
		key := u.Scheme + "://" + u.Authority
		p := u.Path[:strings.LastIndexByte(u.Path, '/')+1]
		if p == "" {
			p = "/"
		}
		for _, q := range f.prefixes[key] {
			if q == p {
				return
			}
		}
		f.prefixes[key] = append(f.prefixes[key], p)
	}
}

// Check says whether u, found depth hops from a seed, is to be crawled: it
// returns "" if so, and otherwise the reason for the first test u fails, in
// this order: filter (scheme, length, number of query parameters, extension
// of the last path segment), repeated path segments, depth, scope, include
// and exclude.
//
// On the accepted path Check allocates nothing. u must come from package
// canon.
func (f *Filter) Check(u canon.URL, depth int) Reason { return f.check(u, depth, false) }

// CheckEmbed is Check for a resource a page shows (an image) rather than
// links to: the extension rule, which keeps out files that hold no links,
// does not apply to it. Every other rule does.
func (f *Filter) CheckEmbed(u canon.URL, depth int) Reason { return f.check(u, depth, true) }

// CheckRequisite is Check for a page requisite (a style sheet, script,
// image or font an HTML page needs to render): it may leave the seeds'
// scope by that one hop, as Heritrix's transclusion rule allows, and is
// not bound by the depth limit or the Include expressions, which are about
// pages; the filters but the extension rule, the repeated-segment rule and
// the Exclude expressions, the operator's word, still apply.
func (f *Filter) CheckRequisite(u canon.URL) Reason {
	if f.filterCause(&u, true) != "" {
		return ReasonFilter
	}
	if f.maxRepeat >= 0 && RepeatsOver(u.Path, f.maxRepeat) {
		return ReasonRepeats
	}
	for _, re := range f.exclude {
		if re.MatchString(u.String) {
			return ReasonScope
		}
	}
	return ""
}

// Within reports whether u is inside the crawl's scope mode (the hosts,
// domains or prefixes of its seeds), whatever its depth and filters: the
// test of whether a style sheet's requisites may leave the scope by one
// hop, as an HTML page's do.
func (f *Filter) Within(u canon.URL) bool { return f.inScope(u) }

// CheckSeed is Check for a URL offered as a new seed, before AddSeed: a
// seed makes its own scope, so only the filters and the Include and
// Exclude expressions apply.
func (f *Filter) CheckSeed(u canon.URL) Reason { return f.checkAs(u, 0, false, true) }

func (f *Filter) check(u canon.URL, depth int, embed bool) Reason {
	return f.checkAs(u, depth, embed, false)
}

func (f *Filter) checkAs(u canon.URL, depth int, embed, seed bool) Reason {
	if f.filterCause(&u, embed) != "" {
		return ReasonFilter
	}
	if f.maxRepeat >= 0 && RepeatsOver(u.Path, f.maxRepeat) {
		return ReasonRepeats
	}
	if f.maxDepth > 0 && depth > f.maxDepth {
		return ReasonDepth
	}
	if !seed && !f.inScope(u) {
		return ReasonScope
	}
	for _, re := range f.exclude {
		if re.MatchString(u.String) {
			return ReasonScope
		}
	}
	if len(f.include) == 0 {
		return ""
	}
	for _, re := range f.include {
		if re.MatchString(u.String) {
			return ""
		}
	}
	return ReasonScope
}

// Causes of ReasonFilter, as FilterError has them.
const (
	CauseScheme    = "scheme"          // not http or https
	CauseTooLong   = "too_long"        // longer than Config.MaxURLLength
	CauseParams    = "too_many_params" // more query parameters than Config.MaxQueryParams
	CauseExtension = "extension"       // a denied extension (Config.DenyExtensions)
)

// FilterError says which filter refused a URL (ReasonFilter).
type FilterError struct {
	Cause  string // one of the Cause constants
	URL    string
	Detail string // the cause with its numbers, for people
}

func (e *FilterError) Error() string { return "scope: " + e.URL + ": " + e.Detail }

// ExplainFilter says which filter refuses u, as CheckSeed would (embed
// false) or CheckEmbed (true), nil if none does.
func (f *Filter) ExplainFilter(u canon.URL, embed bool) *FilterError {
	e := &FilterError{Cause: f.filterCause(&u, embed), URL: u.String}
	switch e.Cause {
	case "":
		return nil
	case CauseScheme:
		e.Detail = fmt.Sprintf("scheme %q: only http and https are crawled", u.Scheme)
	case CauseTooLong:
		e.Detail = fmt.Sprintf("%d bytes long, over the limit of %d", len(u.String), f.maxLen)
	case CauseParams:
		e.Detail = fmt.Sprintf("%d query parameters, over the limit of %d", u.NQuery, f.maxParams)
	case CauseExtension:
		seg := u.Path[strings.LastIndexByte(u.Path, '/')+1:]
		seg, _, _ = strings.Cut(seg, ";")
		e.Detail = fmt.Sprintf("extension %q: not crawled as a page (images, archives, media, ...)", seg[strings.LastIndexByte(seg, '.')+1:])
	}
	return e
}

// filterCause is the first filter that refuses u, "" if none does.
func (f *Filter) filterCause(u *canon.URL, embed bool) string {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return CauseScheme
	case f.maxLen >= 0 && len(u.String) > f.maxLen:
		return CauseTooLong
	case f.maxParams >= 0 && u.NQuery > f.maxParams:
		return CauseParams
	case !embed && f.deniedExt(u.Path) && !f.included(u.String):
		return CauseExtension
	}
	return ""
}

// included reports whether an Include expression matches u (false when
// there are none).
func (f *Filter) included(u string) bool {
	for _, re := range f.include {
		if re.MatchString(u) {
			return true
		}
	}
	return false
}

// MaxPathSegments is the most segments a path may have when
// MaxPathRepeats applies: more is a trap too (no site nests 64
// directories), and it bounds the quadratic work of RepeatsOver.
const MaxPathSegments = 64

// RepeatsOver reports whether some segment of path (the part after each
// '/') occurs more than n times, or the path has more than
// MaxPathSegments segments. It allocates nothing; a path with at most n
// segments is answered by counting slashes.
func RepeatsOver(path string, n int) bool {
	switch segs := strings.Count(path, "/"); {
	case segs > MaxPathSegments:
		return true
	case segs <= n:
		return false
	}
	for rest := path; ; {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
		seg := rest
		if j := strings.IndexByte(seg, '/'); j >= 0 {
			seg = seg[:j]
		}
		// Count the later occurrences of seg; an earlier one was counted
		// when its own turn came.
		count := 1
		for later := rest[len(seg):]; later != ""; {
			later = later[1:] // the '/' before the next segment
			next := later
			if j := strings.IndexByte(next, '/'); j >= 0 {
				next = next[:j]
			}
			if next == seg {
				if count++; count > n {
					return true
				}
			}
			later = later[len(next):]
		}
	}
}

// Pattern is the shape of u's URL space that a crawl trap fills: its
// authority and path, without the query (whose values faceted search and
// calendars vary), with every run of digits written "#" and every segment
// that looks like a generated token (a session id, a hash, a UUID; see
// isToken) written "*", its extension kept. %-escapes are not digits, and
// words are kept, so titles and slugs keep their own patterns:
// /cal/2026/11/ and /cal/1999/01/ share "/cal/#/#/",
// /s/9f3a1c0d2b44e1f07a6b5c3d/p/4 and /s/77aa01e3c9.../p/5 share
// "/s/*/p/#", every /shop?color=..&size=.. is "/shop", while
// /news/a-polite-crawler-12 ("/news/a-polite-crawler-#") and
// /wiki/Caf%C3%A9 keep their own.
func Pattern(u canon.URL) string {
	var b strings.Builder
	b.Grow(len(u.Authority) + len(u.Path))
	b.WriteString(u.Authority)
	for rest := u.Path; rest != ""; {
		i := strings.IndexByte(rest[1:], '/') + 1
		if i == 0 {
			i = len(rest)
		}
		seg := rest[1:i]
		b.WriteByte('/')
		stem, ext := seg, ""
		if j := strings.LastIndexByte(seg, '.'); j > 0 {
			stem, ext = seg[:j], seg[j:]
		}
		if IsToken(stem) {
			b.WriteByte('*')
			writeDigitRuns(&b, ext)
		} else {
			writeDigitRuns(&b, seg)
		}
		rest = rest[i:]
	}
	return b.String()
}

// writeDigitRuns writes seg with each run of decimal digits as one '#',
// the hex digits of %-escapes left as they are.
func writeDigitRuns(b *strings.Builder, seg string) {
	for i := 0; i < len(seg); i++ {
		switch c := seg[i]; {
		case c == '%' && i+2 < len(seg):
			b.WriteString(seg[i : i+3])
			i += 2
		case c >= '0' && c <= '9':
			b.WriteByte('#')
			for i+1 < len(seg) && seg[i+1] >= '0' && seg[i+1] <= '9' {
				i++
			}
		default:
			b.WriteByte(c)
		}
	}
}

// IsToken reports a segment (its extension aside) that looks generated
// rather than written: ASP.NET's cookieless session segments
// ("(S(lit3py55t21z5v55vlm25s55))", "(X(1)S(...))"); or at least 16
// letters and digits, with at least two digits, that are all hex digits
// with or without '-' (a hash, a UUID) or run on with no '-' or '_'
// between words (a session id, a base-36 or base-62 key). A slug
// ("a-polite-crawler-12345") or a title ("Albert_Einstein") is words.
func IsToken(seg string) bool {
	if strings.HasPrefix(seg, "(S(") || strings.HasPrefix(seg, "(X(") || strings.HasPrefix(seg, "(A(") {
		return true
	}
	n, digits, hex, words := 0, 0, true, false
	for i := 0; i < len(seg); i++ {
		switch c := seg[i]; {
		case c == '-':
			words = true
		case c == '_':
			words, hex = true, false
		case c >= '0' && c <= '9':
			n++
			digits++
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			n++
		case c >= 'g' && c <= 'z' || c >= 'G' && c <= 'Z':
			n++
			hex = false
		default:
			return false
		}
	}
	return n >= 16 && digits >= 2 && (hex || !words)
}

// deniedExt reports whether the last segment of path has a denied
// extension. Path parameters (";v=1") are not part of it.
func (f *Filter) deniedExt(path string) bool {
	if len(f.deny) == 0 {
		return false
	}
	seg := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.IndexByte(seg, ';'); i >= 0 {
		seg = seg[:i]
	}
	dot := strings.LastIndexByte(seg, '.')
	if dot < 0 || len(seg)-dot-1 > maxExt {
		return false
	}
	var buf [maxExt]byte
	ext := buf[:0]
	for i := dot + 1; i < len(seg); i++ {
		c := seg[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		ext = append(ext, c)
	}
	_, ok := f.deny[string(ext)]
	return ok
}

func (f *Filter) inScope(u canon.URL) bool {
	switch f.mode {
	case Any:
		return true
	case Host:
		f.mu.RLock()
		_, ok := f.allowed[u.Host]
		f.mu.RUnlock()
		return ok
	case Prefix:
		return f.inPrefix(u)
	default:
		return f.inDomain(u.Host)
	}
}

// inPrefix compares u with the prefixes of seeds of its own scheme and
// authority, which is the start of u.String for every URL from canon.
func (f *Filter) inPrefix(u canon.URL) bool {
	n := len(u.Scheme) + len("://") + len(u.Authority)
	if len(u.String) < n || u.String[len(u.Scheme):len(u.Scheme)+3] != "://" {
		return false
	}
	key, rest := u.String[:n], u.String[n:]
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, p := range f.prefixes[key] {
		if strings.HasPrefix(rest, p) {
			return true
		}
	}
	return false
}

// inDomain reports whether host's registrable domain, or for an IP address
// or public suffix the host itself, is allowed. Most hosts a crawl meets are
// outside every allowed domain: it rejects those by looking up host and each
// of its parent domains, without the cost of a public suffix lookup. A host
// under an allowed domain is not necessarily in it: "a.s3.amazonaws.com" is
// its own registrable domain, not part of "amazonaws.com".
func (f *Filter) inDomain(host string) bool {
	if host == "" {
		return false
	}
	f.mu.RLock()
	if _, ok := f.allowed[host]; ok {
		// An allowed name is a registrable domain or a host that has none:
		// either way it is its own registrable domain.
		f.mu.RUnlock()
		return true
	}
	if isIP(host) {
		f.mu.RUnlock()
		return false
	}
	under := false
	for rest := host; !under; {
		dot := strings.IndexByte(rest, '.')
		if dot < 0 {
			break
		}
		rest = rest[dot+1:]
		_, under = f.allowed[rest]
	}
	if !under {
		f.mu.RUnlock()
		return false
	}
	key, ok := f.keys[host]
	if ok {
		_, ok = f.allowed[key]
		f.mu.RUnlock()
		return ok
	}
	f.mu.RUnlock()

	key = registrable(host)
	f.mu.Lock()
	if len(f.keys) >= maxKeyCache {
		clear(f.keys)
	}
	f.keys[host] = key
	_, ok = f.allowed[key]
	f.mu.Unlock()
	return ok
}

// registrable returns the registrable domain (eTLD+1) of host, or host itself
// if it is an IP address or a public suffix, or has no registrable domain.
func registrable(host string) string {
	if isIP(host) {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}

// isIP reports whether host, as canon writes it, is an IP address: IPv6 in
// brackets, or IPv4 in dotted decimal. WHATWG parses any host whose last
// label is a number as IPv4, so a last label of digits is enough.
func isIP(host string) bool {
	if host == "" {
		return false
	}
	if host[0] == '[' {
		return true
	}
	last := host[strings.LastIndexByte(host, '.')+1:]
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			return false
		}
	}
	return last != ""
}
