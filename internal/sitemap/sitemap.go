// Package sitemap reads sitemaps (sitemaps.org protocol 0.9): a urlset of
// page URLs, or a sitemap index of further sitemaps, plain or gzipped.
//
// It reads bytes the crawler already fetched, through its frontier and
// politeness; it never fetches. Reading streams the XML token by token, so
// memory is bounded by the entries kept, and stops at the protocol's
// limits: 50,000 entries and 50 MB uncompressed per file. A larger file is
// truncated, not refused, and says so.
package sitemap

import (
	"bufio"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The protocol's limits for one file.
const (
	MaxEntries = 50000
	MaxBytes   = 50 << 20 // uncompressed
	// maxLoc bounds a <loc>; the protocol says 2,048 characters.
	maxLoc = 2048
)

// Kind says what a sitemap lists.
type Kind uint8

const (
	URLSet Kind = iota + 1 // pages
	Index                  // further sitemaps
)

func (k Kind) String() string {
	switch k {
	case URLSet:
		return "urlset"
	case Index:
		return "sitemapindex"
	}
	return "unknown"
}

// Entry is one <url> of a urlset or <sitemap> of an index.
type Entry struct {
	Loc string // as written, trimmed; resolve and canonicalise before use
	// LastMod is the W3C datetime of <lastmod>, zero if absent or
	// unreadable (BadLastMod counts those).
	LastMod time.Time
	// ChangeFreq and Priority are a urlset's hints: "" and -1 if absent
	// or invalid.
	ChangeFreq string
	Priority   float64
	Line       int // of the entry's start, for messages
}

// Result is what a sitemap file lists.
type Result struct {
	Kind    Kind
	Entries []Entry
	// Truncated is "" for a whole file, else the limit that cut it:
	// "entries" (more than MaxEntries) or "bytes" (more than MaxBytes
	// uncompressed).
	Truncated string
	// Skipped counts entries left out: no <loc>, or one over 2,048
	// characters. BadLastMod counts unreadable <lastmod> values (the
	// entry is kept without one).
	Skipped, BadLastMod int
	Gzipped             bool
}

// Limits lowers the protocol's limits (for tests); zero fields mean the
// protocol's.
type Limits struct {
	MaxEntries int
	MaxBytes   int64
}

// ErrNotSitemap is wrapped by Parse's error for a well-formed document
// whose root is neither <urlset> nor <sitemapindex>.
var ErrNotSitemap = errors.New("not a sitemap")

// Parse reads one sitemap file, gzipped or not (by its magic bytes, not its
// name or Content-Type, which servers get wrong both ways). Malformed XML
// is an error that names the line; entries before it are returned with it.
func Parse(r io.Reader, lim Limits) (Result, error) {
	maxEntries, maxBytes := lim.MaxEntries, lim.MaxBytes
	if maxEntries <= 0 {
		maxEntries = MaxEntries
	}
	if maxBytes <= 0 {
		maxBytes = MaxBytes
	}
	var res Result
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return res, fmt.Errorf("sitemap: gzip: %w", err)
		}
		defer zr.Close()
		res.Gzipped = true
		r = zr
	} else {
		r = br
	}
	lr := &limitReader{r: r, n: maxBytes}
	d := xml.NewDecoder(lr)
	d.Strict = true
	// Sitemaps must be UTF-8; a declared Latin-1 is read as is rather
	// than refused (its ASCII, which URLs mostly are, is the same).
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }

	var (
		cur     *Entry
		field   string // the child of cur being read: loc, lastmod, changefreq, priority
		text    strings.Builder
		depth   int
		rootSet bool
	)
	for {
		tok, err := d.Token()
		if err != nil {
			if lr.over {
				res.Truncated = "bytes"
				return res, nil
			}
			if errors.Is(err, io.EOF) {
				if !rootSet {
					return res, fmt.Errorf("sitemap: empty document: %w", ErrNotSitemap)
				}
				return res, nil
			}
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return res, fmt.Errorf("sitemap: malformed XML at line %d: %s", se.Line, se.Msg)
			}
			if res.Gzipped {
				return res, fmt.Errorf("sitemap: gzip: %w", err)
			}
			return res, fmt.Errorf("sitemap: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			name := t.Name.Local
			switch {
			case depth == 1:
				switch name {
				case "urlset":
					res.Kind = URLSet
				case "sitemapindex":
					res.Kind = Index
				default:
					return res, fmt.Errorf("sitemap: root element <%s>: %w", name, ErrNotSitemap)
				}
				rootSet = true
			case depth == 2 && (res.Kind == URLSet && name == "url" || res.Kind == Index && name == "sitemap"):
				if len(res.Entries) == maxEntries {
					res.Truncated = "entries"
					return res, nil
				}
				line, _ := d.InputPos()
				cur = &Entry{Priority: -1, Line: line}
			case depth == 3 && cur != nil:
				switch name {
				case "loc", "lastmod", "changefreq", "priority":
					field = name
					text.Reset()
				}
			}
		case xml.CharData:
			if field != "" && text.Len() <= maxLoc {
				text.Write(t)
			}
		case xml.EndElement:
			switch {
			case depth == 3 && field != "":
				cur.set(field, strings.TrimSpace(text.String()), &res)
				field = ""
			case depth == 2 && cur != nil:
				if cur.Loc == "" || len(cur.Loc) > maxLoc {
					res.Skipped++
				} else {
					res.Entries = append(res.Entries, *cur)
				}
				cur = nil
			case depth == 1:
				// The root closed: whatever follows is not read (a
				// second root would mix two kinds of entries).
				return res, nil
			}
			depth--
		}
	}
}

// set stores one child element's text.
func (e *Entry) set(field, v string, res *Result) {
	switch field {
	case "loc":
		e.Loc = v
	case "lastmod":
		if v == "" {
			return
		}
		t, err := ParseW3CDate(v)
		if err != nil {
			res.BadLastMod++
			return
		}
		e.LastMod = t
	case "changefreq":
		switch v = strings.ToLower(v); v {
		case "always", "hourly", "daily", "weekly", "monthly", "yearly", "never":
			e.ChangeFreq = v
		}
	case "priority":
		if p, err := strconv.ParseFloat(v, 64); err == nil && p >= 0 && p <= 1 {
			e.Priority = p
		}
	}
}

// w3cLayouts are the W3C Datetime forms the protocol allows, longest
// first; a time of day needs a zone ("Z" or ±hh:mm).
var w3cLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04Z07:00",
	"2006-01-02",
	"2006-01",
	"2006",
}

// ParseW3CDate parses a W3C Datetime (YYYY, YYYY-MM, YYYY-MM-DD,
// YYYY-MM-DDThh:mm[:ss[.s]]TZD), as UTC.
func ParseW3CDate(s string) (time.Time, error) {
	for _, l := range w3cLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("sitemap: %q is not a W3C datetime", s)
}

// limitReader reads at most n bytes and remembers that there were more.
type limitReader struct {
	r    io.Reader
	n    int64
	over bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// One more byte tells a file of exactly n bytes from a longer one.
		var one [1]byte
		if k, _ := l.r.Read(one[:]); k > 0 {
			l.over = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}
