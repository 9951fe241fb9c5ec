package crawl

import (
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/seen"
)

// Queue is a crawl's durable queue without the crawl: its store, the seen
// set's records and the frontier's own store, written in batches as a
// crawl writes a page's. It lets a workload outside the package (weft
// bench queue, package queuebench) measure the queues a crawl runs on.
type Queue struct{ d *durable }

// OpenQueue opens the queue state under dir (in dir/state, as a crawl's),
// new when fresh, else as it was left; found reports whether there was
// one.
func OpenQueue(dir string, partitions int, fresh bool) (q *Queue, found bool, err error) {
	d, found, err := openDurable(dir, partitions, fresh, nil)
	if err != nil {
		return nil, false, err
	}
	return &Queue{d: d}, found, nil
}

// Close closes the state.
func (q *Queue) Close() error { return q.d.close() }

// Partitions is the state's partition count, fixed when it was created.
func (q *Queue) Partitions() int { return q.d.parts }

// Seen makes the seen set over the state, sized for expected URLs.
func (q *Queue) Seen(expected uint) (*seen.Set, error) {
	return seen.New(seen.Config{ExpectedURLs: expected, Partitions: q.d.parts}, q.d)
}

// Frontier makes a frontier over the state: cfg, with the store it reads
// and writes the queue through.
func (q *Queue) Frontier(cfg frontier.Config) (*frontier.Frontier, error) {
	cfg.Store, cfg.FirstSeq = q.d, q.d.firstSeq
	return frontier.New(cfg)
}

// Left counts what the state still queues: the entries of its front
// queues and the hosts with a tail on disk.
func (q *Queue) Left() (front, tails int, err error) {
	for p := range 3 {
		n, err := q.d.db.CountFront(uint8(p))
		if err != nil {
			return 0, 0, err
		}
		front += n
	}
	q.d.db.QueuedHosts(func(uint16, string) bool { tails++; return true })
	return front, tails, nil
}

// Batch starts one batch, as a page's.
func (q *Queue) Batch() *QueueBatch { return &QueueBatch{pb: q.d.newBatch()} }

// QueueBatch is one batch of a Queue: the URLs a page admits, or a lease
// completed.
type QueueBatch struct{ pb *pageBatch }

// Add admits url, of host, at depth 1 through s: it reports whether url is
// new, and then queued once the batch commits.
func (b *QueueBatch) Add(s *seen.Set, host, url string) (bool, error) {
	it := frontier.Item{URL: url, Host: host, Depth: 1, Priority: frontier.Normal}
	return s.Add(host, url, func(part int, k seen.Key) (bool, error) { return true, b.pb.Stage(it, part, k) })
}

// Len is the number of URLs the batch queues.
func (b *QueueBatch) Len() int { return len(b.pb.items) }

// Complete records lease l as done with res, its host's clock settled
// by f (frontier.Settle), and returns the result to complete l with once
// the batch commits. With page it completes l as the crawl completes a
// page, rewriting the URL's record with a 200's outcome; without, it
// writes what the frontier needs: the queue entry's deletion and the
// clock.
func (b *QueueBatch) Complete(f *frontier.Frontier, l frontier.Lease, res frontier.Result, page bool) frontier.Result {
	res, _ = f.Settle(l, res, time.Now(), b.pb)
	part := partition.Of(l.Host, b.pb.d.parts)
	if page {
		b.pb.done(l, part, res, 200, "ok", nil)
	} else {
		b.pb.deleteEntry(l, part)
	}
	return res
}

// Commit writes the batch, settles in s the keys it added (s may be nil
// when it added none) and hands its URLs to f.
func (b *QueueBatch) Commit(s *seen.Set, f *frontier.Frontier) error { return b.pb.commit(s, f) }
