package crawl

import (
	"fmt"
	"time"

	"weft/internal/sketch"
)

// metaInLinks holds the in-link counts (package sketch, encoded).
const metaInLinks = "inlinks"

// inLinkSave is how often the in-link counts are saved while the crawl
// runs.
const inLinkSave = 5 * time.Minute

// loadInLinks makes the in-link counter, with the counts an earlier run
// saved. Counts that do not decode are dropped with a warning: they are
// an estimate, and the crawl's own state is intact.
func (c *Crawler) loadInLinks() error {
	c.inlinks = sketch.New(c.cfg.InLinkBytes)
	b, ok, err := c.state.db.GetMeta(metaInLinks)
	if err != nil {
		return fmt.Errorf("crawl: read the in-link counts: %w", err)
	}
	if ok {
		if err := c.inlinks.UnmarshalBinary(b); err != nil {
			c.log.Warn("in-link counts of an earlier run dropped", "err", err)
			c.inlinks = sketch.New(c.cfg.InLinkBytes)
		}
	}
	return nil
}

// saveInLinks writes the in-link counts to the store; not after a fatal
// error, which may have lost pages whose links were counted (they are
// fetched, and counted, again).
func (c *Crawler) saveInLinks() error {
	if c.inlinks == nil || c.failed.Load() {
		return nil
	}
	v, err := c.inlinks.MarshalBinary()
	if err != nil {
		return err
	}
	b := c.state.db.NewBatch()
	b.PutMeta(metaInLinks, v)
	if err := b.Commit(false); err != nil {
		return fmt.Errorf("crawl: save the in-link counts: %w", err)
	}
	return nil
}
