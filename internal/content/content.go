// Package content reads fetched bodies, choosing a handler by media type.
//
// Supporting a new content type takes a new Handler, not a change to the
// crawler: the crawler asks its Set for the handler of a response's media
// type and does the same with every Result, whoever produced it (links
// through the frontier's filters, words through the near-duplicate index,
// embeds through the same filters when a module asks for them). Every
// response is archived whether or not a handler reads it.
package content

import (
	"bytes"
	"errors"
	"net/http"
	neturl "net/url"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/extract"
	"github.com/weft-crawler/weft/internal/sitemap"
)

// Doc is a response to read.
type Doc struct {
	URL       string      // the response's URL (after the request's redirects: none, in weft)
	MediaType string      // lower-case, without parameters
	Header    http.Header // the response's headers
	Body      []byte      // decoded (Content-Encoding undone)
	Token     string      // the crawler's robots.txt product token
	Words     bool        // collect the hashes of the visible words
	Embeds    bool        // collect the resources the page shows
	MaxLinks  int         // the most links read of an HTML page; zero means extract.DefaultMaxLinks
	// Truncated is the fetcher's reason for cutting Body short ("" if it
	// is whole): a handler reads what there is and says so.
	Truncated string
	// WordBuf, if not nil, is a slice whose array a handler may hold
	// Result.Words in (extract.HTMLInto): a crawl passes back, page after
	// page, the words it is done with.
	WordBuf []uint64
}

// Result is what a handler read in a body.
type Result struct {
	// Base is the URL links resolve against, raw; "" means the document's.
	Base string
	// Links are the links the document offers, in document order.
	Links []extract.Link
	// Hints are what a sitemap says of each of its links (Hints[i] of
	// Links[i]); nil for other documents.
	Hints []Hint
	// Embeds are the resources the document needs to render (an HTML
	// page's style sheets, scripts, images, fonts and media; a style
	// sheet's url()s and @imports), raw, when asked. HasIcon says an HTML
	// page named its icon (else a browser asks for /favicon.ico).
	Embeds  []string
	HasIcon bool
	// Words are the hashes of its visible words, when asked.
	Words []uint64
	// NoIndex and NoFollow are the document's (or its headers') robots
	// directives.
	NoIndex, NoFollow bool
	// Search says an HTML page is a search's results: a text field of its
	// forms shows what its URL's query asks under the field's name (the
	// search box, filled in).
	Search bool
	// Truncated names a limit that cut the reading short ("" if none);
	// Err is why the document could not be read whole, with what was read
	// before it kept above.
	Truncated string
	Err       error
	// Title is an HTML page's <title>, as document.title gives it; "" for
	// none and for other documents.
	Title string
	// Charset is "" or what reading the document's encoding met or did
	// (CharsetUnknown, CharsetInvalid, CharsetTranscoded, CharsetCut).
	Charset string
	// Fields are what extensions extracted (a product's title and price),
	// by name; nil if none did. They go with the page to its consumers
	// and in its event.
	Fields map[string]any
	// Extended lists the extensions that read the document, in order, and
	// how each fared; nil without extensions (see Set.Extend).
	Extended []ExtensionRun
}

// Values of Result.Truncated for an HTML page cut by one of package
// extract's limits.
const (
	CutLinks  = "links"  // Doc.MaxLinks links read: the rest of the page is not
	CutTokens = "tokens" // the parse budget spent
)

// Hint is what a sitemap says of a page.
type Hint struct {
	LastMod  time.Time // <lastmod>, zero if none
	Priority float64   // <priority> in [0, 1], -1 if none
}

// A Handler reads the bodies of some media types.
type Handler interface {
	// Name is short and stable: it labels the handler's counts.
	Name() string
	// Accepts reports whether the handler reads bodies of media type mt
	// (lower-case, without parameters).
	Accepts(mt string) bool
	// Read returns what d holds. It must bound its own work by the body's
	// size: bodies are already capped by the fetcher.
	Read(d Doc) Result
}

// Set is the handlers of a crawl, asked in order.
type Set []Handler

// For returns the first handler that accepts mt, or nil.
func (s Set) For(mt string) Handler {
	for _, h := range s {
		if h.Accepts(mt) {
			return h
		}
	}
	return nil
}

// Default is the handlers every crawl has: HTML and plain text.
func Default() Set { return Set{HTML{}, Text{}} }

// HTML reads HTML and XHTML documents: links, <base>, meta robots and
// X-Robots-Tag directives, visible words and images.
type HTML struct{}

// Name implements Handler.
func (HTML) Name() string { return "html" }

// Accepts implements Handler.
func (HTML) Accepts(mt string) bool { return mt == "text/html" || mt == "application/xhtml+xml" }

// Read implements Handler. A body that is binary is not parsed (ErrBinary);
// one in another encoding than UTF-8 is converted first (Result.Charset).
func (HTML) Read(d Doc) Result {
	noIndex, noFollow := extract.RobotsTag(d.Header.Values("X-Robots-Tag"), d.Token)
	if looksBinary(d.Body) {
		return Result{Err: ErrBinary, NoIndex: noIndex, NoFollow: noFollow}
	}
	body, cs := toUTF8(d.Body, d.Header.Get("Content-Type"))
	lim := extract.Limits{Embeds: d.Embeds, MaxLinks: d.MaxLinks}
	if d.Words {
		lim.Words = extract.DefaultMaxWords
	}
	res := extract.HTMLInto(d.WordBuf, body, d.Token, lim)
	out := Result{
		Base: res.Base, Links: res.Links, Embeds: res.Embeds, HasIcon: res.HasIcon, Words: res.Words,
		NoIndex: res.MetaNoIndex || noIndex, NoFollow: res.MetaNoFollow || noFollow,
		Charset: cs, Title: res.Title, Search: asks(d.URL, res.Base, res.Filled),
	}
	switch {
	case cs == CharsetCut:
		out.Truncated = "charset" // converted to UTF-8 only up to twice its size
	case res.LinksCut:
		out.Truncated = CutLinks
	case res.Truncated:
		out.Truncated = CutTokens
	}
	return out
}

// asks reports whether one of fields, of a form that sends its GET to
// the page itself, holds what the page's URL, raw, sets under the field's
// name (Result.Search): a search box on its results, not one in a page's
// header that sends to the search, nor an item's form that names it. An
// action resolves against base (<base href>), if any.
func asks(raw, base string, fields []extract.Field) bool {
	if len(fields) == 0 || !strings.Contains(raw, "?") {
		return false
	}
	page, err := neturl.Parse(raw)
	if err != nil {
		return false
	}
	from := page
	if base != "" {
		if b, err := page.Parse(strings.TrimSpace(base)); err == nil {
			from = b
		}
	}
	q := page.Query() // what parses of a query with a bad escape
	for _, f := range fields {
		to, err := from.Parse(strings.TrimSpace(f.Action))
		if err != nil || !sameHost(to, page) || to.Path != page.Path && f.Action != "" {
			continue
		}
		for _, v := range q[f.Name] {
			if v = strings.TrimSpace(v); v != "" && v == strings.TrimSpace(f.Value) {
				return true
			}
		}
	}
	return false
}

// sameHost reports whether a and b name one host and port, whatever the
// case, a default port written or not.
func sameHost(a, b *neturl.URL) bool {
	port := func(u *neturl.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// Text reads plain text: its words, for near-duplicates; it has no links
// (weft does not guess URLs in prose).
type Text struct{}

// Name implements Handler.
func (Text) Name() string { return "text" }

// Accepts implements Handler.
func (Text) Accepts(mt string) bool { return mt == "text/plain" }

// Read implements Handler.
func (Text) Read(d Doc) Result {
	var r Result
	r.NoIndex, r.NoFollow = extract.RobotsTag(d.Header.Values("X-Robots-Tag"), d.Token)
	if looksBinary(d.Body) {
		r.Err = ErrBinary
		return r
	}
	if d.Words {
		var body []byte
		body, r.Charset = toUTF8(d.Body, d.Header.Get("Content-Type"))
		r.Words = extract.AppendTextWords(d.WordBuf, body, extract.DefaultMaxWords)
	}
	return r
}

// Image is the handler of the image module (--with-images): it accepts
// images, which are archived like every response and hold nothing to read.
// With it in the Set, the crawler also fetches the images that HTML pages
// show (their Embeds), through the same filters, robots.txt and politeness
// as links.
type Image struct{}

// Name implements Handler.
func (Image) Name() string { return "image" }

// Accepts implements Handler.
func (Image) Accepts(mt string) bool { return strings.HasPrefix(mt, "image/") }

// Read implements Handler.
func (Image) Read(Doc) Result { return Result{} }

// ReadsEmbeds implements EmbedReader.
func (Image) ReadsEmbeds() {}

// Requisites is the handler of page requisites (--requisites): it accepts
// what pages need to render, style sheets, scripts, images, fonts, audio
// and video, which are archived like every response; it reads style
// sheets for their url()s and @imports (Embeds), fetched in turn. With
// it in the Set, the crawler fetches each HTML page's requisites
// (extract.Result.Embeds), through robots.txt, politeness and the SSRF
// guard, one hop past the scope.
type Requisites struct{}

// Name implements Handler.
func (Requisites) Name() string { return "requisite" }

// Accepts implements Handler.
func (Requisites) Accepts(mt string) bool {
	switch {
	case mt == "text/css", mt == "text/javascript", mt == "application/javascript", mt == "application/x-javascript",
		mt == "application/json", mt == "application/manifest+json", mt == "application/wasm", mt == "image/svg+xml":
		return true
	}
	for _, p := range [...]string{"image/", "font/", "audio/", "video/", "application/font-", "application/x-font-"} {
		if strings.HasPrefix(mt, p) {
			return true
		}
	}
	return mt == "application/vnd.ms-fontobject"
}

// Read implements Handler: a style sheet's URLs; nothing of the others.
func (Requisites) Read(d Doc) Result {
	if d.MediaType != "text/css" || !d.Embeds {
		return Result{}
	}
	body, cs := toUTF8(d.Body, d.Header.Get("Content-Type"))
	r := Result{Embeds: extract.CSS(body, d.MaxLinks), Charset: cs}
	if d.Truncated != "" {
		r.Truncated = "fetch:" + d.Truncated
	}
	return r
}

// ReadsEmbeds implements EmbedReader.
func (Requisites) ReadsEmbeds() {}

// An EmbedReader is a Handler of resources that pages embed rather than
// link to: with one in the Set, pages' Embeds are collected and fetched.
type EmbedReader interface {
	Handler
	ReadsEmbeds()
}

// WantsEmbeds reports whether the Set holds an EmbedReader, followed by
// extensions (Extend) or not.
func (s Set) WantsEmbeds() bool {
	for _, h := range s {
		if x, ok := h.(extended); ok {
			h = x.base
		}
		if _, ok := h.(EmbedReader); ok {
			return true
		}
	}
	return false
}

// Sitemap reads sitemaps (package sitemap): a urlset's pages and an
// index's sitemaps are its links, Tag "url" and "sitemap" (a crawler
// fetches the latter as sitemaps again). XML that is not a sitemap yields
// nothing, quietly; a sitemap that fails to parse yields what was read
// before the failure and the error in Result.Err, for the crawler to log
// with the URL; one the fetcher cut short, what was read and Truncated.
type Sitemap struct{}

// Name implements Handler.
func (Sitemap) Name() string { return "sitemap" }

// Accepts implements Handler: XML, and gzip, which servers send for
// sitemap.xml.gz (the magic bytes decide, not the type).
func (Sitemap) Accepts(mt string) bool {
	switch mt {
	case "application/xml", "text/xml", "application/gzip", "application/x-gzip":
		return true
	}
	return false
}

// Read implements Handler.
func (Sitemap) Read(d Doc) Result {
	res, err := sitemap.Parse(bytes.NewReader(d.Body), sitemap.Limits{})
	tag := "url"
	if res.Kind == sitemap.Index {
		tag = "sitemap"
	}
	switch {
	case errors.Is(err, sitemap.ErrNotSitemap):
		err = nil // other XML (a feed, XHTML): nothing to read, nothing wrong
	case err != nil && d.Truncated != "":
		// The fetcher's body cap cut the file: what was read is all there
		// is, as if the protocol's limit had.
		err, res.Truncated = nil, "fetch:"+d.Truncated
	}
	out := Result{Err: err, Links: make([]extract.Link, 0, len(res.Entries)), Truncated: res.Truncated}
	if res.Kind == sitemap.URLSet {
		out.Hints = make([]Hint, 0, len(res.Entries))
	}
	for _, e := range res.Entries {
		out.Links = append(out.Links, extract.Link{URL: e.Loc, Tag: tag})
		if out.Hints != nil {
			out.Hints = append(out.Hints, Hint{LastMod: e.LastMod, Priority: e.Priority})
		}
	}
	return out
}
