package schedule

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// TestDueHeap keeps the n greatest of what it is offered, and nothing
// when there is no room.
func TestDueHeap(t *testing.T) {
	h := &dueHeap[int]{less: func(a, b int) bool { return a < b }}
	for _, x := range []int{5, 1, 9, 3, 7, 2, 8} {
		h.offer(x, 3)
	}
	got := slices.Sorted(slices.Values(h.items))
	if !slices.Equal(got, []int{7, 8, 9}) {
		t.Errorf("kept %v, want the three greatest", got)
	}
	empty := &dueHeap[int]{less: func(a, b int) bool { return a < b }}
	empty.offer(1, 0)
	if len(empty.items) != 0 {
		t.Errorf("kept %v with no room", empty.items)
	}
}

// TestScanDueWraps: scans of the recrawl index with a limit take up where
// the last stopped, across partitions, and round again, so that every due
// entry is weighed once per round however many there are; entries not yet
// due are not read.
func TestScanDueWraps(t *testing.T) {
	db := openStore(t, t.TempDir())
	now := time.Now()
	b := db.NewBatch()
	want := map[string]bool{}
	for i := range 23 {
		host := fmt.Sprintf("h%d.test", i%5)
		url := fmt.Sprintf("http://%s/%d", host, i)
		due := now.Add(-time.Duration(i) * time.Minute)
		if i%7 == 6 {
			due = now.Add(time.Hour) // not due yet
		} else {
			want[url] = true
		}
		b.PutDue(store.DueEntry{Part: uint16(partition.Of(host, 4)), Due: due, Host: host, Hash: seen.KeyOf(url), LastFetch: due.Add(-time.Hour)})
	}
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	byHash := map[[16]byte]string{}
	for u := range want {
		byHash[seen.KeyOf(u)] = u
	}
	var cur dueCursor
	var err error
	for round := range 3 {
		seenNow := map[string]int{}
		for scan := 0; ; scan++ {
			if scan > 20 {
				t.Fatal("a round never ends")
			}
			n := 0
			cur, err = scanDue(db, 4, nil, cur, now, 4, func(e store.DueEntry) {
				n++
				u, ok := byHash[e.Hash]
				if !ok {
					t.Errorf("round %d: an entry not due was read: %s", round, e.Host)
				}
				seenNow[u]++
			})
			if err != nil {
				t.Fatal(err)
			}
			if n > 4 {
				t.Errorf("a scan read %d entries, over its limit", n)
			}
			if len(seenNow) == len(want) {
				break
			}
		}
		for u := range want {
			if seenNow[u] != 1 {
				t.Errorf("round %d: %s weighed %d times", round, u, seenNow[u])
			}
		}
	}
}

// TestOutstanding: recrawls are counted per host from queueing to the end
// of their lease, once each; a host's room is what is left of its share,
// and a scan's takes count against it.
func TestOutstanding(t *testing.T) {
	var o outstanding
	o.add("a.test", "http://a.test/1")
	o.add("a.test", "http://a.test/2")
	o.add("a.test", "http://a.test/2") // queued twice: counted once
	o.add("b.test", "http://b.test/1")
	r := o.room(3)
	if r.left("a.test") != 1 || r.left("b.test") != 2 || r.left("c.test") != 3 {
		t.Errorf("room: a %d, b %d, c %d; want 1, 2, 3", r.left("a.test"), r.left("b.test"), r.left("c.test"))
	}
	r.take("c.test")
	if r.left("c.test") != 2 {
		t.Errorf("after a take, c has %d", r.left("c.test"))
	}
	o.done("http://a.test/2")
	o.done("http://a.test/2") // a second lease of it: nothing more
	o.done("http://z.test/")  // not a recrawl
	if r := o.room(3); r.left("a.test") != 2 || r.left("b.test") != 2 {
		t.Errorf("after the leases ended: a %d, b %d; want 2 and 2", r.left("a.test"), r.left("b.test"))
	}
	o.done("http://a.test/1")
	o.done("http://b.test/1")
	if len(o.hosts) != 0 || len(o.urls) != 0 {
		t.Errorf("all done, still counted: %v %v", o.hosts, o.urls)
	}
}

// TestIndexRebuilt builds the recrawl index again from the URL records,
// as a start does when the index was built for another policy or by a
// binary that schedules otherwise (an older scheduleVersion, whose key
// had no version at all): a sitemap that answered 404 and was put on the
// robots.txt schedule keeps it even when it is not the host's
// /sitemap.xml (one its robots.txt named, which the record does not say),
// and a page that answered 404 gets a page's schedule. An index built for
// the policy it has is kept as it is, and a crawl that is not continuous
// marks it as not kept.
func TestIndexRebuilt(t *testing.T) {
	const robotsTTL = time.Hour
	policy := &recrawl.Policy{Min: time.Second, Max: time.Minute}
	db := openStore(t, t.TempDir())
	p := newPlanner(t, Config{Policy: policy, RobotsTTL: robotsTTL, DB: db})
	last := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	var recs []store.URLRecord
	for path, r := range map[string]store.URLRecord{
		"/maps/a.xml": {LastStatus: 404, NextCrawl: last.Add(robotsTTL)},
		"/gone":       {LastStatus: 404, NextCrawl: last.Add(time.Hour + time.Minute)},
		"/page":       {LastStatus: 200, NextCrawl: last.Add(time.Hour)},
	} {
		r.URL, r.Depth, r.Status, r.LastFetch, r.SitemapPriority = "http://r.test"+path, 1, store.URLDone, last, -1
		recs = append(recs, r)
	}
	write := func(meta string) {
		b := db.NewBatch()
		b.ClearDue()
		b.PutMeta(metaRecrawl, []byte(meta))
		if err := b.Commit(true); err != nil {
			t.Fatal(err)
		}
		put(t, p, recs...)
	}
	check := func(name string) {
		t.Helper()
		for path, want := range map[string]bool{"/maps/a.xml": true, "/gone": false, "/page": false} {
			r := record(t, p, "http://r.test"+path)
			robots := r.NextCrawl.Equal(last.Add(robotsTTL))
			if page := !r.NextCrawl.After(last.Add(policy.Max)); robots != want || (!want && !page) {
				t.Errorf("%s: %s due %v after its last fetch; want the robots.txt schedule (%v): %t", name, path, r.NextCrawl.Sub(last), robotsTTL, want)
			}
			if due := dueTimes(t, p, r.URL); len(due) != 1 || !due[0].Equal(r.NextCrawl) {
				t.Errorf("%s: %s has index entries %v, its record %v", name, path, due, r.NextCrawl)
			}
		}
	}
	write("min=1 max=2 prior=1 floor=1 uniform=false")
	if err := p.prepareDueIndex(); err != nil {
		t.Fatal(err)
	}
	check("another policy")
	d := policy.WithDefaults()
	write(fmt.Sprintf("min=%d max=%d prior=%g floor=%g uniform=%t", d.Min, d.Max, d.Prior, d.Floor, d.Uniform))
	if err := p.prepareDueIndex(); err != nil {
		t.Fatal(err)
	}
	check("an older schedule")

	// Built for this very policy: kept, whatever its entries say.
	kept := recs[0]
	kept.NextCrawl = last.Add(7 * time.Minute)
	put(t, p, kept)
	if err := p.prepareDueIndex(); err != nil {
		t.Fatal(err)
	}
	if r := record(t, p, kept.URL); !r.NextCrawl.Equal(kept.NextCrawl) {
		t.Errorf("the index of this policy built again: %s due %v, want %v", kept.URL, r.NextCrawl, kept.NextCrawl)
	}
	// A crawl that ends keeps no index: the next continuous one builds it.
	newPlanner(t, Config{DB: db})
	if _, ok, err := db.GetMeta(metaRecrawl); err != nil || ok {
		t.Errorf("a crawl that is not continuous left the index marked as kept (%v)", err)
	}
}

// TestRescheduledWhenNotDue: a recrawl index entry whose time has come
// but whose URL the policy does not find Due (here: Min has not passed
// since its last fetch, as when the host's prior changed since it was
// scheduled) is moved by the scan to the time the policy gives, not left
// to be read again at every scan; nothing is queued.
func TestRescheduledWhenNotDue(t *testing.T) {
	p := newPlanner(t, Config{Policy: &recrawl.Policy{Min: time.Minute}})
	q := &committed{}
	rc := newRecrawler(t, p, "http://n.test/", q, nil)
	now := time.Now()
	r := store.URLRecord{URL: "http://n.test/a", Depth: 1, Status: store.URLDone, LastStatus: 200,
		LastFetch: now.Add(-time.Second), NextCrawl: now.Add(-time.Millisecond), SitemapPriority: -1}
	put(t, p, r)
	if err := rc.QueueDue(now); err != nil {
		t.Fatal(err)
	}
	if n := rc.Counts().Recrawls; n != 0 || len(q.items) != 0 {
		t.Errorf("%d recrawls queued (%v); want none", n, q.items)
	}
	got := record(t, p, r.URL)
	if got.Status != store.URLDone || got.NextCrawl.Before(r.LastFetch.Add(time.Minute)) {
		t.Errorf("record %v, due %v after its last fetch; want done, due at least Min (1m) after it", got.Status, got.NextCrawl.Sub(r.LastFetch))
	}
	if due := dueTimes(t, p, r.URL); len(due) != 1 || !due[0].Equal(got.NextCrawl) {
		t.Errorf("index entries %v; want one, at the record's %v", due, got.NextCrawl)
	}
}

// TestEntryImportanceRefreshed: an entry whose time has come, not Due by
// the importance it was scheduled with but Due by the one its URL has now
// (it gained in-links), takes that importance, so that the next scan
// queues it rather than read it again and again.
func TestEntryImportanceRefreshed(t *testing.T) {
	p := newPlanner(t, Config{Policy: &recrawl.Policy{Min: 2 * time.Millisecond, Prior: 1}})
	q := &committed{}
	rc := newRecrawler(t, p, "http://i.test/", q, nil)
	now := time.Now()
	r := store.URLRecord{URL: "http://i.test/a", Depth: 1, Status: store.URLDone, LastStatus: 200, InLinks: 100,
		LastFetch: now.Add(-time.Second), NextCrawl: now.Add(-time.Millisecond), SitemapPriority: -1}
	k := put(t, p, r)[r.URL]
	b := p.db.NewBatch()
	b.PutDue(Entry(uint16(partition.Of("i.test", p.parts)), "i.test", k, r, 1e-4)) // scheduled when it had hardly any importance
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	if err := rc.QueueDue(time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := rc.Counts().Recrawls; n != 0 {
		t.Fatalf("the first scan queued %d; want it to weigh the entry again first", n)
	}
	if err := rc.QueueDue(time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := rc.Counts().Recrawls; n != 1 || len(q.items) != 1 {
		t.Errorf("%d recrawls queued in two scans (%v); want 1", n, q.items)
	}
}

// TestQueueDue: a scan queues the due URLs as their hosts have room (one
// in flight, one waiting, and what the host's clock allows in two scans),
// a seed at high priority; a URL the scope or the trap cut-off now
// refuses is rejected for good; a held partition is another node's to
// recrawl; and a recrawl's end makes room for the next.
func TestQueueDue(t *testing.T) {
	p := newPlanner(t, Config{Policy: &recrawl.Policy{Min: time.Millisecond, Max: time.Hour}})
	q := &committed{}
	rc := newRecrawler(t, p, "http://a.test/", q, noTraps{"t.a.test": true})
	held := ""
	for i := range 20 {
		if h := fmt.Sprintf("h%d.a.test", i); partition.Of(h, p.parts) != partition.Of("a.test", p.parts) {
			held = h
			break
		}
	}
	rc.Hold(partition.Of(held, p.parts), true)
	now := time.Now()
	due := func(url string, depth int) store.URLRecord {
		return store.URLRecord{URL: url, Depth: depth, Status: store.URLDone, LastStatus: 200,
			LastFetch: now.Add(-2 * time.Hour), NextCrawl: now.Add(-time.Hour), SitemapPriority: -1}
	}
	recs := []store.URLRecord{due("http://a.test/", 0), due("http://b.test/out", 1), due("http://t.a.test/trap", 1), due("http://"+held+"/x", 1)}
	for i := range 5 {
		recs = append(recs, due(fmt.Sprintf("http://a.test/%d", i), 1))
	}
	put(t, p, recs...)
	if per := rc.perHostRecrawls(); per != 100 {
		t.Fatalf("%d recrawls a host may have out at a delay of 1ms, want the cap, 100", per)
	}
	rc.delay = time.Second // 2 + what a scan a second allows in two scans: 4
	if err := rc.QueueDue(now); err != nil {
		t.Fatal(err)
	}
	if len(q.items) != 4 || rc.Counts().Recrawls != 4 {
		t.Fatalf("queued %v (%d counted); want 4 of a.test's 6", q.items, rc.Counts().Recrawls)
	}
	for _, it := range q.items {
		if it.Host != "a.test" || (it.Priority == frontier.High) != (it.URL == "http://a.test/") {
			t.Errorf("queued %s of %s at priority %v; want a.test's, the seed alone high", it.URL, it.Host, it.Priority)
		}
		if r := record(t, p, it.URL); r.Status != store.URLQueued || len(dueTimes(t, p, it.URL)) != 0 {
			t.Errorf("%s queued, its record %v, still in the index: %v", it.URL, r.Status, dueTimes(t, p, it.URL))
		}
	}
	for url, want := range map[string]store.URLStatus{"http://b.test/out": store.URLRejected, "http://t.a.test/trap": store.URLRejected, "http://" + held + "/x": store.URLDone} {
		if r := record(t, p, url); r.Status != want {
			t.Errorf("%s: %v, want %v", url, r.Status, want)
		}
	}
	if err := rc.QueueDue(now); err != nil || len(q.items) != 4 {
		t.Fatalf("a second scan, no room made: %d queued (%v); want still 4", len(q.items), err)
	}
	rc.Done(q.items[0].URL)
	if err := rc.QueueDue(now); err != nil || len(q.items) != 5 {
		t.Errorf("a scan after a recrawl ended: %d queued (%v); want one more", len(q.items), err)
	}
}
