// Package state is a crawl's durable state over the store: the queues the
// frontier reads and spills to (it is the frontier's Store), the records
// the seen set confirms, and the batch in which one lease's changes are
// committed at once, so that a crash loses no accepted URL; beside them,
// each host's counters and rules' state (HostStates), and the URL records
// as the crawl's operator reads them (Records).
package state

import (
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/plugin"
	"github.com/weft-crawler/weft/internal/schedule"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// State is the crawl's state on disk (package store), written so that a
// crash at any moment loses no accepted URL. Each lease ends with one batch
// (Batch) that holds everything it changed:
//
//   - the record (which makes it seen) and the front-queue entry of every
//     new URL it found, the record staged under the seen set's partition
//     lock and held there as pending until the batch commits, so no other
//     worker accepts it twice meanwhile;
//   - the deletion of its own queue entry, with its outcome and its host's
//     clock; so after a crash every URL not yet done, the leases that were
//     out included, is queued again (at most those are fetched twice), and
//     the links of a page whose batch was lost are found again when the
//     page is refetched.
//
// The frontier reads its queues from here (State is its Store): front
// queues in the order of their sequence numbers, which is why batches that
// queue URLs number and commit them under one lock (commitMu), and hosts'
// tails, which only the frontier writes. A restart gives every host with a
// stored clock at least one gap from the restart (frontier.Config.Resumed),
// so a request cut by the crash is never followed at once by another.
//
// What is not kept: robots.txt policies (fetched again, under the host's
// clock, after a restart) and counters of the summary. The per-host
// counters and rules' state are kept apart, in the host state table
// (HostStates).
type State struct {
	DB    *store.DB // the store itself, for what the batches do not cover
	path  string
	parts int

	// commitMu makes front-queue sequence numbers visible in order: a
	// batch that queues URLs numbers them, commits and tells the frontier
	// under it.
	commitMu sync.Mutex
	seq      uint64 // last front-queue sequence number handed out
	firstSeq uint64 // the first one this process hands out

	// opened is when this process opened the state: a URL queued before
	// may have a copy queued again (Requeue) that again does not know.
	opened  time.Time
	againMu sync.Mutex
	again   map[seen.Key]int // URLs queued again whose first copy was not leased yet, and URLs queued once more (Retried): the entries of each still to read the store when leased (Stale); at most maxAgain URLs

	// Forwarder hands the URLs of other nodes' hosts to their owners
	// before a batch that found them commits. A batch with such URLs and
	// no Forwarder does not commit.
	Forwarder Forwarder
	// Boosts are the operators' boosts (a *policy.Set): Stage and
	// Requeue queue a URL at its rank times the boost in force for it
	// then. Nil: none.
	Boosts Booster
}

// Booster says how much an operator boosts a URL's rank.
type Booster interface {
	// BoostURL is the factor on the rank of the canonical url of
	// authority (1 leaves it as it is), as the operators' policies say
	// at the call.
	BoostURL(authority, url string) float64
}

const (
	metaFormat      = "format" // stateFormat; absent in states older than front queues on disk
	stateFormat     = "2"
	metaPartitions  = "partitions"
	metaScopePrefix = "scope/" // + a URL a seed redirected to
)

// Open opens (or creates) the state under dataDir. fresh removes an
// existing state first, once the store's lock is held: never the state of
// a crawl that runs. It reports whether a previous crawl was found.
func Open(dataDir string, partitions int, fresh bool, fs vfs.FS) (*State, bool, error) {
	path := store.Dir(dataDir)
	db, err := store.Open(path, &store.Options{FS: fs, Fresh: fresh})
	if err != nil {
		return nil, false, store.InUse(dataDir, err, "stop that crawl or choose another --data")
	}
	d := &State{DB: db, path: path, parts: partitions, seq: uint64(time.Now().UnixNano()), opened: time.Now(), again: map[seen.Key]int{}}
	for p := range frontier.Surplus + 1 {
		// Numbers go on from the last one stored, even if the clock went back.
		last, ok, err := db.LastFrontSeq(uint8(p))
		if err != nil {
			db.Close()
			return nil, false, err
		}
		if ok {
			d.seq = max(d.seq, last)
		}
	}
	d.firstSeq = d.seq + 1
	v, found, err := db.GetMeta(metaPartitions)
	if err != nil {
		db.Close()
		return nil, false, err
	}
	if found {
		if f, _, err := db.GetMeta(metaFormat); err != nil || string(f) != stateFormat {
			db.Close()
			if err != nil {
				return nil, false, err
			}
			return nil, false, fmt.Errorf("state: %s holds a crawl state of another format (%q, this weft writes %q) whose queues it cannot read; start over with --fresh, or resume it with the weft that wrote it", path, f, stateFormat)
		}
		// P is fixed when a crawl is created: every key is filed under it.
		p, err := strconv.Atoi(string(v))
		if err != nil || p <= 0 {
			db.Close()
			return nil, false, fmt.Errorf("state: %s: bad partition count %q", path, v)
		}
		d.parts = p
		return d, true, nil
	}
	b := db.NewBatch()
	b.PutMeta(metaFormat, []byte(stateFormat))
	b.PutMeta(metaPartitions, []byte(strconv.Itoa(partitions)))
	if err := b.Commit(true); err != nil {
		db.Close()
		return nil, false, err
	}
	return d, false, nil
}

// Close flushes the store's memtables before closing it, so that the next
// start need not replay their log (seconds, for a full set of memtables).
// The flush is only a help: if it fails, the log still holds every commit.
func (d *State) Close() error {
	_ = d.DB.Flush()
	return d.DB.Close()
}

// Has implements seen.Store.
func (d *State) Has(part int, host string, k seen.Key) (bool, error) {
	return d.DB.HasURL(uint16(part), host, k)
}

func queueItem(it *frontier.Item, part int) store.QueueItem {
	return store.QueueItem{
		URL: it.URL, Host: it.Host, Part: uint16(part), Depth: it.Depth, Hops: it.Hops,
		Priority: uint8(it.Priority), Rank: it.Rank, Via: it.Via, Added: it.Added, Fetch: it.Fetch, Requisite: it.Requisite, Sitemap: it.Sitemap, Again: it.Again, Seed: it.Seed, Path: it.Path,
	}
}

func frontierItem(q store.QueueItem, seq uint64) frontier.Item {
	return frontier.Item{
		URL: q.URL, Host: q.Host, Depth: q.Depth, Hops: q.Hops, Priority: frontier.Priority(q.Priority), Rank: q.Rank,
		Via: q.Via, Fetch: q.Fetch, Seq: seq, Added: q.Added, Requisite: q.Requisite, Sitemap: q.Sitemap, Again: q.Again, Seed: q.Seed, Path: q.Path,
	}
}

// Batch gathers one lease's writes and the frontier items they stand
// for; commit writes them at once.
type Batch struct {
	d       *State
	Pending []seen.Pending  // the keys it stages, settled in the seen set when it commits
	Items   []frontier.Item // the URLs it queues
	// Waits is the URLs it leaves queued with no item of its own: another
	// entry of each, which reads the store when leased, asks for it again
	// (Retried, FirstWaits).
	Waits []string
	// the archive's part: the payload digests it records, the events of
	// its captures (Staging.Batch is b)
	archive.Staging
	Pages   []*plugin.Page // the pages it records, for the page consumers
	Sims    []uint64       // fingerprints it adds to the near-duplicate index
	Forward []Offered      // URLs of other nodes' hosts, handed to the State's Forwarder before it commits
	// Page is the URL of the page whose links are being admitted, when it
	// answered 200 with a whole body: fetched, before its capture is
	// indexed (see indexAliases.skip).
	Page string
}

func (d *State) NewBatch() *Batch { return d.BatchOf(d.DB.NewBatch()) }

// BatchOf makes a batch of writes staged elsewhere (the recrawl scan's):
// it commits them as a lease's, its Items numbered in the front queues.
func (d *State) BatchOf(b *store.Batch) *Batch {
	return &Batch{d: d, Staging: archive.Staging{Batch: b}}
}

// Stage implements judge.Stager: the URL's record and queue entry, staged
// in the batch at its boosted rank (boost); its queue entry is written
// when the batch commits.
func (pb *Batch) Stage(it frontier.Item, part int, k seen.Key) error {
	pb.d.boost(&it)
	pb.Batch.PutURL(uint16(part), it.Host, k, queuedRecord(it))
	pb.Pending = append(pb.Pending, seen.Pending{Partition: part, Key: k})
	pb.Items = append(pb.Items, it)
	return nil
}

// queuedRecord is the record of a URL new to the crawl, queued as it.
func queuedRecord(it frontier.Item) store.URLRecord {
	return store.URLRecord{URL: it.URL, Depth: it.Depth, Priority: uint8(it.Priority), Status: store.URLQueued, Rank: it.Rank}
}

// maxAgain bounds the URLs with a copy queued again whose first copy
// was not leased yet; past it, no URL is queued again.
const maxAgain = 1 << 16

// Requeue queues a URL again (Item.Again), at the rank it has risen to,
// in the front queue it waits in or High, if it still waits at a priority
// no higher (and this batch does not
// queue it already): the frontier serves the copy that ranks higher
// first, and Stale finds the other one stale when it is leased. k is the
// URL's seen-set key.
func (pb *Batch) Requeue(it frontier.Item, k seen.Key) bool {
	d := pb.d
	d.boost(&it)
	d.againMu.Lock()
	full := len(d.again) >= maxAgain
	d.againMu.Unlock()
	if full || pb.Queues(it.URL) {
		return false
	}
	rec, found, err := d.DB.GetURL(uint16(partition.Of(it.Host, d.parts)), it.Host, k)
	if err != nil || !found || rec.Status != store.URLQueued || rec.Priority > uint8(it.Priority) {
		return false
	}
	if it.Priority < frontier.High {
		// The copy keeps the front queue its URL waits in (a URL released
		// from a trap budget stays Low, after what its family led to),
		// at its new rank, unless that rank makes it High.
		it.Priority = frontier.Priority(rec.Priority)
	}
	d.againMu.Lock()
	d.again[k] = max(d.again[k], 1) // its first copy; a copy reads the store anyway
	d.againMu.Unlock()
	it.Again = true
	pb.Items = append(pb.Items, it)
	return true
}

// Hold queues a leased URL that was never fetched again, at
// judge.HeldPriority and unrequested: a wall, or a barren parameter,
// learnt since it was queued holds it (judge.Learnt), and the judge
// remembers the entry it returns for their fall to release
// (judge.Judge.Hold, Release). The lease is done as judge.HeldAgain,
// whose Done writes the URL's record at that priority with the entry
// (a batch that does not end so, its crawl failing, leaves both out).
// It reports false, and the URL is dropped as before, when its record
// says it was fetched (a recrawl) or is not queued; and true with an
// empty entry when another entry of it is held already (a copy queued
// again, Requeue, held before its first copy): the lease is then a copy
// gone, done as judge.Requeued.
func (pb *Batch) Hold(l frontier.Lease) (frontier.Item, bool) {
	rec, found, err := pb.d.DB.GetURL(uint16(partition.Of(l.Host, pb.d.parts)), l.Host, seen.KeyOf(l.URL))
	switch {
	case err != nil || !found || rec.Status != store.URLQueued || !rec.LastFetch.IsZero():
		return frontier.Item{}, false
	case rec.Priority == uint8(judge.HeldPriority):
		return frontier.Item{}, true
	}
	it := frontier.Item{URL: l.URL, Fetch: l.Fetch, Host: l.Host, Depth: l.Depth, Priority: judge.HeldPriority, Rank: l.Rank,
		Hops: l.Hops, Via: l.Via, Added: l.Added, Seed: l.Seed, Path: l.Path}
	pb.Items = append(pb.Items, it)
	return it, true
}

// held writes the record of the URL a lease done as judge.HeldAgain
// queued again (Hold): queued at judge.HeldPriority, as it was otherwise.
func (pb *Batch) held(l frontier.Lease, part int) {
	k := seen.KeyOf(l.URL)
	if rec, found, err := pb.d.DB.GetURL(uint16(part), l.Host, k); err == nil && found {
		rec.Priority = uint8(judge.HeldPriority)
		pb.Batch.PutURL(uint16(part), l.Host, k, rec)
	}
}

// Retried records that a lease of the URL whose key is k, which failed,
// queued it once more as a new entry (not a copy): that entry's lease
// reads the store first (Stale), as the first copy of a URL queued again
// does, so that it is dropped if another entry of the URL (a copy queued
// as its rank rose, or its first copy) was fetched since. It reports
// false, and the URL is not to be queued, when maxAgain URLs are waiting
// so already.
func (d *State) Retried(k seen.Key) bool {
	d.againMu.Lock()
	defer d.againMu.Unlock()
	if _, ok := d.again[k]; !ok && len(d.again) >= maxAgain {
		return false
	}
	d.again[k]++
	return true
}

// FirstWaits reports whether l, whose URL's key is k, is a copy of a URL
// queued again (Item.Again) while another entry of the URL that reads the
// store when leased (its first copy, a second try) still waits: that
// entry, left queued (Waits), is the URL's next try.
func (d *State) FirstWaits(l frontier.Lease, k seen.Key) bool {
	if !l.Again {
		return false
	}
	d.againMu.Lock()
	defer d.againMu.Unlock()
	return d.again[k] > 0
}

// Release implements judge.Releaser: it queues a URL held past its
// family's trap budget as h says (at judge.ReleasedPriority), if it
// still waits at judge.HeldPriority, never fetched (held by this batch
// itself, it is queued so instead).
// Its record takes that priority, so that the entry held is found stale
// when leased (Stale): the URL has one entry that counts, as any URL
// queued has, and the held one is not a copy (Requeue).
func (pb *Batch) Release(h judge.Held) bool {
	it := h.Item
	if h.Ranked {
		it.Priority = importance.Priority(it.Rank, it.Priority)
	} else {
		pb.d.boost(&it)
	}
	part := uint16(partition.Of(it.Host, pb.d.parts))
	if i := slices.IndexFunc(pb.Items, func(q frontier.Item) bool { return q.URL == it.URL }); i >= 0 {
		// Held by this very batch (not in the store yet): queued as
		// found instead.
		if pb.Items[i].Priority != judge.HeldPriority || pb.Items[i].Again {
			return false
		}
		pb.Items[i].Priority, pb.Items[i].Rank = it.Priority, it.Rank
		pb.Batch.PutURL(part, it.Host, h.Key, queuedRecord(it))
		pb.releasedRanked(h)
		return true
	}
	rec, found, err := pb.d.DB.GetURL(part, it.Host, h.Key)
	if err != nil || !found || rec.Status != store.URLQueued || rec.Priority != uint8(judge.HeldPriority) || !rec.LastFetch.IsZero() {
		return false
	}
	rec.Priority, rec.Rank = uint8(it.Priority), it.Rank
	pb.Batch.PutURL(part, it.Host, h.Key, rec)
	pb.Items = append(pb.Items, it)
	pb.releasedRanked(h)
	return true
}

// releasedRanked marks a URL released that was held when leased
// (judge.Held.Ranked): an entry of it may wait besides the one held (a
// copy queued again, Requeue), and the one released reads the store when
// leased (Retried, Stale), to be found stale once the URL is fetched.
func (pb *Batch) releasedRanked(h judge.Held) {
	if h.Ranked {
		pb.d.Retried(h.Key)
	}
}

// boost is the one place a URL's own rank becomes the rank it is queued
// with, for a new URL (Stage) and a copy queued again (Requeue) alike:
// its estimate times the boost in force for it now (importance.Boost),
// and the high front queue if that reaches importance.HighRank. A
// requisite, a sitemap or a redirect's target takes the rank of the page
// that led to it, boost included, and keeps it as it is.
func (d *State) boost(it *frontier.Item) {
	if it.Requisite || it.Sitemap || it.Hops > 0 {
		return
	}
	if d.Boosts != nil {
		it.Rank = importance.Boost(it.Rank, d.Boosts.BoostURL(it.Host, it.URL))
	}
	it.Priority = importance.Priority(it.Rank, it.Priority)
}

// Stale reports whether l is one of two copies of a URL (Requeue) and
// the other was leased first: a copy queued again finds the URL no
// longer waiting; the first copy finds it fetched (or dropped) since it
// was queued. A recrawl is queued after the last fetch, and is not
// stale. An entry held past a trap budget (judge.HeldPriority) is stale
// once its URL was released (Release) or fetched. Only a lease that may
// be such a copy costs a read of the store: a held entry, a copy queued
// again, the first copy of a URL this process queued again, a second try
// after a failure (Retried), or a URL queued before this process opened
// the state.
func (d *State) Stale(l frontier.Lease) bool {
	if l.Seq == 0 || l.RobotsFor != "" {
		return false
	}
	k := seen.KeyOf(l.URL)
	if l.Priority == judge.HeldPriority {
		// Held past a trap budget: stale once released (Release) or gone
		// another way.
		rec, found, err := d.DB.GetURL(uint16(partition.Of(l.Host, d.parts)), l.Host, k)
		return err == nil && found && (rec.Status != store.URLQueued || rec.Priority != uint8(judge.HeldPriority))
	}
	if !l.Again && !l.Added.Before(d.opened) {
		d.againMu.Lock()
		n := d.again[k]
		first := n > 0
		if n > 1 {
			d.again[k] = n - 1
		} else {
			delete(d.again, k)
		}
		d.againMu.Unlock()
		if !first {
			return false
		}
	}
	rec, found, err := d.DB.GetURL(uint16(partition.Of(l.Host, d.parts)), l.Host, k)
	if err != nil || !found || rec.Status == store.URLQueued {
		return false
	}
	return l.Again || !rec.LastFetch.Before(l.Added)
}

// Waiting reports whether a queue entry read back from the store (at
// seq) stands for a URL still to be fetched, so that a list of what a
// crawl left queued names each such URL once: a copy queued again
// (Requeue) does not, since the first copy stays queued as long as the
// URL waits (a lease that is retried keeps its entry, and a second try
// after a failure is a first copy, or a first copy left waiting); a first
// copy does unless Stale finds the URL fetched since it was queued.
func (d *State) Waiting(q store.QueueItem, seq uint64) bool {
	if q.Again {
		return false
	}
	return !d.Stale(frontier.Lease{Item: frontierItem(q, seq)})
}

// PutClock implements frontier.ClockWriter: the host's clock goes to
// disk with the rest of the batch.
func (pb *Batch) PutClock(host string, c frontier.Clock) {
	pb.Batch.PutHost(uint16(partition.Of(host, pb.d.parts)), store.HostRecord{
		Host: host, NextAt: c.NextAt, CrawlDelay: c.CrawlDelay, ErrorStreak: c.Streak,
		Backoff: c.Backoff, Errors: c.Errors, Parks: c.Parks, GaveUp: c.GaveUp,
		Throttles: c.Throttles, ThrottledSince: c.ThrottledSince, Wait: uint8(c.Why), WaitCause: c.Cause,
	})
}

func (pb *Batch) DeleteEntry(l frontier.Lease, part int) {
	if l.Tail {
		pb.Batch.DeleteQueue(uint16(part), l.Host, l.Seq)
	} else {
		pb.Batch.DeleteFront(uint8(l.Priority), l.Seq)
	}
}

// Done stages a lease's outcome: the queue entry goes, and the URL record
// says what happened. A retried lease (robots.txt fetched instead, or cut
// by shutdown) changes nothing on disk but its host's clock
// (frontier.Settle).
func (pb *Batch) Done(l frontier.Lease, part int, res frontier.Result, status int, outcome string, v *schedule.Visit) store.URLRecord {
	if res.Retry || l.Seq == 0 {
		return store.URLRecord{}
	}
	pb.DeleteEntry(l, part)
	switch outcome {
	case judge.Requeued:
		return store.URLRecord{} // the record is the other copy's, fetched
	case judge.HeldAgain:
		pb.held(l, part)
		return store.URLRecord{}
	}
	st := store.URLDone
	switch {
	case outcome == judge.Robots || outcome == judge.Unreachable || outcome == judge.CrawlDelay || outcome == judge.Policy || outcome == judge.SeedBudget ||
		outcome == judge.InertParam || outcome == judge.OffsiteRedirect:
		st = store.URLRejected
	case status == 0:
		st = store.URLFailed
	}
	r := store.URLRecord{LastFetch: time.Now()}
	if v != nil { // continuous mode: what the fetch taught
		r = v.Record
	}
	if pb.Queues(l.URL) && st != store.URLRejected {
		// The lease queued its own URL again (a redirect to a variant of
		// it): it stays queued, out of the recrawl index, until that
		// lease is done.
		st = store.URLQueued
	}
	r.URL, r.Depth, r.Priority, r.Status = l.URL, l.Depth, uint8(l.Priority), st
	if l.Rank != 0 { // a recrawl is queued unranked: the record keeps the rank it had
		r.Rank = l.Rank
	}
	if v == nil || !v.Adopted {
		r.LastStatus, r.LastOutcome = status, outcome
	}
	k := seen.KeyOf(l.URL)
	pb.Batch.PutURL(uint16(part), l.Host, k, r)
	v.Stage(pb.Batch, uint16(part), l.Host, k, r) // the host's prior, the recrawl index
	return r
}

// Queues reports whether the batch queues url, or leaves it queued
// (Waits): a lease whose batch queues its own URL again (a redirect to a
// variant of it, a second try) is not done.
func (pb *Batch) Queues(url string) bool {
	return slices.Contains(pb.Waits, url) || slices.ContainsFunc(pb.Items, func(it frontier.Item) bool { return it.URL == url })
}

// WidenScope records that a seed's redirect made u part of the crawl's
// scope, or of the own scope of the seed with id seed (non-zero), so a
// restart widens the scope the same way.
func (pb *Batch) WidenScope(u string, seed uint32) {
	var v []byte
	if seed != 0 {
		v = binary.AppendUvarint(nil, uint64(seed))
	}
	pb.Batch.PutMeta(metaScopePrefix+u, v)
}

// Commit writes the batch, with a front-queue entry for each of its items,
// settles its pending keys and hands the items to the frontier. On error
// nothing of it is in the store; the crawl stops.
func (pb *Batch) Commit(s *seen.Set, f *frontier.Frontier) error {
	if len(pb.Forward) > 0 {
		err := errNoForwarder
		if pb.d.Forwarder != nil {
			err = pb.d.Forwarder.Forward(pb.Forward)
		}
		if err != nil {
			pb.Batch.Close()
			return fmt.Errorf("forward %d URLs to their owners: %w", len(pb.Forward), err)
		}
	}
	if len(pb.Items) == 0 {
		// An empty batch commits nothing. Keys staged without an item
		// (Adopt) are settled either way: on success the store answers
		// for them; on failure a Bloom "maybe" is confirmed there, and
		// answers "new".
		err := pb.Batch.Commit(false)
		s.Settle(pb.Pending)
		return err
	}
	d := pb.d
	d.commitMu.Lock()
	defer d.commitMu.Unlock()
	now := time.Now()
	for i := range pb.Items {
		it := &pb.Items[i]
		d.seq++
		it.Seq = d.seq
		if it.Added.IsZero() {
			it.Added = now
		}
		pb.Batch.PushFront(uint8(it.Priority), it.Seq, queueItem(it, partition.Of(it.Host, d.parts)))
	}
	if err := pb.Batch.Commit(false); err != nil {
		s.Settle(pb.Pending)
		return err
	}
	s.Settle(pb.Pending)
	f.Add(pb.Items...)
	return nil
}

// PutDigest records where a payload was first archived, at once: another
// worker may look it up next.
func (d *State) PutDigest(sum [sha1.Size]byte, r store.DigestRecord) error {
	b := d.DB.NewBatch()
	b.PutDigest(sum, r)
	return b.Commit(false)
}

// ScopeSeed is a URL a seed's redirect added to the scope: the crawl's
// when Seed is zero, else that seed's own (WidenScope).
type ScopeSeed struct {
	URL  string
	Seed uint32
}

// ScopeSeeds returns the URLs that seeds' redirects added to the scope.
func (d *State) ScopeSeeds() ([]ScopeSeed, error) {
	var out []ScopeSeed
	err := d.DB.MetaPrefix(metaScopePrefix, func(name string, v []byte) bool {
		id, _ := binary.Uvarint(v) // none (a value written before seeds had ids): the crawl's
		out = append(out, ScopeSeed{URL: name, Seed: uint32(min(id, math.MaxUint32))})
		return true
	})
	return out, err
}

// FillSeen rebuilds the seen set's filters from every URL record, while the
// crawl runs (the set confirms every URL in the store meanwhile). It stops
// early, without error, when ctx is done.
func (d *State) FillSeen(ctx context.Context, s *seen.Set) (urls int, err error) {
	err = d.DB.URLKeys(func(part uint16, host string, hash [16]byte) bool {
		s.Restore(int(part), seen.Key(hash))
		urls++
		return urls%4096 != 0 || ctx.Err() == nil
	})
	if err != nil {
		return urls, fmt.Errorf("state: rebuild the seen set from %s: %w", d.path, err)
	}
	return urls, ctx.Err()
}

// The State queues are the frontier's Store.
var _ frontier.Store = (*State)(nil)

func (d *State) Front(p frontier.Priority, after uint64, n int) ([]frontier.Item, error) {
	if after == math.MaxUint64 {
		return nil, nil
	}
	entries, err := d.DB.FrontRange(uint8(p), after+1, n)
	if err != nil {
		return nil, err
	}
	out := make([]frontier.Item, len(entries))
	for i, e := range entries {
		out[i] = frontierItem(e.Item, e.Seq)
	}
	return out, nil
}

func (d *State) Tail(host string, after uint64, n int) ([]frontier.Item, error) {
	if after == math.MaxUint64 {
		return nil, nil
	}
	part := partition.Of(host, d.parts)
	entries, err := d.DB.QueueRange(uint16(part), host, after+1, n)
	if err != nil {
		return nil, err
	}
	out := make([]frontier.Item, len(entries))
	for i, e := range entries {
		out[i] = frontierItem(e.Item, e.Seq)
		out[i].Tail = true
	}
	return out, nil
}

func (d *State) Spill(items []frontier.Item, seqs []uint64) error {
	b := d.DB.NewBatch()
	for i := range items {
		it := &items[i]
		part := partition.Of(it.Host, d.parts)
		b.PushQueue(uint16(part), it.Host, seqs[i], queueItem(it, part))
		if it.Tail {
			b.DeleteQueue(uint16(part), it.Host, it.Seq) // made room for a more important URL
		} else {
			b.DeleteFront(uint8(it.Priority), it.Seq)
		}
	}
	return b.Commit(false)
}

func (d *State) TailHosts(fn func(host string, last uint64) bool) error {
	var err error
	qerr := d.DB.QueuedHosts(func(part uint16, host string) bool {
		var last uint64
		if last, _, err = d.DB.LastQueueSeq(part, host); err != nil {
			return false
		}
		return fn(host, last)
	})
	return errors.Join(qerr, err)
}

func (d *State) Clock(host string) (frontier.Clock, bool, error) {
	rec, found, err := d.DB.GetHost(uint16(partition.Of(host, d.parts)), host)
	return frontier.Clock{
		NextAt: rec.NextAt, CrawlDelay: rec.CrawlDelay, Backoff: rec.Backoff,
		Streak: rec.ErrorStreak, Errors: rec.Errors, Parks: rec.Parks, GaveUp: rec.GaveUp,
		Throttles: rec.Throttles, ThrottledSince: rec.ThrottledSince, Why: frontier.Why(rec.Wait), Cause: rec.WaitCause,
	}, found, err
}

// Offered is a URL handed to the node that owns its host, with what its
// finder knew of it.
type Offered struct {
	URL      string            `json:"url"` // canonical
	Depth    int               `json:"depth"`
	Hops     int               `json:"hops,omitempty"`
	Priority frontier.Priority `json:"priority"`
	Via      string            `json:"via,omitempty"`
	// Resource: fetched for what it is (an image, a sitemap), so the
	// extension rule does not apply.
	Resource bool `json:"resource,omitempty"`
	// Requisite: a page's requisite, which its finder judged by the
	// requisite rule (one hop past the scope); the owner queues it as one,
	// so its links are not followed.
	Requisite bool `json:"requisite,omitempty"`
	// Sitemap: found as a sitemap, so it does not count against the
	// owner's page budget.
	Sitemap bool `json:"sitemap,omitempty"`
	// Seed: the id of the seed it was found under (frontier.Item.Seed),
	// so the owner counts it against that seed and judges its links by
	// the seed's scope, as far as the owner knows the seed's options.
	Seed uint32 `json:"seed,omitempty"`
	// Path is its discovery path (frontier.Item.Path).
	Path string `json:"path,omitempty"`
}

// errNoForwarder is the error of a batch that found URLs for other nodes
// in a state that has no Forwarder to hand them to.
var errNoForwarder = errors.New("state: no Forwarder for URLs of other nodes' hosts")

// Forwarder hands URLs of hosts other nodes own to those nodes (the
// crawl's Cluster). An error leaves the batch uncommitted.
type Forwarder interface {
	Forward([]Offered) error
}
