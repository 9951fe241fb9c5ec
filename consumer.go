package weft

import (
	"net/http"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/extract"
)

// A Consumer is given every page the crawl fetches (robots.txt aside),
// once its response is archived and the crawl's state that records it is
// on disk. Consume is called from many goroutines at once, and the page's
// host waits while it runs, so a slow consumer slows the crawl rather
// than piling pages up in memory. An error stops the crawl: Run returns
// it. A page is given at most once: after a crash, the pages of the last
// moments before it are not given again (the WARC files hold them).
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
	// cap; Truncated says it was cut there.
	Body      []byte
	Truncated bool
	// Read says weft or a Handler read the page; Links and Fields are then
	// what they found.
	Read bool
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

// consumer is a Consumer as the crawl calls it.
type consumer struct{ c Consumer }

func (c consumer) ConsumePage(f *crawl.FetchedPage) error {
	return c.c.Consume(&Page{
		URL: f.URL, Depth: f.Depth, Via: f.Via, Requisite: f.Requisite, FetchedAt: f.FetchedAt,
		Status: f.Status, Header: f.Header, MediaType: f.MediaType, Body: f.Body, Truncated: f.Truncated != "",
		Read: f.Read, Links: f.Links, Fields: f.Fields,
		Record:  Record{File: f.Record.File, Offset: f.Record.Offset, Length: f.Record.Length, ID: f.Record.RecordID},
		Revisit: f.Revisit,
	})
}
