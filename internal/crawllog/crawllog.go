// Package crawllog writes and reads Heritrix's crawl.log, the line per
// fetch that web archives' tools (crawl log viewers, QA and indexing
// scripts, NetarchiveSuite, warcprox's readers) take as input.
//
// A line is twelve fields separated by spaces, the first three padded
// as Heritrix pads them:
//
//	timestamp status size URI discovery-path via media-type #worker fetch-start+ms digest source annotations
//
// An empty field is "-". The fields, the status codes below zero and
// the discovery path's letters are those of Heritrix 3's documentation
// ("Log Files" and "Glossary" in its docs), which Parse checks.
package crawllog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Heritrix's status codes for a fetch that got no HTTP answer (its
// FetchStatusCodes), those weft has a use for.
const (
	DomainUnresolvable = -1    // DNS lookup failed (a dns: URI's own line)
	ConnectFailed      = -2    // HTTP connect failed
	ConnectLost        = -3    // HTTP connect broken
	Timeout            = -4    // HTTP timeout before any meaningful answer
	RuntimeException   = -5    // unexpected failure
	DomainPrereqFailed = -6    // the host's DNS lookup failed, precluding the fetch
	Unfetchable        = -7    // URI recognised as unsupported or illegal
	RobotsPrereqFailed = -61   // the host's robots.txt failed, precluding the fetch
	BlockedByUser      = -5001 // blocked from fetch by the operator's settings
	RobotsPrecluded    = -9998 // robots.txt rules precluded the fetch
)

// validStatus reports whether s is an HTTP status or one of the codes
// Heritrix's documentation lists.
func validStatus(s int) bool {
	switch s {
	case 1, 0, -1, -2, -3, -4, -5, -6, -7, -8, -50, -60, -61, -62, -63, -404, -3000,
		-4000, -4001, -4002, -5000, -5001, -5002, -5003, -5004, -6000, -7000, -9998:
		return true
	}
	return s >= 100 && s <= 999
}

// Hop is one step of a discovery path: how a URL was found from the one
// before it.
type Hop byte

// The hops of Heritrix's discovery paths.
const (
	Redirect      Hop = 'R' // a redirect's target
	Embed         Hop = 'E' // a requisite: an image, a style sheet, a script
	Speculative   Hop = 'X' // a speculative embed, guessed from script text
	Link          Hop = 'L' // a link
	Prerequisite  Hop = 'P' // a prerequisite: the host's robots.txt
	Inferred      Hop = 'I' // implied by convention: /favicon.ico, /sitemap.xml
	Manifest      Hop = 'M' // listed by a manifest: a sitemap, robots.txt's Sitemap: lines
	Synthesized   Hop = 'S' // a synthesised form submission
	maxPathHops       = 50  // the hops a path keeps: Heritrix logs the last 50
	pathHopLetter     = "REXLPIMS"
)

// Extend returns path, a discovery path as Heritrix writes it, one hop
// longer. The path keeps its last 50 hops and counts the ones before
// them in a prefix ("12+LLR..."), so that what a queued URL carries is
// bounded however deep the crawl goes.
func Extend(path string, hop Hop) string {
	cut, hops := 0, path
	if i := strings.IndexByte(path, '+'); i >= 0 {
		cut, _ = strconv.Atoi(path[:i])
		hops = path[i+1:]
	}
	if len(hops) < maxPathHops {
		if cut == 0 {
			return hops + string(hop)
		}
		return strconv.Itoa(cut) + "+" + hops + string(hop)
	}
	return strconv.Itoa(cut+1+len(hops)-maxPathHops) + "+" + hops[len(hops)-maxPathHops+1:] + string(hop)
}

// Line is one line of the crawl log.
type Line struct {
	// Logged is when the line was written (Heritrix: the instant of
	// logging), in UTC to the millisecond.
	Logged time.Time
	// Status is the HTTP status, or one of Heritrix's codes for a fetch
	// that got none (ConnectFailed, ...).
	Status int
	// Size is the body's size in bytes as it came (without headers);
	// below zero when there was none.
	Size int64
	URI  string
	// Path is the discovery path from the seed ("" for a seed).
	Path string
	// Via is the URI the URL was found on ("" for a seed).
	Via string
	// MediaType is the answer's Content-Type, parameters cut; "" when
	// there is none.
	MediaType string
	// Worker is the number of the worker that fetched it.
	Worker int
	// Start and Duration are when the request began and how long it
	// took; a zero Start for a URL that was not requested.
	Start    time.Time
	Duration time.Duration
	// Digest is the payload's digest as the WARC writes it
	// ("sha1:BASE32"), "" for none.
	Digest string
	// Source is the seed the URL descends from when seeds are tagged.
	Source string
	// Annotations say more of the fetch ("duplicate:digest", "lenTrunc").
	Annotations []string
	// Extra is Heritrix's optional thirteenth field (its logExtraInfo):
	// a JSON object, written as is; "" for none.
	Extra string
}

// noType is Heritrix 3's media type for an answer without one.
const noType = "unknown"

// Append appends l, formatted, with its newline, to dst.
func Append(dst []byte, l *Line) []byte {
	dst = l.Logged.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000Z")
	dst = append(dst, ' ')
	dst = appendPadded(dst, strconv.Itoa(l.Status), 5)
	dst = append(dst, ' ')
	size := "-"
	if l.Size >= 0 {
		size = strconv.FormatInt(l.Size, 10)
	}
	dst = appendPadded(dst, size, 10)
	dst = append(dst, ' ')
	dst = append(dst, field(l.URI)...)
	dst = append(dst, ' ')
	dst = append(dst, field(l.Path)...)
	dst = append(dst, ' ')
	dst = append(dst, field(l.Via)...)
	dst = append(dst, ' ')
	mt := MediaType(l.MediaType)
	if !mediaType(mt) {
		mt = noType
	}
	dst = append(dst, mt...)
	dst = append(dst, " #"...)
	w := strconv.Itoa(max(l.Worker, 0))
	dst = append(dst, "000"[min(len(w), 3):]...) // three digits at least, as Heritrix writes it
	dst = append(dst, w...)
	dst = append(dst, ' ')
	if l.Start.IsZero() {
		dst = append(dst, '-')
	} else {
		dst = l.Start.UTC().AppendFormat(dst, "20060102150405.000")
		// 17 digits: the format's dot is not one of them.
		i := len(dst) - 4
		copy(dst[i:], dst[i+1:])
		dst = dst[:len(dst)-1]
		dst = append(dst, '+')
		dst = strconv.AppendInt(dst, l.Duration.Milliseconds(), 10)
	}
	dst = append(dst, ' ')
	dst = append(dst, field(l.Digest)...)
	dst = append(dst, ' ')
	dst = append(dst, field(l.Source)...)
	dst = append(dst, ' ')
	if len(l.Annotations) == 0 {
		dst = append(dst, '-')
	}
	for i, a := range l.Annotations {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, field(a)...)
	}
	if l.Extra != "" {
		dst = append(dst, ' ')
		dst = append(dst, l.Extra...)
	}
	return append(dst, '\n')
}

// appendPadded appends s right-aligned in width columns, as Heritrix
// pads the status and the size.
func appendPadded(dst []byte, s string, width int) []byte {
	for range width - len(s) {
		dst = append(dst, ' ')
	}
	return append(dst, s...)
}

// field is s as one field: "-" when empty, and never with a space or a
// control character in it, which would shift every field after it (a
// URL is canonical and has none; a media type or an annotation from a
// server might).
func field(s string) string {
	if s == "" {
		return "-"
	}
	if strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return '_'
		}
		return r
	}, s)
}

// MediaType is a Content-Type as the crawl log writes it: its media type
// without parameters, cut as Heritrix cuts it (at the first space, ';'
// or ','); "" for none.
func MediaType(ct string) string {
	ct = strings.TrimSpace(ct)
	if i := strings.IndexFunc(ct, func(r rune) bool { return r <= ' ' || r == ';' || r == ',' || r == 0x7f }); i >= 0 {
		ct = ct[:i]
	}
	return ct
}

// ErrSyntax is what Parse's errors wrap.
var ErrSyntax = errors.New("not a crawl.log line")

// Parse reads one line of a crawl log (without its newline), checking
// each field against the grammar Heritrix's documentation gives it.
func Parse(s string) (Line, error) {
	var l Line
	if i := strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }); i >= 0 {
		return l, fmt.Errorf("crawllog: control character %q at byte %d: %w", s[i], i, ErrSyntax)
	}
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' })
	if len(f) < 12 {
		return l, fmt.Errorf("crawllog: %d fields, want 12 or 13: %w", len(f), ErrSyntax)
	}
	if len(f) > 12 {
		// The thirteenth, a JSON object, may have spaces of its own.
		rest := s
		for range 12 {
			rest = strings.TrimLeft(rest, " ")
			rest = rest[strings.IndexByte(rest, ' ')+1:]
		}
		l.Extra = strings.TrimSpace(rest)
		if !strings.HasPrefix(l.Extra, "{") || !strings.HasSuffix(l.Extra, "}") {
			return l, fmt.Errorf("crawllog: field 13 %q is not a JSON object: %w", clip(l.Extra), ErrSyntax)
		}
	}
	bad := func(n int, what string) (Line, error) {
		return l, fmt.Errorf("crawllog: field %d %q is not %s: %w", n, clip(f[n-1]), what, ErrSyntax)
	}
	var err error
	if l.Logged, err = time.Parse("2006-01-02T15:04:05.000Z", f[0]); err != nil || len(f[0]) != 24 || f[0][19] != '.' {
		return bad(1, "an ISO 8601 time to the millisecond in UTC")
	}
	if l.Status, err = strconv.Atoi(f[1]); err != nil || !validStatus(l.Status) {
		return bad(2, "an HTTP status or one of Heritrix's codes")
	}
	l.Size = -1
	if f[2] != "-" {
		if l.Size, err = strconv.ParseInt(f[2], 10, 64); err != nil || l.Size < 0 || f[2][0] == '+' {
			return bad(3, "a size in bytes or -")
		}
	}
	if !uri(f[3]) {
		return bad(4, "an absolute URI")
	}
	l.URI = f[3]
	if f[4] != "-" {
		if !validPath(f[4]) {
			return bad(5, "a discovery path of at most 50 of R, E, X, L, P, I, M, S")
		}
		l.Path = f[4]
	}
	if f[5] != "-" {
		if !uri(f[5]) {
			return bad(6, "an absolute URI or -")
		}
		l.Via = f[5]
	}
	if !mediaType(f[6]) {
		return bad(7, "a media type")
	}
	if f[6] != noType && f[6] != "no-type" {
		l.MediaType = f[6]
	}
	if len(f[7]) < 4 || f[7][0] != '#' || !digits(f[7][1:]) {
		return bad(8, "a worker number of three digits or more after #")
	}
	l.Worker, _ = strconv.Atoi(f[7][1:])
	if f[8] != "-" {
		at, ms, ok := strings.Cut(f[8], "+")
		if !ok || len(at) != 17 || !digits(at) || !digits(ms) {
			return bad(9, "a 17-digit fetch time, + and a duration in ms")
		}
		if l.Start, err = time.Parse("20060102150405.000", at[:14]+"."+at[14:]); err != nil {
			return bad(9, "a 17-digit fetch time, + and a duration in ms")
		}
		n, _ := strconv.ParseInt(ms, 10, 64)
		l.Duration = time.Duration(n) * time.Millisecond
	}
	if f[9] != "-" {
		scheme, sum, ok := strings.Cut(f[9], ":")
		if !ok || scheme != "sha1" || len(sum) != 32 || strings.Trim(sum, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
			return bad(10, "a SHA-1 digest in base 32 (sha1:...) or -")
		}
		l.Digest = f[9]
	}
	if f[10] != "-" {
		l.Source = f[10]
	}
	if f[11] != "-" {
		if l.Annotations = annotations(f[11]); l.Annotations == nil {
			return bad(12, "annotations separated by commas")
		}
	}
	return l, nil
}

// uri reports whether s is an absolute URI: a scheme, a colon and more.
func uri(s string) bool {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || scheme == "" || rest == "" || !isAlpha(scheme[0]) {
		return false
	}
	for i := range len(scheme) {
		if c := scheme[i]; !isAlpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// validPath reports whether s is a discovery path: hop letters, after
// a count of the hops cut when there were more than 50.
func validPath(s string) bool {
	if cut, hops, ok := strings.Cut(s, "+"); ok {
		if !digits(cut) || len(hops) != maxPathHops {
			return false
		}
		s = hops
	}
	return s != "" && len(s) <= maxPathHops && strings.Trim(s, pathHopLetter) == ""
}

// mediaType reports whether s is a type/subtype of RFC 9110 tokens, or
// Heritrix's word for none.
func mediaType(s string) bool {
	if s == noType || s == "no-type" {
		return true
	}
	typ, sub, ok := strings.Cut(s, "/")
	return ok && token(typ) && token(sub)
}

func token(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(isAlpha(c) || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// annotations splits s at its commas, but not at those within double
// quotes (Heritrix 1's duplicate:"file.arc,offset"); nil if an
// annotation is empty or a quote is not closed.
func annotations(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i <= len(s); i++ {
		switch {
		case i < len(s) && s[i] == '"':
			quoted = !quoted
		case i == len(s) || s[i] == ',' && !quoted:
			if i == start {
				return nil
			}
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if quoted {
		return nil
	}
	return out
}

// clip shortens what an error quotes of a field.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
