package crawl

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"weft/internal/frontier"
	"weft/internal/seen"
	"weft/internal/store"
)

// durable is the crawl's state on disk (package store), written so that a
// crash at any moment loses no accepted URL. Each lease ends with one batch
// (pageBatch) that holds everything it changed:
//
//   - the record (which makes it seen) and the queue entry of every new URL
//     it found, staged under the seen set's partition lock and held there
//     as pending until the batch commits, so no other worker accepts it
//     twice meanwhile;
//   - the deletion of its own queue entry, with its outcome and its host's
//     clock; so after a crash every URL not yet done, the leases that were
//     out included, is queued again (at most those are fetched twice), and
//     the links of a page whose batch was lost are found again when the
//     page is refetched.
//
// A restart gives every host with queued URLs a clock of at least one gap
// from the restart, so a request cut by the crash is never followed at once
// by another to the same host.
//
// What is not kept: robots.txt policies (fetched again, under the host's
// clock, after a restart), counters of the summary, and the per-host cap.
type durable struct {
	db    *store.DB
	path  string
	parts int

	seqMu sync.Mutex
	seq   uint64 // last queue sequence number handed out
}

const (
	metaPartitions  = "partitions"
	metaScopePrefix = "scope/" // + a URL a seed redirected to
	stateDir        = "state"
)

// openDurable opens (or creates) the state under dataDir. fresh removes an
// existing state first. It reports whether a previous crawl was found.
func openDurable(dataDir string, partitions int, fresh bool, fs vfs.FS) (*durable, bool, error) {
	path := filepath.Join(dataDir, stateDir)
	if fresh {
		if err := os.RemoveAll(path); err != nil {
			return nil, false, fmt.Errorf("crawl: start over: %w", err)
		}
	}
	db, err := store.Open(path, &store.Options{FS: fs})
	if err != nil {
		return nil, false, err
	}
	d := &durable{db: db, path: path, parts: partitions, seq: uint64(time.Now().UnixNano())}
	v, found, err := db.GetMeta(metaPartitions)
	if err != nil {
		db.Close()
		return nil, false, err
	}
	if found {
		// P is fixed when a crawl is created: every key is filed under it.
		p, err := strconv.Atoi(string(v))
		if err != nil || p <= 0 {
			db.Close()
			return nil, false, fmt.Errorf("crawl: %s: bad partition count %q", path, v)
		}
		d.parts = p
		return d, true, nil
	}
	b := db.NewBatch()
	b.PutMeta(metaPartitions, []byte(strconv.Itoa(partitions)))
	if err := b.Commit(true); err != nil {
		db.Close()
		return nil, false, err
	}
	return d, false, nil
}

func (d *durable) close() error { return d.db.Close() }

// nextSeq returns a queue sequence number: increasing within this process
// and, being at least the wall clock in nanoseconds, after every number a
// previous run handed out.
func (d *durable) nextSeq() uint64 {
	d.seqMu.Lock()
	defer d.seqMu.Unlock()
	d.seq = max(d.seq+1, uint64(time.Now().UnixNano()))
	return d.seq
}

// Has implements seen.Store.
func (d *durable) Has(part int, host string, k seen.Key) (bool, error) {
	return d.db.HasURL(uint16(part), host, k)
}

func queueItem(it *frontier.Item, part int) store.QueueItem {
	return store.QueueItem{
		URL: it.URL, Host: it.Host, Part: uint16(part), Depth: it.Depth, Hops: it.Hops,
		Priority: uint8(it.Priority), Via: it.Via, Added: time.Now(),
	}
}

// pageBatch gathers one lease's writes and the frontier items they stand
// for; commit writes them at once.
type pageBatch struct {
	d       *durable
	b       *store.Batch
	pending []seen.Pending
	items   []frontier.Item
}

func (d *durable) newBatch() *pageBatch { return &pageBatch{d: d, b: d.db.NewBatch()} }

// recorder returns the seen set's Recorder for it: the URL record and the
// queue entry, staged in the batch. It sets it.Seq.
func (pb *pageBatch) recorder(it *frontier.Item) seen.Recorder {
	return func(part int, k seen.Key) (bool, error) {
		it.Seq = pb.d.nextSeq()
		pb.b.PutURL(uint16(part), it.Host, k, store.URLRecord{URL: it.URL, Depth: it.Depth, Priority: uint8(it.Priority), Status: store.URLQueued})
		pb.b.PushQueue(uint16(part), it.Host, it.Seq, queueItem(it, part))
		pb.pending = append(pb.pending, seen.Pending{Partition: part, Key: k})
		return true, nil
	}
}

// enqueue stages a queue entry for an item that bypasses the seen set (a
// redirect to a variant of its own URL). It sets it.Seq.
func (pb *pageBatch) enqueue(it *frontier.Item, part int) {
	it.Seq = pb.d.nextSeq()
	pb.b.PushQueue(uint16(part), it.Host, it.Seq, queueItem(it, part))
}

// done stages a lease's outcome: the queue entry goes, the URL record says
// what happened, and the host's clock is what the frontier armed. A retried
// lease (robots.txt fetched instead, or cut by shutdown) changes nothing on
// disk but the clock.
func (pb *pageBatch) done(l frontier.Lease, part int, res frontier.Result, status int, outcome string, hostNext time.Time, crawlDelay time.Duration) {
	if res.Fetched {
		pb.b.PutHost(uint16(part), store.HostRecord{Host: l.Host, NextAt: hostNext, CrawlDelay: crawlDelay})
	}
	if res.Retry || l.Seq == 0 {
		return
	}
	pb.b.DeleteQueue(uint16(part), l.Host, l.Seq)
	st := store.URLDone
	switch {
	case outcome == RejectRobots:
		st = store.URLRejected
	case status == 0:
		st = store.URLFailed
	}
	pb.b.PutURL(uint16(part), l.Host, seen.KeyOf(l.URL), store.URLRecord{
		URL: l.URL, Depth: l.Depth, Priority: uint8(l.Priority), Status: st,
		LastStatus: status, LastOutcome: outcome, LastFetch: time.Now(),
	})
}

// widenScope records that a seed's redirect made u part of the crawl's
// scope, so a restart widens the scope the same way.
func (pb *pageBatch) widenScope(u string) { pb.b.PutMeta(metaScopePrefix+u, nil) }

// commit writes the batch, settles its pending keys and hands its items to
// the frontier. On error nothing of it is in the store; the crawl stops.
func (pb *pageBatch) commit(s *seen.Set, f *frontier.Frontier) error {
	if err := pb.b.Commit(false); err != nil { // an empty batch commits nothing
		return err
	}
	s.Settle(pb.pending)
	f.Add(pb.items...)
	return nil
}

// scopeSeeds returns the URLs that seeds' redirects added to the scope.
func (d *durable) scopeSeeds() ([]string, error) {
	var out []string
	err := d.db.MetaPrefix(metaScopePrefix, func(name string, _ []byte) bool {
		out = append(out, name)
		return true
	})
	return out, err
}

// resume refills the seen set's filter and the frontier from the store:
// every URL record goes into the filter, every queue entry back into the
// frontier, and each of those hosts gets its clock back.
func (d *durable) resume(s *seen.Set, f *frontier.Frontier, delay time.Duration) (urls, queued int, err error) {
	err = d.db.URLKeys(func(part uint16, host string, hash [16]byte) bool {
		s.Restore(int(part), seen.Key(hash))
		urls++
		return true
	})
	if err != nil {
		return 0, 0, fmt.Errorf("crawl: resume from %s: %w", d.path, err)
	}
	var hosts []struct {
		part uint16
		host string
	}
	if err := d.db.QueuedHosts(func(part uint16, host string) bool {
		hosts = append(hosts, struct {
			part uint16
			host string
		}{part, host})
		return true
	}); err != nil {
		return 0, 0, fmt.Errorf("crawl: resume from %s: %w", d.path, err)
	}
	// A host whose clock runs into the future (fetched just before the
	// crash) keeps it, whether or not it has URLs left: a link to it may
	// turn up at once.
	now := time.Now()
	for part := range d.parts {
		if err := d.db.ScanHosts(uint16(part), func(rec store.HostRecord) bool {
			if rec.NextAt.After(now) {
				f.Restore(rec.Host, rec.NextAt, rec.CrawlDelay)
			}
			return true
		}); err != nil {
			return 0, 0, fmt.Errorf("crawl: resume from %s: %w", d.path, err)
		}
	}
	var maxSeq uint64
	for _, h := range hosts {
		rec, _, err := d.db.GetHost(h.part, h.host)
		if err != nil {
			return 0, 0, err
		}
		// A request to the host may have been cut by the crash: wait a
		// whole gap from now, or longer if the host's clock says so.
		f.Restore(h.host, later(rec.NextAt, time.Now().Add(max(delay, rec.CrawlDelay))), rec.CrawlDelay)
		entries, err := d.db.QueueRange(h.part, h.host, 0, 1<<30)
		if err != nil {
			return 0, 0, err
		}
		items := make([]frontier.Item, len(entries))
		for i, e := range entries {
			items[i] = frontier.Item{
				URL: e.Item.URL, Host: h.host, Depth: e.Item.Depth, Hops: e.Item.Hops,
				Priority: frontier.Priority(e.Item.Priority), Via: e.Item.Via, Seq: e.Seq,
			}
			maxSeq = max(maxSeq, e.Seq)
		}
		f.Add(items...)
		queued += len(items)
	}
	d.seqMu.Lock()
	d.seq = max(d.seq, maxSeq)
	d.seqMu.Unlock()
	return urls, queued, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
