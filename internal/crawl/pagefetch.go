package crawl

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/weft-crawler/weft/internal/answer"
	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// fetchPage asks the page's host for it, conditionally when the last
// visit left validators, and reports whether an answer came. When none
// did, out arms the host's clock only if a request reached the host, and
// retries the URL if shutdown cut the fetch (it stays queued for the
// next run).
func (c *Crawler) fetchPage(ctx context.Context, p *pageRun) bool {
	l := p.l
	target := l.URL
	if l.Fetch != "" {
		target = l.Fetch
	}
	start := time.Now()
	if !l.Added.IsZero() {
		c.stats.queueDelay.observe(start.Sub(l.Added))
	}
	if c.cfg.Recrawl != nil {
		p.prev, p.first, p.cond = c.sched.PreviousVisit(l)
	}
	c.judge.Fetched(l.Host)
	resp, err := c.fetcher.Get(ctx, target, p.cond)
	if err == nil {
		p.resp = resp
		c.observe(p)
		return true
	}
	kind := fetch.KindOf(err)
	if kind == fetch.KindCanceled && ctx.Err() != nil {
		// Cut by shutdown: not the host's fault, not counted, and not
		// done: the URL stays queued.
		p.out = leaseOutcome{res: frontier.Result{Fetched: true, Retry: true}}
		return false
	}
	c.stats.failed(l.Host, kind.String())
	c.log.Info("fetch failed", "url", l.URL, "host", l.Host, "err", err)
	c.flog.Write(fetchlog.Record{Time: start, DurationMS: time.Since(start).Milliseconds(), URL: l.URL, Host: l.Host, Depth: l.Depth, Hops: l.Hops, Via: l.Via,
		Outcome: "error:" + kind.String(), Error: err.Error(), Path: l.Path, Worker: p.worker, Unsent: fetch.Unsent(err)})
	p.out = leaseOutcome{res: answer.Failed(err, time.Since(start)), outcome: "error:" + kind.String()}
	c.rank.Fetched(seen.KeyOf(l.URL)) // its second try is retryLater's, after its host's other URLs
	if answer.Transient(0, kind) {
		c.retryLater(p)
	}
	return false
}

// observe counts what an answer was, and logs what a reader of the
// archive would want to know of it (a body refused, cut or not decoded).
func (c *Crawler) observe(p *pageRun) {
	resp, host := p.resp, p.l.Host
	c.stats.answered(p.l)
	c.stats.bytes.Add(int64(len(resp.Body)))
	c.stats.inc(c.stats.byClass, answer.Class(resp.StatusCode), 1)
	c.stats.fetchTime.observe(resp.Duration)
	if p.l.Priority == frontier.High {
		c.stats.lastHigh.Store(resp.Start.UnixNano())
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		c.stats.hosts.Update(host, func(v store.HostState) store.HostState {
			if resp.StatusCode == http.StatusTooManyRequests {
				v.Throttled++
			} else {
				v.ServerErrors++
			}
			return v
		})
	}
	if resp.Refused {
		c.stats.incType(c.stats.refusedTypes, archive.MediaType(resp.Header.Get("Content-Type")))
		c.log.Info("body refused by the media policy", "url", resp.URL, "host", host, "content_type", resp.Header.Get("Content-Type"))
	} else if resp.Truncated != "" {
		c.stats.truncated.Add(1)
		c.log.Info("body truncated", "url", resp.URL, "host", host, "reason", resp.Truncated, "bytes", len(resp.Body))
	}
	if resp.DecodeErr != nil {
		if errors.Is(resp.DecodeErr, fetch.ErrDecodedTooLarge) {
			c.stats.overDecode.Add(1)
		} else {
			c.stats.badCoding.Add(1)
		}
		c.log.Info("body not decoded whole", "url", resp.URL, "host", host, "err", resp.DecodeErr)
	}
}
