package crawl

import (
	"fmt"

	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/plugin"
)

// stagePage keeps a page for the consumers, to be given them once its
// batch commits.
func (c *Crawler) stagePage(p *pageRun) {
	cp, resp, l := p.cp, p.resp, p.l
	if len(c.cfg.Pages) == 0 || cp.Key == "" {
		return
	}
	p.pb.Pages = append(p.pb.Pages, &plugin.Page{
		URL: resp.URL, Depth: l.Depth, Via: l.Via, Requisite: l.Requisite, FetchedAt: resp.Start,
		Status: resp.StatusCode, Header: resp.Header, MediaType: p.mt, Body: resp.Decoded,
		Truncated: resp.Truncated != "", Cut: resp.Truncated, Read: p.read, Title: cp.Rec.Title, Links: p.links, Fields: cp.Fields,
		Record:  plugin.Record{File: cp.Loc.File, Offset: cp.Loc.Offset, Length: cp.Loc.Length, ID: cp.Loc.RecordID},
		Revisit: cp.Revisit,
	})
}

// deliverPages gives the consumers the pages of a batch that committed;
// the first error stops the crawl.
func (c *Crawler) deliverPages(pages []*plugin.Page) {
	for _, p := range pages {
		for _, pc := range c.cfg.Pages {
			if err := pc.Consume(p); err != nil {
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
