package crawl

import (
	"fmt"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetch"
)

// archiveResp writes resp to the archive, staged in pb (nil: on its own),
// and returns its capture: a crawl that cannot write its archive must not
// pretend to go on, and stops.
func (c *Crawler) archiveResp(resp *fetch.Response, pb *pageBatch, u *canon.URL) archive.Capture {
	cp, err := c.arch.Archive(resp, staging(pb), u)
	if err != nil {
		c.fail(fmt.Errorf("crawl: %w", err))
	}
	return cp
}

// index adds cp to the capture index, staged in pb (nil: on its own).
func (c *Crawler) index(cp archive.Capture, pb *pageBatch) {
	if err := c.arch.Index(cp, staging(pb)); err != nil {
		c.fail(fmt.Errorf("crawl: %w", err))
	}
}

// staging is pb's part for the archive, nil for no batch.
func staging(pb *pageBatch) *archive.Staging {
	if pb == nil {
		return nil
	}
	return &pb.Staging
}
