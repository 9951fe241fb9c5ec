package weft

import (
	"net/http"
	"strings"

	"github.com/weft-crawler/weft/internal/content"
)

// A Handler reads the responses of the media types it accepts. weft has
// read a page's links, robots directives and words itself before (for
// HTML and plain text); a handler adds to that. It sees only successful
// (2xx) responses, and not a revisit of a payload it read before.
//
// Handle is called from many goroutines at once, and the page's host
// waits while it runs: it must bound its own time. An error (or a panic)
// is its failure on that page: counted in Summary.HandlerFailed under its
// name, logged with the URL, what it returned dropped, and the crawl goes
// on. A Handler with a method Name() string is counted under that name;
// others as "handler1", "handler2", ... by their place in Config.Handlers.
type Handler interface {
	// Accepts reports whether the handler reads responses of mediaType,
	// lower-case and without parameters ("text/html").
	Accepts(mediaType string) bool
	// Handle reads one response.
	Handle(*Response) (Result, error)
}

// Response is a response a Handler reads. Its slices and maps are the
// crawl's: do not change them, nor keep them past Handle without copying.
type Response struct {
	URL       string
	MediaType string // lower-case, without parameters
	Header    http.Header
	// Body is the payload, its Content-Encoding undone, up to the body
	// cap (10 MiB; 32 MiB for PDFs); Truncated says it was cut there.
	Body      []byte
	Truncated bool
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
	// found them.
	NoFollow bool
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
func (h funcHandler) Accepts(mt string) bool             { return matchType(h.types, mt) }
func (h funcHandler) Handle(r *Response) (Result, error) { return h.fn(r) }

// matchType reports whether media type mt matches one of the patterns.
func matchType(patterns []string, mt string) bool {
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

// extension is a Handler as the crawl calls it.
type extension struct {
	name string
	h    Handler
}

func (e extension) Name() string           { return e.name }
func (e extension) Accepts(mt string) bool { return e.h.Accepts(mt) }

func (e extension) Extend(d content.Doc) (content.Extra, error) {
	res, err := e.h.Handle(&Response{URL: d.URL, MediaType: d.MediaType, Header: d.Header, Body: d.Body, Truncated: d.Truncated != ""})
	if err != nil {
		return content.Extra{}, err
	}
	return content.Extra{Links: res.Links, Fields: res.Fields, NoFollow: res.NoFollow}, nil
}
