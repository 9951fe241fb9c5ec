package crawl

import (
	"context"
	"errors"
	"time"

	"github.com/weft-crawler/weft/internal/schedule"
)

// rescan queues URLs again every RecrawlScan, and saves the in-link
// counts and the trap rules' every schedule.SaveInLinks, until ctx is done.
func (c *Crawler) rescan(ctx context.Context) {
	t := time.NewTicker(c.cfg.RecrawlScan)
	defer t.Stop()
	saved := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		if err := c.recrawler.queueDue(now); err != nil {
			c.fail(err)
			return
		}
		if now.Sub(saved) >= schedule.SaveInLinks {
			saved = now
			if err := errors.Join(c.saveInLinks(), c.judge.SaveCounts(c.state.db)); err != nil {
				c.fail(err)
				return
			}
		}
	}
}

// saveInLinks writes the in-link counts to the store; not after a fatal
// error, which may have lost pages whose links were counted (they are
// fetched, and counted, again).
func (c *Crawler) saveInLinks() error {
	if c.inlinks == nil || c.failed.Load() {
		return nil
	}
	return c.inlinks.Save()
}
