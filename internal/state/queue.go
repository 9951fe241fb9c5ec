package state

import (
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/seen"
)

// Partitions is the state's partition count, fixed when it was created.
func (d *State) Partitions() int { return d.parts }

// Seen makes the seen set over the state, sized for expected URLs.
func (d *State) Seen(expected uint) (*seen.Set, error) {
	return seen.New(seen.Config{ExpectedURLs: expected, Partitions: d.parts}, d)
}

// Frontier makes a frontier over the state: cfg, with the state as the
// store it reads and writes the queues through, numbering on from the
// last entry stored.
func (d *State) Frontier(cfg frontier.Config) (*frontier.Frontier, error) {
	cfg.Store, cfg.FirstSeq = d, d.firstSeq
	return frontier.New(cfg)
}

// Left counts what the state still queues: the entries of its front
// queues and the hosts with a tail on disk.
func (d *State) Left() (front, tails int, err error) {
	for p := range frontier.Surplus + 1 {
		n, err := d.DB.CountFront(uint8(p))
		if err != nil {
			return 0, 0, err
		}
		front += n
	}
	d.DB.QueuedHosts(func(uint16, string) bool { tails++; return true })
	return front, tails, nil
}

// Admit admits url, of host, at depth 1 through s, as a page's link with
// no rule but the seen set (weft bench queue): it reports whether url is
// new, and then queued once the batch commits.
func (pb *Batch) Admit(s *seen.Set, host, url string) (bool, error) {
	it := frontier.Item{URL: url, Host: host, Depth: 1, Priority: frontier.Normal}
	return s.Add(host, url, func(part int, k seen.Key) (bool, error) { return true, pb.Stage(it, part, k) })
}

// Complete records lease l as done with res, its host's clock settled
// by f (frontier.Settle), and returns the result to complete l with once
// the batch commits. With page it completes l as the crawl completes a
// page, rewriting the URL's record with a 200's outcome; without, it
// writes what the frontier needs: the queue entry's deletion and the
// clock.
func (pb *Batch) Complete(f *frontier.Frontier, l frontier.Lease, res frontier.Result, page bool) frontier.Result {
	res, _ = f.Settle(l, res, time.Now(), pb)
	part := partition.Of(l.Host, pb.d.parts)
	if page {
		pb.Done(l, part, res, 200, "ok", nil)
	} else {
		pb.DeleteEntry(l, part)
	}
	return res
}
