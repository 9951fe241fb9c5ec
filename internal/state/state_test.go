package state

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestStateOfAnotherFormatIsRefused opens a state without the format this
// build writes (an older weft's, whose URLs wait in per-host queues the
// frontier never reads): it must be refused by name, not resumed with its
// queue silently ignored.
func TestStateOfAnotherFormatIsRefused(t *testing.T) {
	dir := t.TempDir()
	d, _, err := Open(dir, 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := d.DB.NewBatch()
	b.PutMeta(metaFormat, []byte("1"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	d.Close()
	_, _, err = Open(dir, 4, false, nil)
	if err == nil || !strings.Contains(err.Error(), "--fresh") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("reopen: %v, want a refusal naming the directory and --fresh", err)
	}
	d, found, err := Open(dir, 4, true, nil)
	if err != nil || found {
		t.Fatalf("--fresh over it: found=%v err=%v", found, err)
	}
	d.Close()
}

// A URL admitted in a batch is on disk, queued, once the batch commits,
// and a second admission of it is not new; a lease completed as a page
// takes it off the queue, and its record says it was fetched. The state
// reopened finds the crawl it held.
func TestBatchQueuesAndCompletes(t *testing.T) {
	dir := t.TempDir()
	d, found, err := Open(dir, 4, false, nil)
	if err != nil || found {
		t.Fatalf("open: found=%v err=%v", found, err)
	}
	s, err := d.Seen(1000)
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.Frontier(frontier.Config{Partitions: d.Partitions(), KeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- f.Run(ctx) }() // takes in what the batches add
	pb := d.NewBatch()
	for _, u := range []string{"http://a.test/x", "http://a.test/x"} {
		if _, err := pb.Admit(s, "a.test", u); err != nil {
			t.Fatal(err)
		}
	}
	if len(pb.Items) != 1 {
		t.Fatalf("one URL admitted twice in a batch: %d items", len(pb.Items))
	}
	if err := pb.Commit(s, f); err != nil {
		t.Fatal(err)
	}
	if front, _, err := d.Left(); err != nil || front != 1 {
		t.Fatalf("after the commit: %d front entries, err %v; want 1", front, err)
	}
	l, err := f.Next(t.Context())
	if err != nil || l.URL != "http://a.test/x" {
		t.Fatalf("lease: %+v, %v", l, err)
	}
	done := d.NewBatch()
	res := done.Complete(f, l, frontier.Result{Fetched: true}, true)
	if err := done.Commit(s, f); err != nil {
		t.Fatal(err)
	}
	f.Complete(l, res)
	if front, tails, err := d.Left(); err != nil || front != 0 || tails != 0 {
		t.Errorf("after the lease: %d front entries, %d tails, err %v; want none", front, tails, err)
	}
	rec, ok, err := d.DB.GetURL(uint16(partition.Of("a.test", d.Partitions())), "a.test", seen.KeyOf(l.URL))
	if err != nil || !ok || rec.Status != store.URLDone || rec.LastStatus != 200 {
		t.Errorf("record: %+v, found %v, err %v; want done with 200", rec, ok, err)
	}
	stop()
	if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d, found, err = Open(dir, 4, false, nil)
	if err != nil || !found {
		t.Fatalf("reopen: found=%v err=%v", found, err)
	}
	d.Close()
}

// TestQueueItemKeepsWhatItIs: an item written to a durable queue and read
// back is still a requisite or a sitemap, so a resumed crawl counts it
// against the same budget (crawl.Config.MaxRequisites, not MaxPages).
func TestQueueItemKeepsWhatItIs(t *testing.T) {
	for _, it := range []frontier.Item{
		{URL: "http://a.test/", Host: "a.test"},
		{URL: "http://a.test/s.css", Host: "a.test", Requisite: true},
		{URL: "http://a.test/sitemap.xml", Host: "a.test", Sitemap: true},
	} {
		got := frontierItem(queueItem(&it, 1), 7)
		if got.Requisite != it.Requisite || got.Sitemap != it.Sitemap || got.URL != it.URL || got.Seq != 7 {
			t.Errorf("%s: read back as %+v", it.URL, got)
		}
	}
}

// A batch that found URLs of other nodes' hosts, in a state without a
// Forwarder, does not commit: an error that says so, nothing written.
func TestBatchWithoutForwarderDoesNotCommit(t *testing.T) {
	d, _, err := Open(t.TempDir(), 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s, err := d.Seen(1000)
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.Frontier(frontier.Config{Partitions: d.Partitions()})
	if err != nil {
		t.Fatal(err)
	}
	pb := d.NewBatch()
	if _, err := pb.Admit(s, "a.test", "http://a.test/x"); err != nil {
		t.Fatal(err)
	}
	pb.Forward = append(pb.Forward, Offered{URL: "http://b.test/"})
	if err := pb.Commit(s, f); err == nil || !strings.Contains(err.Error(), "no Forwarder") {
		t.Fatalf("commit: %v, want the missing Forwarder named", err)
	}
	if front, _, _ := d.Left(); front != 0 {
		t.Errorf("%d front entries written", front)
	}
}

// TestBoostedRank: a URL is queued, and its record kept, at its rank
// times the operators' boost in force when it is staged: a pattern's
// within a host, a host's strong enough for the high front queue, one
// below 1 lower (and not to the high queue); a requisite keeps the rank
// its page gave it. A copy queued again takes the boost in force then,
// and a lease's record keeps the rank it was queued with.
func TestBoostedRank(t *testing.T) {
	d, _, err := Open(t.TempDir(), 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	boosts := policy.NewSet(policy.Limits{})
	for host, p := range map[string]policy.Policy{
		"a.test":    {Boosts: []policy.PatternBoost{{Pattern: "/news/", Factor: 8}}},
		"high.test": {Boost: 64},
		"low.test":  {Boost: 0.01},
	} {
		if err := boosts.Put(host, p); err != nil {
			t.Fatal(err)
		}
	}
	d.Boosts = boosts
	part := func(host string) int { return partition.Of(host, d.Partitions()) }
	pb := d.NewBatch()
	for _, it := range []frontier.Item{
		{URL: "http://a.test/news/1", Host: "a.test", Depth: 1, Rank: 10},
		{URL: "http://a.test/other", Host: "a.test", Depth: 1, Rank: 10},
		{URL: "http://a.test/news/s.css", Host: "a.test", Depth: 1, Rank: 10, Requisite: true},
		{URL: "http://high.test/x", Host: "high.test", Depth: 1, Rank: 8},
		{URL: "http://low.test/x", Host: "low.test", Depth: 1, Rank: 300},
	} {
		it.Priority = frontier.Normal
		if err := pb.Stage(it, part(it.Host), seen.KeyOf(it.URL)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pb.Batch.Commit(false); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		rank uint32
		prio frontier.Priority
	}{
		"http://a.test/news/1": {80, frontier.Normal}, "http://a.test/other": {10, frontier.Normal}, "http://a.test/news/s.css": {10, frontier.Normal},
		"http://high.test/x": {512, frontier.High}, "http://low.test/x": {3, frontier.Normal},
	}
	for _, it := range pb.Items {
		rec, _, err := d.DB.GetURL(uint16(part(it.Host)), it.Host, seen.KeyOf(it.URL))
		w := want[it.URL]
		if err != nil || it.Rank != w.rank || it.Priority != w.prio || rec.Rank != w.rank || rec.Priority != uint8(w.prio) {
			t.Errorf("%s: queued at rank %d, priority %d; record %+v (%v); want rank %d, priority %d", it.URL, it.Rank, it.Priority, rec, err, w.rank, w.prio)
		}
	}
	// The operator lowers the pattern's boost while the crawl runs: the
	// next copy queued takes the new one.
	if err := boosts.Put("a.test", policy.Policy{Boosts: []policy.PatternBoost{{Pattern: "/news/", Factor: 2}}}); err != nil {
		t.Fatal(err)
	}
	again := d.NewBatch()
	if !again.Requeue(frontier.Item{URL: "http://a.test/news/1", Host: "a.test", Depth: 1, Rank: 40, Priority: frontier.Normal}, seen.KeyOf("http://a.test/news/1")) {
		t.Fatal("not queued again")
	}
	if it := again.Items[0]; it.Rank != 80 || !it.Again {
		t.Errorf("queued again at rank %d (again %v), want 40 times the new boost 2", it.Rank, it.Again)
	}
	// The copy fetched: its record keeps the rank it was queued with.
	done := d.NewBatch()
	l := frontier.Lease{Item: again.Items[0]}
	l.Seq = 1
	done.Done(l, part("a.test"), frontier.Result{Fetched: true}, 200, "ok", nil)
	if err := done.Batch.Commit(false); err != nil {
		t.Fatal(err)
	}
	if rec, _, _ := d.DB.GetURL(uint16(part("a.test")), "a.test", seen.KeyOf(l.URL)); rec.Status != store.URLDone || rec.Rank != 80 {
		t.Errorf("fetched: %+v, want done at rank 80", rec)
	}
}

// A URL queued again (Requeue) has two copies; whichever is leased second
// is stale, in this process and after a restart, and a recrawl queued
// after the fetch is not. A URL no longer waiting is not queued again.
func TestStaleCopies(t *testing.T) {
	dir := t.TempDir()
	d, _, err := Open(dir, 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	const u, host = "http://a.test/deep", "a.test"
	k, part := seen.KeyOf(u), partition.Of(host, 4)
	first := frontier.Item{URL: u, Host: host, Depth: 3, Priority: frontier.Normal, Seq: 1, Added: time.Now()}
	pb := d.NewBatch()
	if err := pb.Stage(first, part, k); err != nil {
		t.Fatal(err)
	}
	if err := pb.Batch.Commit(false); err != nil {
		t.Fatal(err)
	}
	again := d.NewBatch()
	if !again.Requeue(frontier.Item{URL: u, Host: host, Depth: 3, Priority: frontier.High, Rank: 300}, k) || !again.Items[0].Again {
		t.Fatalf("a waiting URL not queued again: %+v", again.Items)
	}
	copyLease := frontier.Lease{Item: again.Items[0]}
	copyLease.Seq, copyLease.Added = 2, time.Now()
	firstLease := frontier.Lease{Item: first}
	if d.Stale(copyLease) {
		t.Fatal("the copy leased first is stale")
	}
	done := d.NewBatch()
	done.Done(copyLease, part, frontier.Result{Fetched: true}, 200, "ok", nil)
	if err := done.Batch.Commit(false); err != nil {
		t.Fatal(err)
	}
	if !d.Stale(firstLease) {
		t.Error("the first copy, leased after the URL was fetched, is not stale")
	}
	recrawl := frontier.Lease{Item: first}
	recrawl.Added = time.Now().Add(time.Second)
	if d.Stale(recrawl) {
		t.Error("a recrawl queued after the fetch is stale")
	}
	if d.NewBatch().Requeue(frontier.Item{URL: u, Host: host, Priority: frontier.High, Rank: 600}, k) {
		t.Error("a URL fetched already was queued again")
	}
	d.Close()

	// A restart forgets which URLs it queued again: a copy says so
	// itself, and a URL queued by the earlier run is read in the store.
	d, _, err = Open(dir, 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !d.Stale(firstLease) || !d.Stale(copyLease) {
		t.Errorf("after a restart: first copy stale %v, copy stale %v; want both", d.Stale(firstLease), d.Stale(copyLease))
	}
}

// TestReleaseHeld: a URL held past its family's trap budget is queued
// again as found once released, its record taking that priority, and the
// entry held is then stale; one held by the releasing batch itself is
// queued as found in place; one fetched, or not held, is not released.
func TestReleaseHeld(t *testing.T) {
	d, _, err := Open(t.TempDir(), 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const host = "a.test"
	part := partition.Of(host, 4)
	held := func(u string) (frontier.Item, judge.Held) {
		it := frontier.Item{URL: u, Host: host, Depth: 2, Priority: judge.ReleasedPriority, Rank: 10, Via: "http://a.test/shop?c=1"}
		h := judge.Held{Item: it, Key: seen.KeyOf(u)}
		it.Priority = judge.HeldPriority
		return it, h
	}
	record := func(u string) store.URLRecord {
		t.Helper()
		rec, ok, err := d.DB.GetURL(uint16(part), host, seen.KeyOf(u))
		if err != nil || !ok {
			t.Fatalf("%s: no record (%v)", u, err)
		}
		return rec
	}
	const u, v, w = "http://a.test/shop?c=2", "http://a.test/shop?c=3", "http://a.test/shop?c=4"
	pb := d.NewBatch()
	itU, hU := held(u)
	itW, hW := held(w)
	for _, it := range []frontier.Item{itU, itW} {
		if err := pb.Stage(it, part, seen.KeyOf(it.URL)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pb.Stage(frontier.Item{URL: v, Host: host, Depth: 2, Priority: frontier.Normal}, part, seen.KeyOf(v)); err != nil {
		t.Fatal(err)
	}
	if err := pb.Batch.Commit(false); err != nil {
		t.Fatal(err)
	}
	heldLease := frontier.Lease{Item: itU}
	heldLease.Seq, heldLease.Added = 1, time.Now()
	if d.Stale(heldLease) {
		t.Fatal("a URL held, not released, is stale")
	}
	rb := d.NewBatch()
	if !rb.Release(hU) || len(rb.Items) != 1 || rb.Items[0].Priority != judge.ReleasedPriority || rb.Items[0].Again {
		t.Fatalf("a held URL released: %+v; want one item at %v", rb.Items, judge.ReleasedPriority)
	}
	if _, hV := held(v); rb.Release(hV) {
		t.Error("a URL queued as usual was released")
	}
	if err := rb.Batch.Commit(false); err != nil {
		t.Fatal(err)
	}
	if rec := record(u); rec.Priority != uint8(judge.ReleasedPriority) || rec.Status != store.URLQueued {
		t.Errorf("record after the release: %+v; want queued at %v", rec, judge.ReleasedPriority)
	}
	// Its estimate risen: a copy queued again stays at the released
	// priority, unless the rank makes it High.
	if ab := d.NewBatch(); !ab.Requeue(frontier.Item{URL: u, Host: host, Depth: 2, Priority: frontier.Normal, Rank: 50}, seen.KeyOf(u)) || ab.Items[0].Priority != judge.ReleasedPriority {
		t.Errorf("a released URL queued again: %+v; want it at %v", ab.Items, judge.ReleasedPriority)
	}
	if ab := d.NewBatch(); !ab.Requeue(frontier.Item{URL: u, Host: host, Depth: 2, Priority: frontier.High, Rank: 50}, seen.KeyOf(u)) || ab.Items[0].Priority != frontier.High {
		t.Errorf("a released URL queued again at High: %+v", ab.Items)
	}
	released := frontier.Lease{Item: rb.Items[0]}
	released.Seq, released.Added = 2, time.Now()
	if !d.Stale(heldLease) || d.Stale(released) {
		t.Errorf("after the release: the entry held stale %v, the one released %v; want true, false", d.Stale(heldLease), d.Stale(released))
	}
	// Fetched (a continuous crawl leased the entry held): not released.
	done := d.NewBatch()
	wLease := frontier.Lease{Item: itW}
	wLease.Seq, wLease.Added = 3, time.Now()
	done.Done(wLease, part, frontier.Result{Fetched: true}, 200, "ok", nil)
	if err := done.Batch.Commit(false); err != nil {
		t.Fatal(err)
	}
	if d.NewBatch().Release(hW) {
		t.Error("a held URL fetched since was released")
	}
	// Held by the batch that releases it.
	const x = "http://a.test/shop?c=5"
	itX, hX := held(x)
	xb := d.NewBatch()
	if err := xb.Stage(itX, part, seen.KeyOf(x)); err != nil {
		t.Fatal(err)
	}
	if !xb.Release(hX) || len(xb.Items) != 1 || xb.Items[0].Priority != judge.ReleasedPriority {
		t.Fatalf("released by its own batch: %+v; want its one item at %v", xb.Items, judge.ReleasedPriority)
	}
	if err := xb.Batch.Commit(false); err != nil {
		t.Fatal(err)
	}
	if rec := record(x); rec.Priority != uint8(judge.ReleasedPriority) {
		t.Errorf("record of a URL released by its own batch: %+v; want %v", rec, judge.ReleasedPriority)
	}
}

// TestHoldLeased: a URL queued as usual and leased after a wall was
// learnt is queued again at judge.HeldPriority, and its lease done as
// judge.HeldAgain writes its record at that priority; a batch that ends
// otherwise (its crawl failing) leaves the record as it was. The wall's
// fall releases it as it does a URL held when found. A copy queued again
// and leased once the URL is held adds no entry; the URL's other entry,
// leased after the release, fetches it, and the entry released is then
// stale. A URL fetched before is not held.
func TestHoldLeased(t *testing.T) {
	d, _, err := Open(t.TempDir(), 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const host, u, f = "a.test", "http://a.test/object?id=7", "http://a.test/object?id=8"
	part := partition.Of(host, 4)
	k := seen.KeyOf(u)
	record := func() store.URLRecord {
		t.Helper()
		rec, _, err := d.DB.GetURL(uint16(part), host, k)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	commit := func(b *Batch) {
		t.Helper()
		if err := b.Batch.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	pb := d.NewBatch()
	for _, url := range []string{u, f} {
		if err := pb.Stage(frontier.Item{URL: url, Host: host, Depth: 2, Priority: frontier.Normal, Rank: 10, Via: "http://a.test/objects/"}, part, seen.KeyOf(url)); err != nil {
			t.Fatal(err)
		}
	}
	commit(pb)
	first := frontier.Lease{Item: pb.Items[0]}
	first.Seq, first.Added = 1, time.Now()
	// A copy queued again as its rank rose, leased first.
	ab := d.NewBatch()
	if !ab.Requeue(frontier.Item{URL: u, Host: host, Depth: 2, Priority: frontier.Normal, Rank: 500}, k) {
		t.Fatal("not queued again")
	}
	commit(ab)
	copyLease := frontier.Lease{Item: ab.Items[0]}
	copyLease.Seq, copyLease.Added = 2, time.Now()

	failing := d.NewBatch()
	if _, ok := failing.Hold(copyLease); !ok {
		t.Fatal("not held")
	}
	commit(failing) // its crawl failing: no Done
	if rec := record(); rec.Priority == uint8(judge.HeldPriority) {
		t.Fatalf("record after a hold whose lease was not done: %+v; want it as it was", rec)
	}
	hb := d.NewBatch()
	it, ok := hb.Hold(copyLease)
	if !ok || it.URL != u || it.Priority != judge.HeldPriority || it.Seq != 0 || it.Again || len(hb.Items) != 1 {
		t.Fatalf("held: %+v, %v, items %+v; want one entry of %s at %v", it, ok, hb.Items, u, judge.HeldPriority)
	}
	hb.Done(copyLease, part, frontier.Result{}, 0, judge.HeldAgain, nil)
	commit(hb)
	if rec := record(); rec.Status != store.URLQueued || rec.Priority != uint8(judge.HeldPriority) || !rec.LastFetch.IsZero() {
		t.Fatalf("record after the hold: %+v; want queued at %v, never fetched", rec, judge.HeldPriority)
	}
	heldLease := frontier.Lease{Item: hb.Items[0]}
	heldLease.Seq = 3
	if d.Stale(heldLease) {
		t.Error("the entry held is stale")
	}
	if again, ok := d.NewBatch().Hold(first); !ok || again.URL != "" {
		t.Errorf("the first copy leased once the URL is held: %+v, %v; want no entry, held", again, ok)
	}

	// The wall falls: released, and the entry held is stale.
	released := it
	released.Priority = judge.ReleasedPriority
	rb := d.NewBatch()
	if !rb.Release(judge.Held{Item: released, Key: k, Ranked: true}) || len(rb.Items) != 1 || rb.Items[0].Rank != it.Rank {
		t.Fatalf("the URL held when leased: released %+v; want one entry at its rank %d", rb.Items, it.Rank)
	}
	commit(rb)
	if !d.Stale(heldLease) {
		t.Error("the entry held is not stale once released")
	}
	// The first copy, leased before the entry released, fetches it; the
	// entry released is then stale.
	if d.Stale(first) {
		t.Fatal("the first copy, leased before the URL was fetched, is stale")
	}
	done := d.NewBatch()
	done.Done(first, part, frontier.Result{Fetched: true}, 200, "ok", nil)
	commit(done)
	relLease := frontier.Lease{Item: rb.Items[0]}
	relLease.Seq = 4
	if !d.Stale(relLease) {
		t.Error("the entry released, leased after the URL was fetched, is not stale: fetched twice")
	}

	fLease := frontier.Lease{Item: pb.Items[1]}
	fLease.Seq, fLease.Added = 5, time.Now()
	fd := d.NewBatch()
	fd.Done(fLease, part, frontier.Result{Fetched: true}, 200, "ok", nil)
	commit(fd)
	if _, ok := d.NewBatch().Hold(fLease); ok {
		t.Error("a URL fetched before was held")
	}
}
