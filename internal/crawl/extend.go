package crawl

import (
	"fmt"
	"net/http"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/warc"
)

// A LinkFilter judges the URLs a crawl comes upon, after its scope has
// accepted them and before robots.txt, the policies and the seen set
// (Config.Filters). Seeds are not judged: they are in the crawl by
// definition. Judge is called from many workers at once, on every link
// of every page: it must be quick and must not block.
type LinkFilter interface {
	// Judge returns "" to accept the URL, or why it is refused: a short,
	// stable word, which counts the refusal among the summary's
	// rejections (the first 64 distinct words are counted apart, the rest
	// as "filter").
	Judge(Candidate) string
}

// Candidate is a URL a LinkFilter judges.
type Candidate struct {
	URL   string // canonical and absolute
	Host  string // its authority (host, and port when not the scheme's default)
	Depth int    // link hops from a seed
	Via   string // the page (or robots.txt) it was found on
	Kind  string // LinkPage, LinkRedirect, LinkResource or LinkRequisite
}

// Kinds of Candidate.
const (
	LinkPage      = "link"      // a link of a page, or a page a sitemap lists
	LinkRedirect  = "redirect"  // the target of a redirect
	LinkResource  = "resource"  // fetched for what it is: a sitemap, an image (WithImages)
	LinkRequisite = "requisite" // what a page needs to render (Requisites)
)

// kindOf names how a URL came to be judged, for a LinkFilter.
func kindOf(as admission, hops int) string {
	switch {
	case as.requisite():
		return LinkRequisite
	case as == asResource || as == asOfferedResource:
		return LinkResource
	case hops > 0:
		return LinkRedirect
	}
	return LinkPage
}

// filter asks the crawl's link filters about u; "" accepts it.
func (a *admitter) filter(u canon.URL, depth, hops int, via string, as admission) string {
	if len(a.filters) == 0 {
		return ""
	}
	cand := Candidate{URL: u.String, Host: u.Authority, Depth: depth, Via: via, Kind: kindOf(as, hops)}
	for _, f := range a.filters {
		if why := f.Judge(cand); why != "" {
			a.stats.rejectBounded(why)
			return why
		}
	}
	return ""
}

// A PageConsumer is given every page the crawl fetched (not robots.txt),
// once its capture is durable: its body, what was read in it and where it
// was archived (Config.Pages). It is called from many workers at once,
// and the page's host waits while it runs, so a slow consumer slows the
// crawl rather than piling pages up in memory. An error stops the crawl,
// as a page sink's does. Unlike a page sink's events, pages are not kept
// for a consumer across a crash: one is delivered at most once.
type PageConsumer interface {
	ConsumePage(*FetchedPage) error
}

// FetchedPage is a page as a PageConsumer receives it. Its slices and
// maps are the crawl's: a consumer must not change them, nor keep them
// past its return without copying.
type FetchedPage struct {
	URL       string
	Depth     int    // link hops from a seed
	Via       string // the page it was found on; "" for a seed
	Requisite bool   // fetched as another page's requisite
	FetchedAt time.Time
	Status    int
	Header    http.Header
	MediaType string // lower-case, without parameters
	// Body is the payload with its Content-Encoding undone, up to the
	// body cap; Truncated says why it was cut ("" if whole).
	Body      []byte
	Truncated string
	// Read says a content handler read the page: Links and Fields are
	// then what it found (a revisit of a page read before is not read
	// again).
	Read bool
	// Links are every link the handlers found, resolved, followed or
	// not, and the page's requisites.
	Links []string
	// Fields are what extensions extracted (content.Extension).
	Fields map[string]any
	// Record is where the response record is in the WARC files; Revisit
	// says it is a revisit record, whose payload is an earlier capture's.
	Record  warc.Location
	Revisit bool
}

// stagePage keeps a page for the consumers, to be given them once its
// batch commits.
func (c *Crawler) stagePage(pb *pageBatch, l frontier.Lease, resp *fetch.Response, mt string, cp capture, read bool, links []string) {
	if len(c.cfg.Pages) == 0 || cp.key == "" {
		return
	}
	pb.pages = append(pb.pages, &FetchedPage{
		URL: resp.URL, Depth: l.Depth, Via: l.Via, Requisite: l.Requisite, FetchedAt: resp.Start,
		Status: resp.StatusCode, Header: resp.Header, MediaType: mt, Body: resp.Decoded, Truncated: resp.Truncated,
		Read: read, Links: links, Fields: cp.fields, Record: cp.loc, Revisit: cp.revisit,
	})
}

// deliverPages gives the consumers the pages of a batch that committed;
// the first error stops the crawl.
func (c *Crawler) deliverPages(pages []*FetchedPage) {
	for _, p := range pages {
		for _, pc := range c.cfg.Pages {
			if err := pc.ConsumePage(p); err != nil {
				c.fail(fmt.Errorf("crawl: page consumer, on %s: %w", p.URL, err))
				return
			}
		}
	}
}

// countExtensions counts and logs how the extensions fared on a document.
func (c *Crawler) countExtensions(url string, runs []content.ExtensionRun) {
	for _, r := range runs {
		c.stats.inc(c.stats.extended, r.Name, 1)
		if r.Err != nil {
			c.stats.inc(c.stats.extFailed, r.Name, 1)
			c.log.Warn("extension failed on a page; the crawl goes on", "url", url, "extension", r.Name, "err", r.Err)
		}
	}
}

// eventFields puts a capture's fields in its event.
func eventFields(e events.Event, fields map[string]any) events.Event {
	e.Fields = fields
	return e
}
