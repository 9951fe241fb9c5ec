package crawl

import (
	"context"
	"net/http"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/state"
	"github.com/weft-crawler/weft/internal/store"
)

// pageRun is one lease on its way through the crawl:
//
//	route → fetch → archive → read → judge links → conclude → commit → complete
//
// Each stage is a method of the crawler that takes the run, reads what
// the stages before it left and leaves what it decided: handle routes
// it, runPage takes it from fetch to conclude, finish commits and
// completes it. A lease that fetches no page
// (its host's robots.txt, a drain, a refusal) goes from the route to the
// commit with out set.
type pageRun struct {
	l      frontier.Lease
	deeper int          // the depth Shallowest took off l's: the rank prior keeps it
	pb     *state.Batch // everything the lease changes, committed at once
	u      canon.URL    // l.URL, parsed
	worker int          // the number of the worker that runs it, for the crawl log

	// fetch: what the last visit left (continuous mode), for a
	// conditional request, and the answer.
	prev  store.URLRecord
	first store.DigestRecord // the capture prev's payload digest names
	cond  http.Header
	resp  *fetch.Response

	// archive
	cp          archive.Capture
	archived    bool // cp is in the WARC file
	notModified bool // a 304 to the conditional request: a revisit of first
	indexed     bool // cp's line of the capture index is staged
	mt          string
	rec         fetchlog.Record // its line of the fetch log

	// read: the links and requisites found, for the judge; every link
	// that resolved (the page's outlinks, followed or not); the pages
	// it votes for (in-links).
	read     bool
	copied   bool   // its words and links copy an earlier page's, whatever its depth (judge.Copy)
	text     uint64 // the hash of its visible words and links (extract.TextHash), 0 if not read whole
	followed bool
	found    []found
	links    []string
	votes    *importance.Votes
	alias    string      // the page's URL when it answered 200 whole: see judge.Candidate.Page
	render   *renderable // an HTML page the renderer may read

	out      leaseOutcome
	reserved bool // a page of its seed's budget is reserved for it

	bufs *pageBuffers // the worker's, which found and votes are taken from
}

// pageBuffers are what a worker's pages collect on their way to the
// judge, kept from page to page: a page leads to a hundred URLs, and a
// slice and a map of that size made anew for each page doubled the bytes
// a page allocates.
type pageBuffers struct {
	found []found
	votes *importance.Votes
}

// newPageRun starts l's run with the worker's buffers.
func newPageRun(l frontier.Lease, pb *state.Batch, bufs *pageBuffers) *pageRun {
	return &pageRun{l: l, pb: pb, found: bufs.found[:0], bufs: bufs}
}

// maxKeptBuffer bounds what a worker keeps of its buffers from page to
// page: a sitemap of 50,000 URLs fills them far past an ordinary page's
// hundred links, and a worker that kept that size for good would hold
// megabytes for every page after it.
const maxKeptBuffer = 4096

// release hands the run's buffers back to its worker, emptied; buffers
// grown past maxKeptBuffer are let go.
func (p *pageRun) release() {
	if p.bufs == nil {
		return
	}
	clear(p.found) // no candidate's strings outlive the page
	p.bufs.found = p.found[:0]
	if cap(p.found) > maxKeptBuffer {
		p.bufs.found = nil
	}
	p.bufs.votes.Reset(maxKeptBuffer)
}

// found is a URL a page leads to (a link, a requisite, a redirect's
// target, a sitemap a robots.txt names), on its way to the judge.
type found struct {
	judge.Candidate
	listed    *content.Hint // a page a sitemap lists, with what it says of it
	requisite bool          // counted as a requisite found, and queued
	redirect  bool          // a redirect's target: one seen already is counted as such
	seed      bool          // a page a seed sitemap lists: a seed itself
}

// runPage takes a page its route let be fetched, under its host's rules
// pol, through the pipeline's stages up to its commit.
func (c *Crawler) runPage(ctx context.Context, p *pageRun, pol *robots.Policy) {
	p.deeper = c.judge.Shallowest(&p.l)
	if c.fetchPage(ctx, p) {
		c.archivePage(p)
		c.readPage(p)
		c.judgeLinks(p)
		c.conclude(p)
	}
	p.out.res.SetCrawlDelay, p.out.res.CrawlDelay = true, pol.CrawlDelay
	if p.render != nil {
		c.renderPage(ctx, p, pol)
	}
}

// mediaType is the media type of a response: its Content-Type's, or what
// its body sniffs as when it has none.
func mediaType(resp *fetch.Response) string {
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = http.DetectContentType(resp.Decoded)
	}
	return archive.MediaType(ct)
}
