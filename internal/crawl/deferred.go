package crawl

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/report"
	"github.com/weft-crawler/weft/internal/store"
)

// maxDeferredSample is how many URLs of a deferred host the summary names;
// the fetch log has a line for every one.
const maxDeferredSample = 3

// listDeferred reads every URL left queued (front queues and hosts'
// tails, on disk: each URL a host had in memory is there too), writes a
// line of the fetch log for each (outcome "deferred", with its host's
// wait), and counts them by host into sum; a URL queued again
// (state.Batch.Requeue) has more than one entry, and is listed once
// (state.State.Waiting). left is what the frontier held in memory of
// those hosts; the clocks of the others are read from the store.
func (c *Crawler) listDeferred(sum *Summary, left []frontier.HostInfo) error {
	clocks := make(map[string]frontier.Clock, len(left))
	for _, h := range left {
		clocks[h.Name] = h.Clock
	}
	byHost := map[string]*DeferredHost{}
	reasons := map[string]string{} // Cause and Why, in words, by host
	now := time.Now()
	add := func(it store.QueueItem, seq uint64) error {
		if !c.state.Waiting(it, seq) {
			return nil
		}
		d := byHost[it.Host]
		if d == nil {
			cl, ok := clocks[it.Host]
			if !ok {
				fs := c.state
				var err error
				if cl, _, err = fs.Clock(it.Host); err != nil {
					return err
				}
			}
			d = &DeferredHost{Host: it.Host, Until: cl.NextAt, Why: cl.Why.String(), Cause: cl.Cause}
			reasons[it.Host] = cl.Reason()
			byHost[it.Host] = d
		}
		d.URLs++
		if len(d.Sample) < maxDeferredSample {
			d.Sample = append(d.Sample, it.URL)
		}
		c.flog.Write(fetchlog.Record{Time: now, URL: it.URL, Host: it.Host, Depth: it.Depth, Hops: it.Hops, Via: it.Via, Path: it.Path,
			Outcome: fetchlog.OutcomeDeferred, Error: reasons[it.Host] + " until " + d.Until.Format(time.RFC3339)})
		return nil
	}
	const batch = 1024
	db := c.state.DB
	for p := range uint8(3) {
		for from := uint64(1); ; {
			entries, err := db.FrontRange(p, from, batch)
			if err != nil {
				return fmt.Errorf("crawl: list the URLs left queued: %w", err)
			}
			for _, e := range entries {
				if err := add(e.Item, e.Seq); err != nil {
					return fmt.Errorf("crawl: list the URLs left queued: %w", err)
				}
				from = e.Seq + 1
			}
			if len(entries) < batch {
				break
			}
		}
	}
	var werr error
	err := db.QueuedHosts(func(part uint16, host string) bool {
		for from := uint64(1); ; {
			entries, err := db.QueueRange(part, host, from, batch)
			if err != nil {
				werr = err
				return false
			}
			for _, e := range entries {
				if werr = add(e.Item, e.Seq); werr != nil {
					return false
				}
				from = e.Seq + 1
			}
			if len(entries) < batch {
				return true
			}
		}
	})
	if err := cmp.Or(err, werr); err != nil {
		return fmt.Errorf("crawl: list the URLs left queued: %w", err)
	}
	hosts := make([]DeferredHost, 0, len(byHost))
	for _, d := range byHost {
		sum.Deferred += int64(d.URLs)
		hosts = append(hosts, *d)
	}
	slices.SortFunc(hosts, func(a, b DeferredHost) int {
		return cmp.Or(cmp.Compare(b.URLs, a.URLs), cmp.Compare(a.Host, b.Host))
	})
	sum.DeferredHostCount = len(hosts)
	sum.DeferredHosts = hosts[:min(len(hosts), report.MaxNamed)]
	return nil
}
