// Package plugin holds the types a program takes part in a crawl with:
// Handlers read responses by media type, LinkFilters judge the URLs a
// crawl finds, a Scope says where it may go, and Consumers are given the
// pages it fetched. The crawl calls them; the root package weft names them
// for programs, as aliases of these.
package plugin

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/extract"
)

// A Handler reads the responses of the media types it accepts. weft has
// read a page's links, robots directives and words itself before (for
// HTML and plain text); a handler adds to that. It sees only successful
// (2xx) responses, and not a revisit of a payload it read before.
//
// Handle is called from many goroutines at once, and the page's host
// waits while it runs: it must bound its own time. An error (or a panic)
// is its failure on that page: counted under its name, logged with the
// URL, what it returned dropped, and the crawl goes on. A Handler with a
// method Name() string is counted under that name; others as "handler1",
// "handler2", ... by their place (NameOf).
type Handler interface {
	// Accepts reports whether the handler reads responses of mediaType,
	// lower-case and without parameters ("text/html").
	Accepts(mediaType string) bool
	// Handle reads one response.
	Handle(*Response) (Result, error)
}

// NameOf is h's Name, if it has one, else "handler" and its position i
// (from 0) among the crawl's handlers.
func NameOf(h Handler, i int) string {
	if n, ok := h.(interface{ Name() string }); ok && n.Name() != "" {
		return n.Name()
	}
	return fmt.Sprintf("handler%d", i+1)
}

// Response is a response a Handler reads. Its slices and maps are the
// crawl's: do not change them, nor keep them past Handle without copying.
type Response struct {
	URL       string
	MediaType string // lower-case, without parameters
	Header    http.Header
	// Body is the payload, its Content-Encoding undone, up to the body
	// cap (10 MiB; 32 MiB for PDFs); Truncated says it was cut, and Cut
	// why ("length", "time", "disconnect").
	Body      []byte
	Truncated bool
	Cut       string
}

// Result is what a Handler found in a response.
type Result struct {
	// Links are more URLs to follow: absolute, or relative to the page
	// (as its own links are, against its <base href>). They pass the
	// scope, the filters and robots.txt like any link.
	Links []string
	// Fields are values the handler extracted, by name: they go with the
	// page to the Consumers (Page.Fields) and in its event. A later
	// handler's field replaces an earlier one's of the same name. Values
	// should be what encoding/json can write.
	Fields map[string]any
	// NoFollow says that none of the page's links is followed, whoever
	// found them; NoIndex marks the page as not to be indexed (counted
	// and logged, as a page's own noindex is).
	NoFollow bool
	NoIndex  bool
}

// HandlerFunc makes a Handler named name of fn, for the media types
// listed: "text/html", a whole type "text/*", or "*/*" for every type.
func HandlerFunc(name string, fn func(*Response) (Result, error), mediaTypes ...string) Handler {
	return funcHandler{name: name, fn: fn, types: mediaTypes}
}

type funcHandler struct {
	name  string
	fn    func(*Response) (Result, error)
	types []string
}

func (h funcHandler) Name() string                       { return h.name }
func (h funcHandler) Accepts(mt string) bool             { return MatchType(h.types, mt) }
func (h funcHandler) Handle(r *Response) (Result, error) { return h.fn(r) }

// MatchType reports whether media type mt matches one of the patterns:
// "text/html", a whole type "text/*", or "*/*".
func MatchType(patterns []string, mt string) bool {
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		switch {
		case p == "*/*", p == mt:
			return true
		case strings.HasSuffix(p, "/*") && strings.HasPrefix(mt, p[:len(p)-1]):
			return true
		}
	}
	return false
}

// A LinkFilter accepts or refuses each URL the crawl finds within its
// scope (seeds are not judged), before robots.txt and the check for URLs
// already seen. Filter is called from many goroutines at once, on every
// link of every page: it must be quick and must not block.
type LinkFilter interface {
	// Filter returns "" to accept the link, or why it is refused: a short
	// word that stays the same for one rule ("faceted", "logout"), which
	// counts the refusal among the crawl's rejections (the first 64
	// distinct words apart, the rest as "filter").
	Filter(Link) (reason string)
}

// LinkFilterFunc makes a LinkFilter of a function.
type LinkFilterFunc func(Link) string

// Filter calls f(l).
func (f LinkFilterFunc) Filter(l Link) string { return f(l) }

// Link is a URL found by the crawl, as a LinkFilter judges it.
type Link struct {
	URL   string // canonical and absolute
	Host  string // host, and port when it is not the scheme's default
	Depth int    // link hops from a seed
	From  string // the page (or robots.txt) it was found on
	Kind  string // how it was found: LinkPage, LinkRedirect, LinkResource or LinkRequisite
}

// Kinds of Link.
const (
	LinkPage      = "link"      // a page's link, or a page a sitemap lists
	LinkRedirect  = "redirect"  // the target of a redirect
	LinkResource  = "resource"  // fetched for what it is: a sitemap, an image a page shows
	LinkRequisite = "requisite" // what a page needs to render
)

// A Scope says which URLs a crawl may go to. A URL outside it is not
// fetched, except a page's requisites, which may be one hop outside (a
// style sheet on a CDN). Seeds are always in. weft's own rules still
// apply inside a scope: http and https only, no extensions of media and
// archives, the depth limit, no path repeating its segments.
type Scope interface {
	// Contains reports whether the crawl may go to u, a canonical URL.
	// It is called as a LinkFilter is.
	Contains(u *url.URL) bool
}

// ScopeFunc makes a Scope of a function.
type ScopeFunc func(*url.URL) bool

// Contains calls f(u).
func (f ScopeFunc) Contains(u *url.URL) bool { return f(u) }

// A Consumer is given every page the crawl fetches (robots.txt aside),
// once its response is archived and the crawl's state that records it is
// on disk. Consume is called from many goroutines at once, and the page's
// host waits while it runs, so a slow consumer slows the crawl rather
// than piling pages up in memory. An error stops the crawl. A page is
// given at most once: after a crash, the pages of the last moments before
// it are not given again (the WARC files hold them).
type Consumer interface {
	Consume(*Page) error
}

// ConsumerFunc makes a Consumer of a function.
type ConsumerFunc func(*Page) error

// Consume calls f(p).
func (f ConsumerFunc) Consume(p *Page) error { return f(p) }

// Page is a fetched page as a Consumer receives it. Its slices and maps
// are the crawl's: do not change them, nor keep them past Consume without
// copying.
type Page struct {
	URL       string
	Depth     int    // link hops from a seed
	Via       string // the page it was found on; "" for a seed
	Requisite bool   // fetched because another page needs it to render
	FetchedAt time.Time
	Status    int
	Header    http.Header
	MediaType string // lower-case, without parameters
	// Body is the payload, its Content-Encoding undone, up to the body
	// cap; Truncated says it was cut there, and Cut why.
	Body      []byte
	Truncated bool
	Cut       string
	// Read says weft or a Handler read the page; Links and Fields are then
	// what they found.
	Read bool
	// Title is an HTML page's <title> as document.title gives it, "" for
	// none.
	Title string
	// Links are the page's links and requisites, absolute, whether they
	// were followed or not.
	Links []string
	// Fields are what the Handlers extracted, by name.
	Fields map[string]any
	// Record is where the response is archived; Revisit says the record
	// is a revisit, whose payload is an earlier capture's.
	Record  Record
	Revisit bool
}

// Record is where a response is in the WARC files: the file's name under
// DataDir/warc (on disk it ends in ".open" until the crawl finishes it),
// and the byte range of the record's gzip member.
type Record struct {
	File           string
	Offset, Length int64
	ID             string // the record's WARC-Record-ID
}

// maxText bounds Text.
const maxText = 1 << 20

// Text returns the text the page shows (an HTML page's visible text, its
// white space made single spaces; a plain-text page's body), at most 1 MiB
// of it; "" for other media types.
func (p *Page) Text() string {
	switch p.MediaType {
	case "text/html", "application/xhtml+xml":
		return extract.VisibleText(p.Body, maxText)
	case "text/plain":
		return string(p.Body[:min(len(p.Body), maxText)])
	}
	return ""
}
