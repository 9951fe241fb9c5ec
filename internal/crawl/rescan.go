package crawl

import (
	"context"
	"errors"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/schedule"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/state"
	"github.com/weft-crawler/weft/internal/store"
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
		if err := c.recrawler.QueueDue(now); err != nil {
			c.fail(err)
			return
		}
		if now.Sub(saved) >= schedule.SaveInLinks {
			saved = now
			if err := errors.Join(c.saveInLinks(), c.judge.SaveCounts(c.state.DB)); err != nil {
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

// requeue commits the recrawl scan's batches (schedule.Queue) as a
// lease's are: numbered in the front queues, then handed to the frontier.
type requeue struct {
	d     *state.State
	seen  *seen.Set
	front *frontier.Frontier
}

func (q requeue) Commit(b *store.Batch, items []frontier.Item) error {
	pb := q.d.BatchOf(b)
	pb.Items = items
	return pb.Commit(q.seen, q.front)
}
