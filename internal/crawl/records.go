package crawl

import "github.com/weft-crawler/weft/internal/state"

// Records are the crawl's URL records and their captures, as its operator
// reads them (state.Records).
type Records = state.Records

// Page is what the crawl holds of one URL: its record and its captures.
type Page = state.Page

// ErrUnknownURL is returned by Records.Page for a URL the crawl has no
// record of.
var ErrUnknownURL = state.ErrUnknownURL

// Records returns the crawl's URL records, for its operator. They are safe
// for concurrent use from New on.
func (c *Crawler) Records() *Records { return c.state.Records(c.canon, c.life, c.rank, c.cfg.Policies) }
