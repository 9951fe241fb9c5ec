package crawl

import (
	"fmt"
	"net/http"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/state"
)

// archivePage writes the answer to the archive: a 304 as a revisit of the
// capture it confirms, anything else as it came (a copy of a payload
// archived already as a revisit). Its line of the capture index is staged
// by conclude, once reading has added to it (its SimHash), or by handle's
// recovery after a panic: the record is in the WARC file either way.
func (c *Crawler) archivePage(p *pageRun) {
	resp, u := p.resp, &p.u
	p.notModified = resp.StatusCode == http.StatusNotModified && p.cond != nil
	if p.notModified {
		var err error
		if p.cp, err = c.arch.NotModified(resp, p.prev.Digest, p.first, u); err != nil {
			c.fail(fmt.Errorf("crawl: %w", err))
		}
	} else {
		p.cp = c.archiveResp(resp, p.pb, u)
		if resp.StatusCode == 200 && archive.Dedupable(resp) && u.String == resp.URL {
			if err := c.judge.LearnAlias(*u, p.cp.Digest); err != nil {
				c.fail(err)
			}
		}
	}
	p.archived = true
	p.mt = mediaType(resp)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 && !resp.Refused {
		c.stats.incType(c.stats.archivedTypes, p.mt)
		if p.l.Requisite {
			c.stats.requisitesArchived.Add(1)
		}
	}
	l, loc := p.l, p.cp.Loc
	p.rec = fetchlog.Record{
		Time: resp.Start, URL: l.URL, Host: l.Host, Status: resp.StatusCode, Bytes: len(resp.Body),
		DurationMS: resp.Duration.Milliseconds(), Depth: l.Depth, Hops: l.Hops, Via: l.Via,
		ContentType: resp.Header.Get("Content-Type"), Truncated: resp.Truncated,
		WARCFile: loc.File, WARCOffset: loc.Offset, Outcome: "ok",
		Path: l.Path, Worker: p.worker, SHA1: archive.DigestString(p.cp.Digest), RevisitOf: revisitOf(p.cp),
	}
}

// revisitOf is the URL of the capture cp refers to when it is a revisit
// record, "" when it is not.
func revisitOf(cp archive.Capture) string {
	if !cp.Revisit {
		return ""
	}
	return cp.First.URL
}

// archiveResp writes resp to the archive, staged in pb (nil: on its own),
// and returns its capture: a crawl that cannot write its archive must not
// pretend to go on, and stops.
func (c *Crawler) archiveResp(resp *fetch.Response, pb *state.Batch, u *canon.URL) archive.Capture {
	cp, err := c.arch.Archive(resp, staging(pb), u)
	if err != nil {
		c.fail(fmt.Errorf("crawl: %w", err))
	}
	return cp
}

// index adds cp to the capture index, staged in pb (nil: on its own).
func (c *Crawler) index(cp archive.Capture, pb *state.Batch) {
	if err := c.arch.Index(cp, staging(pb)); err != nil {
		c.fail(fmt.Errorf("crawl: %w", err))
	}
}

// staging is pb's part for the archive, nil for no batch.
func staging(pb *state.Batch) *archive.Staging {
	if pb == nil {
		return nil
	}
	return &pb.Staging
}
