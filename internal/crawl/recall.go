package crawl

import (
	"fmt"
	"net/http"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/render"
	"github.com/weft-crawler/weft/internal/store"
)

// A requisite is fetched once per crawl, whether a render or a page's
// requisite list asks for it first. A browser's request for a URL the
// crawl has captured is answered from the archive (recall); a URL a
// render fetched counts as seen, so that no page queues it again, and a
// requisite queued before a render fetched it is done without a request
// when its lease comes (renderedAlready).

// lastCapture returns the latest capture of u this crawl made that a
// browser may be answered from: a final answer (not a 429, a 5xx or a
// 304, which a request now could answer otherwise), made at or after
// since.
func (c *Crawler) lastCapture(u canon.URL, since time.Time) (store.CaptureRecord, bool, error) {
	if rec, ok := c.arch.PendingCapture(u.String); ok && recallable(rec, since) {
		return rec, true, nil
	}
	var best store.CaptureRecord
	found := false
	err := c.state.DB.CapturesNewestFirst(u.SURT(), func(r store.CaptureRecord) bool {
		if r.URL == u.String {
			best, found = r, true
		}
		return !found
	})
	if err != nil {
		return best, false, fmt.Errorf("crawl: the captures of %s: %w", u.String, err)
	}
	return best, found && recallable(best, since), nil
}

func recallable(r store.CaptureRecord, since time.Time) bool {
	s := r.Status
	return s >= 200 && s < 500 && s != http.StatusNotModified && s != http.StatusTooManyRequests && !r.Date.Before(since)
}

// recall answers a browser's request from the capture rec: the response
// header and the payload as the archive holds them (a revisit's from the
// capture it refers to), the payload's Content-Encoding undone. A body
// that was cut by a cap is refused, as the fetch that cut it was.
func (c *Crawler) recall(rec store.CaptureRecord) (*render.Response, error) {
	if c.replay == nil {
		return nil, fmt.Errorf("crawl: %s: the archive is not this crawl's WARC files", rec.URL)
	}
	st, err := c.replay.ReadRecord(rec.File, rec.Offset, rec.Length)
	if err != nil {
		return nil, err
	}
	if rec.Kind == store.CaptureRevisit {
		orig, ok := c.arch.PendingDigest(rec.Digest)
		if !ok {
			if orig, ok, err = c.state.DB.GetDigest(rec.Digest); err != nil {
				return nil, err
			}
		}
		if !ok {
			return nil, fmt.Errorf("crawl: %s: a revisit of a payload the index does not hold", rec.URL)
		}
		o, err := c.replay.ReadRecord(orig.File, orig.Offset, orig.Length)
		if err != nil {
			return nil, err
		}
		st.Payload, st.Truncated = o.Payload, o.Truncated
	}
	if st.Truncated != "" {
		return nil, errRefused{fmt.Sprintf("%s was cut by a cap (%s) when it was fetched", rec.URL, st.Truncated)}
	}
	status, header, err := st.Response()
	if err != nil {
		return nil, fmt.Errorf("crawl: %s: the archived response: %w", rec.URL, err)
	}
	body, err := c.fetcher.Decode(header, st.Payload)
	if err != nil {
		return nil, errRefused{fmt.Sprintf("%s: its archived body does not decode: %v", rec.URL, err)}
	}
	return &render.Response{Status: status, Header: header, Body: body}, nil
}
