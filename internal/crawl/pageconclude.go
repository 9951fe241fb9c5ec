package crawl

import (
	"fmt"
	"time"

	"github.com/weft-crawler/weft/internal/answer"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/schedule"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// conclude stages the rest of what the page leaves: its line of the
// capture index, its outlinks record, the page for the consumers, its
// line of the fetch log; and says how its host's clock moves and, in
// continuous mode, what the visit taught about the URL.
func (c *Crawler) conclude(p *pageRun) {
	resp := p.resp
	if p.read {
		if err := c.arch.Outlinks(resp, p.cp.Loc.RecordID, p.l.Via, p.l.Depth, p.links); err != nil {
			c.fail(fmt.Errorf("crawl: %w", err))
		}
		if p.followed {
			c.arch.Followed(&p.pb.Staging, p.cp, p.l.Depth, len(p.links) == 0)
		}
	}
	c.stageCapture(p)
	c.flog.Write(p.rec)
	signal, retryAfter := answer.Signal(resp, time.Now())
	res := frontier.Result{Fetched: true, Signal: signal, RetryAfter: retryAfter, Took: resp.Duration, Cause: answer.Cause(resp, signal)}
	if signal == frontier.Throttled || signal == frontier.Unavailable {
		// Come back later: the URL stays queued (a 503, and 429s in a row over MaxBackoff, count toward giving
		// the host up); without Retry-After, from a host that answers, it waits till the rest is asked.
		res.Retry = true
		res.Later = retryAfter == 0 && p.l.Answered > 0 && c.retries()
		p.render = nil
	}
	p.out = leaseOutcome{res: res, status: resp.StatusCode, outcome: p.rec.Outcome}
	if (!res.Retry || res.Later) && p.votes == nil {
		// Fetched (or put aside), and handed out no cash (judgeLinks' Credit
		// says so of a page that did): a link to it is not worth queuing it again.
		c.rank.Fetched(seen.KeyOf(p.l.URL))
	}
	switch {
	case res.Retry:
	case c.cfg.Recrawl != nil:
		p.out.visit = c.sched.Learn(p.l, p.prev, resp, schedule.Seen{Capture: p.cp, Text: p.text, NotModified: p.notModified})
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.Truncated == "":
		// A crawl that ends keeps what a later recrawl of its directory
		// asks with, conditionally: whichever command fetched a page
		// first, the next visit sends its validators.
		p.out.visit = schedule.Once(store.URLRecord{LastFetch: resp.Start, Digest: p.cp.Digest,
			ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")})
	case answer.Transient(resp.StatusCode, 0):
		c.retryLater(p)
	}
}

// maxRetries is how many times a crawl that ends asks again for a URL
// whose fetch failed in a way the next try may not (answer.Transient).
// wget tries 20 times, Heritrix 30 over hours, Scrapy twice more; a
// crawl that ends asks once more, after the rest of its host's URLs.
const maxRetries = 1

// retryLater queues the lease's URL once more (maxRetries), Low, after the
// URLs its host has queued, when its fetch failed in a way the next try
// may not, a first time: a crawl that ends loses no page to a moment's
// failure. Its record keeps the failures (Errors), so a restart does not
// try it again from the start. Of the new entry and another of the URL (a
// copy queued as its rank rose), the one leased last finds the URL
// fetched and is dropped (state.State.Retried). A continuous crawl's
// schedule retries a failed URL itself (package recrawl). A node of a
// cluster does not: its peers learn a URL's fetch as done, and a node
// that took its partition over would not know its failures. Nor does a
// crawl stopping on an error, which keeps the lease's entry.
func (c *Crawler) retryLater(p *pageRun) {
	l := p.l
	if !c.retries() || l.RobotsFor != "" || c.failed.Load() {
		return
	}
	part := partition.Of(l.Host, c.cfg.Partitions)
	k := seen.KeyOf(l.URL)
	rec, _, err := c.state.DB.GetURL(uint16(part), l.Host, k)
	if err != nil {
		c.fail(fmt.Errorf("crawl: the record of %s, which failed: %w", l.URL, err))
		return
	}
	p.out.visit = schedule.Once(store.URLRecord{LastFetch: time.Now(), Errors: rec.Errors + 1})
	switch {
	case rec.Errors >= maxRetries:
		// Its last try. An answer (a 5xx) says the page is broken, not
		// its server, which answered it twice: the host's clock hears an
		// answer, so that a site's broken pages, their second tries
		// coming last and in a row, do not park or give up their host.
		if p.out.res.Signal == frontier.Failed && p.out.status > 0 {
			p.out.res.Signal, p.out.res.Cause = frontier.OK, ""
		}
		return
	case c.state.FirstWaits(l, k):
		// A copy queued as the URL's rank rose failed while its first
		// entry waits: that entry is the second try, and stands for the
		// URL; the copy is gone (copiesQueued).
		p.pb.Waits = append(p.pb.Waits, l.URL)
		c.stats.retried.Add(1)
		c.stats.droppedCopies.Add(1)
		return
	case !c.state.Retried(k):
		return
	}
	c.stats.retried.Add(1)
	p.pb.Items = append(p.pb.Items, frontier.Item{URL: l.URL, Fetch: l.Fetch, Host: l.Host, Depth: l.Depth, Priority: frontier.Low,
		Rank: l.Rank, Hops: l.Hops, Via: l.Via, Requisite: l.Requisite, Sitemap: l.Sitemap, Seed: l.Seed, Path: l.Path})
}

// stageCapture stages the page's line of the capture index and keeps the
// page for the consumers, to be given them once its batch commits. It is
// called once per archived page: by conclude, or by handle's recovery
// after a panic (the record is in the WARC file already).
func (c *Crawler) stageCapture(p *pageRun) {
	if p.indexed || !p.archived {
		return
	}
	p.indexed = true
	c.index(p.cp, p.pb)
	c.stagePage(p)
}

// retries reports whether the crawl asks a failed URL again itself (retryLater): not weft serve nor a cluster node.
func (c *Crawler) retries() bool { return c.cfg.Recrawl == nil && c.cfg.Cluster == nil }
