package store

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/partition"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// openMem opens a store on a fresh in-memory FS and closes it at the end of
// the test.
func openMem(t testing.TB) *DB {
	t.Helper()
	db, err := Open("/db", &Options{FS: vfs.NewMem(), CacheSize: 8 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !db.closed.Load() {
			if err := db.Close(); err != nil {
				t.Error(err)
			}
		}
	})
	return db
}

func commit(t testing.TB, b *Batch) {
	t.Helper()
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
}

func hashOf(s string) [16]byte {
	sum := sha256.Sum256([]byte(s))
	return [16]byte(sum[:16])
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)

func item(host string, part uint16, i int) QueueItem {
	return QueueItem{
		URL:      fmt.Sprintf("https://%s/page/%d", host, i),
		Host:     host,
		Part:     part,
		Depth:    i % 5,
		Hops:     i % 2,
		Priority: uint8(i % 3),
		Via:      fmt.Sprintf("https://%s/", host),
		Added:    t0.Add(time.Duration(i) * time.Millisecond),
		Fetch:    fetchOf(host, i),
		Path:     "LLE"[:i%4],
	}
}

// fetchOf gives every third item a Fetch URL (a redirect's own variant).
func fetchOf(host string, i int) string {
	if i%3 != 0 {
		return ""
	}
	return fmt.Sprintf("https://%s/page/%d;jsessionid=%d", host, i, i)
}

func TestRoundTrip(t *testing.T) {
	db := openMem(t)
	host := HostRecord{
		Host:        "www.example.com:8080",
		NextAt:      t0,
		CrawlDelay:  1500 * time.Millisecond,
		ErrorStreak: 3,
		Accepted:    1 << 40,
	}
	zeroHost := HostRecord{Host: "zero.example"}
	url := URLRecord{
		URL: "https://www.example.com:8080/a?b=c", Depth: 7, Priority: 2, Status: URLDone,
		LastStatus: 304, LastOutcome: "not-modified", LastFetch: t0, NextCrawl: t0.Add(24 * time.Hour),
	}
	zeroURL := URLRecord{URL: "https://zero.example/", Status: URLQueued}
	fr := item("www.example.com:8080", 513, 4)
	fr.Depth, fr.Hops = -1, 1<<20 // varints: negative and large survive
	q := item("www.example.com:8080", 513, 5)
	zeroItem := QueueItem{Host: "zero.example"}

	b := db.NewBatch()
	b.PutHost(513, host)
	b.PutHost(0, zeroHost)
	b.PutURL(513, host.Host, hashOf(url.URL), url)
	b.PutURL(0, zeroHost.Host, hashOf(zeroURL.URL), zeroURL)
	b.PutMeta("crawl", []byte("config-v1"))
	b.PutMeta("empty", nil)
	b.PushFront(2, 1<<40, fr)
	b.PushFront(0, 0, zeroItem)
	b.PushQueue(513, host.Host, 9, q)
	b.PushQueue(0, zeroHost.Host, 0, zeroItem)
	if got := b.Len(); got != 10 {
		t.Fatalf("Len = %d, want 10", got)
	}
	commit(t, b)

	checkHost := func(part uint16, want HostRecord) {
		t.Helper()
		got, ok, err := db.GetHost(part, want.Host)
		if err != nil || !ok {
			t.Fatalf("GetHost(%q) = %v, %v", want.Host, ok, err)
		}
		if !hostEqual(got, want) {
			t.Errorf("GetHost(%q) =\n%+v\nwant\n%+v", want.Host, got, want)
		}
	}
	checkHost(513, host)
	checkHost(0, zeroHost)
	for _, c := range []struct {
		part uint16
		host string
		want URLRecord
	}{{513, host.Host, url}, {0, zeroHost.Host, zeroURL}} {
		got, ok, err := db.GetURL(c.part, c.host, hashOf(c.want.URL))
		if err != nil || !ok {
			t.Fatalf("GetURL(%q) = %v, %v", c.want.URL, ok, err)
		}
		if !urlEqual(got, c.want) {
			t.Errorf("GetURL = %+v, want %+v", got, c.want)
		}
		if has, err := db.HasURL(c.part, c.host, hashOf(c.want.URL)); err != nil || !has {
			t.Errorf("HasURL(%q) = %v, %v", c.want.URL, has, err)
		}
	}
	if v, ok, err := db.GetMeta("crawl"); err != nil || !ok || string(v) != "config-v1" {
		t.Errorf("GetMeta(crawl) = %q, %v, %v", v, ok, err)
	}
	if v, ok, err := db.GetMeta("empty"); err != nil || !ok || v == nil || len(v) != 0 {
		t.Errorf("GetMeta(empty) = %q (nil %v), %v, %v", v, v == nil, ok, err)
	}
	fe, err := db.FrontRange(2, 0, 10)
	if err != nil || len(fe) != 1 || fe[0].Seq != 1<<40 || !itemEqual(fe[0].Item, fr) {
		t.Errorf("FrontRange(2) = %+v, %v; want seq %d %+v", fe, err, uint64(1)<<40, fr)
	}
	fe, err = db.FrontRange(0, 0, 10)
	if err != nil || len(fe) != 1 || fe[0].Seq != 0 || !itemEqual(fe[0].Item, zeroItem) {
		t.Errorf("FrontRange(0) = %+v, %v; want %+v", fe, err, zeroItem)
	}
	qe, err := db.QueueRange(513, host.Host, 0, 10)
	if err != nil || len(qe) != 1 || qe[0].Seq != 9 || !itemEqual(qe[0].Item, q) {
		t.Errorf("QueueRange = %+v, %v; want seq 9 %+v", qe, err, q)
	}
	qe, err = db.QueueRange(0, zeroHost.Host, 0, 10)
	if err != nil || len(qe) != 1 || !itemEqual(qe[0].Item, QueueItem{Host: zeroHost.Host}) {
		t.Errorf("QueueRange(zero) = %+v, %v", qe, err)
	}

	// Absent records.
	if _, ok, err := db.GetHost(1, "nobody.example"); ok || err != nil {
		t.Errorf("GetHost(absent) = %v, %v", ok, err)
	}
	if _, ok, err := db.GetURL(513, host.Host, hashOf("nope")); ok || err != nil {
		t.Errorf("GetURL(absent) = %v, %v", ok, err)
	}
	if has, err := db.HasURL(512, host.Host, hashOf(url.URL)); has || err != nil {
		t.Errorf("HasURL(other partition) = %v, %v", has, err)
	}
	if _, ok, err := db.GetMeta("nope"); ok || err != nil {
		t.Errorf("GetMeta(absent) = %v, %v", ok, err)
	}

	// Survives a reopen (the memtable is replayed from the WAL).
	fs := db.pdb.Metrics() // keep the DB busy with something harmless
	_ = fs
}

func hostEqual(a, b HostRecord) bool {
	return a.Host == b.Host && a.NextAt.Equal(b.NextAt) && a.CrawlDelay == b.CrawlDelay &&
		a.ErrorStreak == b.ErrorStreak && a.Accepted == b.Accepted &&
		a.Backoff == b.Backoff && a.Errors == b.Errors &&
		a.Parks == b.Parks && a.GaveUp == b.GaveUp &&
		a.Throttles == b.Throttles && a.ThrottledSince.Equal(b.ThrottledSince) &&
		a.Wait == b.Wait && a.WaitCause == b.WaitCause
}

func urlEqual(a, b URLRecord) bool {
	return a.URL == b.URL && a.Depth == b.Depth && a.Priority == b.Priority && a.Status == b.Status &&
		a.LastStatus == b.LastStatus && a.LastOutcome == b.LastOutcome &&
		a.LastFetch.Equal(b.LastFetch) && a.NextCrawl.Equal(b.NextCrawl) &&
		a.ETag == b.ETag && a.LastModified == b.LastModified && a.Digest == b.Digest &&
		a.Visits == b.Visits && a.Changes == b.Changes && a.Span == b.Span &&
		a.InLinks == b.InLinks && a.InSitemap == b.InSitemap && a.SitemapPriority == b.SitemapPriority &&
		a.SitemapLastMod.Equal(b.SitemapLastMod)
}

func itemEqual(a, b QueueItem) bool {
	return a.URL == b.URL && a.Host == b.Host && a.Part == b.Part && a.Depth == b.Depth &&
		a.Hops == b.Hops && a.Priority == b.Priority && a.Via == b.Via && a.Added.Equal(b.Added) && a.Fetch == b.Fetch && a.Requisite == b.Requisite && a.Sitemap == b.Sitemap && a.Rank == b.Rank && a.Again == b.Again && a.Seed == b.Seed && a.Path == b.Path
}

func TestReopenKeepsEverything(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	for i := range 100 {
		it := item("a.test", 7, i)
		b.PushQueue(7, "a.test", uint64(i), it)
		b.PutURL(7, "a.test", hashOf(it.URL), URLRecord{URL: it.URL, Status: URLQueued})
	}
	b.PutHost(7, HostRecord{Host: "a.test", Accepted: 100})
	commit(t, b)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, err := db.CountQueue(7, "a.test"); n != 100 || err != nil {
		t.Errorf("CountQueue after reopen = %d, %v", n, err)
	}
	if r, ok, err := db.GetHost(7, "a.test"); !ok || err != nil || r.Accepted != 100 {
		t.Errorf("GetHost after reopen = %+v, %v, %v", r, ok, err)
	}
}

// allKeys returns every key in the store, in order.
func allKeys(t *testing.T, db *DB) [][]byte {
	t.Helper()
	it, err := db.pdb.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var keys [][]byte
	for valid := it.First(); valid; valid = it.Next() {
		keys = append(keys, bytes.Clone(it.Key()))
	}
	return keys
}

func TestKeyOrder(t *testing.T) {
	db := openMem(t)
	hosts := []string{"a.test", "a.test.evil", "a.tes", "a", "b.test", "a.test-x", "a.test:8080", "xn--bcher-kva.example"}
	seqs := []uint64{0, 1, 255, 256, 65535, 65536, 1 << 32, 1<<64 - 1}
	rng := rand.New(rand.NewPCG(1, 2))
	b := db.NewBatch()
	// Write in a random order: the order read back is the keys' own.
	type op func()
	var ops []op
	for _, h := range hosts {
		part := uint16(partition.Of(h, 4))
		for _, s := range seqs {
			ops = append(ops, func() { b.PushQueue(part, h, s, item(h, part, int(s%1000))) })
		}
		for i := range 5 {
			ops = append(ops, func() { b.PutURL(part, h, hashOf(fmt.Sprint(h, i)), URLRecord{URL: fmt.Sprint(i), Status: URLQueued}) })
		}
		ops = append(ops, func() { b.PutHost(part, HostRecord{Host: h}) })
	}
	rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	for _, o := range ops {
		o()
	}
	commit(t, b)

	// Per table, the keys of each host form one run, and a host's queue
	// keys come in seq order.
	type run struct {
		tag  byte
		part uint16
		host string
	}
	seen := map[run]bool{}
	var prev run
	var prevSeq uint64
	for i, k := range allKeys(t, db) {
		if k[0] == tagMeta {
			continue // the queue count
		}
		hk, err := parseHostKey(k)
		if err != nil {
			t.Fatalf("key %s: %v", fmtKey(k), err)
		}
		r := run{hk.tag, hk.part, hk.host}
		if i == 0 || r != prev {
			if seen[r] {
				t.Errorf("keys of %+v are not contiguous: %s comes after another host's keys", r, fmtKey(k))
			}
			seen[r] = true
			prevSeq = 0
		} else if hk.tag == tagQueue {
			_, _, seq, _ := parseQueueKey(k)
			if seq <= prevSeq {
				t.Errorf("queue keys of %q out of seq order: %d after %d", hk.host, seq, prevSeq)
			}
		}
		if hk.tag == tagQueue {
			_, _, prevSeq, _ = parseQueueKey(k)
		}
		prev = r
	}
	if want := 3 * len(hosts); len(seen) != want {
		t.Errorf("saw %d (table, host) runs, want %d", len(seen), want)
	}
	for _, h := range hosts {
		part := uint16(partition.Of(h, 4))
		qe, err := db.QueueRange(part, h, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, e := range qe {
			got = append(got, e.Seq)
			if e.Item.Host != h || e.Item.Part != part {
				t.Errorf("QueueRange(%q) returned an item of %q/%d", h, e.Item.Host, e.Item.Part)
			}
		}
		if !slices.Equal(got, seqs) {
			t.Errorf("QueueRange(%q) seqs = %v, want %v", h, got, seqs)
		}
	}
}

// TestSimilarHosts is why the host is terminated by 0x00 in keys: without
// it "a.test" would be a byte prefix of "a.test.evil" and a scan of one
// would return the other's entries.
func TestSimilarHosts(t *testing.T) {
	db := openMem(t)
	const part = 3
	good, evil := "a.test", "a.test.evil"
	raw := append([]byte{tagQueue, 0, part}, good...)
	if !bytes.HasPrefix(appendQueueKey(nil, part, evil, 0), raw) {
		t.Fatal("test premise: without a terminator, the short host's prefix covers the long host")
	}
	if bytes.HasPrefix(appendQueueKey(nil, part, evil, 0), appendHostPrefix(nil, tagQueue, part, good)) {
		t.Fatal("the terminated prefix of a.test covers a.test.evil")
	}

	b := db.NewBatch()
	for i := range 10 {
		b.PushQueue(part, good, uint64(i), item(good, part, i))
		b.PutURL(part, good, hashOf(fmt.Sprint("g", i)), URLRecord{URL: fmt.Sprint("g", i), Status: URLQueued})
	}
	for i := range 7 {
		b.PushQueue(part, evil, uint64(100+i), item(evil, part, i))
		b.PutURL(part, evil, hashOf(fmt.Sprint("e", i)), URLRecord{URL: fmt.Sprint("e", i), Status: URLQueued})
	}
	b.PutHost(part, HostRecord{Host: good, Accepted: 10})
	b.PutHost(part, HostRecord{Host: evil, Accepted: 7})
	commit(t, b)

	for _, c := range []struct {
		host  string
		n     int
		first uint64
	}{{good, 10, 0}, {evil, 7, 100}} {
		if n, err := db.CountQueue(part, c.host); n != c.n || err != nil {
			t.Errorf("CountQueue(%q) = %d, %v; want %d", c.host, n, err, c.n)
		}
		qe, err := db.QueueRange(part, c.host, 0, 100)
		if err != nil || len(qe) != c.n || qe[0].Seq != c.first {
			t.Errorf("QueueRange(%q) = %d entries from %v, %v", c.host, len(qe), qe, err)
		}
		for _, e := range qe {
			if !strings.HasPrefix(e.Item.URL, "https://"+c.host+"/") {
				t.Errorf("QueueRange(%q) returned %s", c.host, e.Item.URL)
			}
		}
		last, ok, err := db.LastQueueSeq(part, c.host)
		if want := c.first + uint64(c.n) - 1; last != want || !ok || err != nil {
			t.Errorf("LastQueueSeq(%q) = %d, %v, %v; want %d", c.host, last, ok, err, want)
		}
	}
	// Drain a.test: a.test.evil's entries must not appear as its.
	b = db.NewBatch()
	for i := range 10 {
		b.DeleteQueue(part, good, uint64(i))
	}
	commit(t, b)
	if _, ok, err := db.LastQueueSeq(part, good); ok || err != nil {
		t.Errorf("LastQueueSeq(%q) after drain = %v, %v; want none", good, ok, err)
	}
	if qe, err := db.QueueRange(part, good, 0, 100); len(qe) != 0 || err != nil {
		t.Errorf("QueueRange(%q) after drain = %v, %v", good, qe, err)
	}
	urls := map[string]int{}
	if err := db.ScanURLs(part, func(host string, _ [16]byte, r URLRecord) bool {
		urls[host]++
		if host == good && !strings.HasPrefix(r.URL, "g") || host == evil && !strings.HasPrefix(r.URL, "e") {
			t.Errorf("ScanURLs: %s filed under %q", r.URL, host)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if urls[good] != 10 || urls[evil] != 7 || len(urls) != 2 {
		t.Errorf("ScanURLs per host = %v", urls)
	}
	if r, _, _ := db.GetHost(part, good); r.Accepted != 10 {
		t.Errorf("GetHost(%q).Accepted = %d", good, r.Accepted)
	}
}

func TestPartitionScan(t *testing.T) {
	db := openMem(t)
	// Partitions whose big-endian bytes include 0x00 and 0xff.
	parts := []uint16{0, 1, 0xff, 0x100, 0x1ff, 0xff00, 0xffff}
	b := db.NewBatch()
	for _, p := range parts {
		for i := range 3 {
			h := fmt.Sprintf("h%d.p%d.test", i, p)
			b.PutHost(p, HostRecord{Host: h, Accepted: int64(p)})
			b.PutURL(p, h, hashOf(h), URLRecord{URL: h, Depth: int(p), Status: URLQueued})
		}
	}
	commit(t, b)
	for _, p := range parts {
		var hosts []string
		if err := db.ScanHosts(p, func(r HostRecord) bool {
			if r.Accepted != int64(p) {
				t.Errorf("ScanHosts(%d) returned %q of partition %d", p, r.Host, r.Accepted)
			}
			hosts = append(hosts, r.Host)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		want := []string{fmt.Sprintf("h0.p%d.test", p), fmt.Sprintf("h1.p%d.test", p), fmt.Sprintf("h2.p%d.test", p)}
		if !slices.Equal(hosts, want) {
			t.Errorf("ScanHosts(%d) = %v, want %v", p, hosts, want)
		}
		n := 0
		if err := db.ScanURLs(p, func(host string, hash [16]byte, r URLRecord) bool {
			if r.Depth != int(p) || hash != hashOf(host) {
				t.Errorf("ScanURLs(%d) returned %q of partition %d", p, host, r.Depth)
			}
			n++
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Errorf("ScanURLs(%d) returned %d records, want 3", p, n)
		}
	}
	// Early stop.
	n := 0
	if err := db.ScanHosts(0xff, func(HostRecord) bool { n++; return false }); err != nil || n != 1 {
		t.Errorf("ScanHosts with early stop called fn %d times, %v", n, err)
	}
	// An unused partition is empty.
	if err := db.ScanHosts(2, func(r HostRecord) bool { t.Errorf("ScanHosts(2) returned %q", r.Host); return true }); err != nil {
		t.Fatal(err)
	}
}

func TestHostValidation(t *testing.T) {
	db := openMem(t)
	for _, host := range []string{"bad\x00host", ""} {
		b := db.NewBatch()
		b.PushQueue(1, "ok.test", 1, item("ok.test", 1, 1))
		b.PutURL(1, host, hashOf("x"), URLRecord{URL: "x", Status: URLQueued})
		b.PutHost(1, HostRecord{Host: "ok.test"}) // ignored after the error
		err := b.Commit(false)
		if err == nil {
			t.Fatalf("Commit with host %q succeeded", host)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", host)) && host != "" {
			t.Errorf("error %q does not name the host", err)
		}
		if !strings.Contains(err.Error(), "/db") {
			t.Errorf("error %q does not name the store", err)
		}
		// Nothing of the batch was written.
		if n, err := db.CountQueue(1, "ok.test"); n != 0 || err != nil {
			t.Errorf("CountQueue after rejected batch = %d, %v", n, err)
		}
		if _, _, err := db.GetHost(1, host); err == nil {
			t.Errorf("GetHost(%q) succeeded", host)
		}
		if _, err := db.HasURL(1, host, hashOf("x")); err == nil {
			t.Errorf("HasURL(%q) succeeded", host)
		}
		if _, err := db.QueueRange(1, host, 0, 1); err == nil {
			t.Errorf("QueueRange(%q) succeeded", host)
		}
	}
	b := db.NewBatch()
	b.PushFront(0, 1, QueueItem{URL: "https://x/", Host: "x\x00y"})
	if err := b.Commit(false); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("PushFront with a NUL host: %v", err)
	}
	b = db.NewBatch()
	b.PutRobots(0, RobotsRecord{Host: "big.test", Scheme: "https", Body: make([]byte, MaxRobotsBody+1)})
	if err := b.Commit(false); err == nil || !strings.Contains(err.Error(), "big.test") {
		t.Errorf("PutRobots with an oversized robots.txt: %v", err)
	}
}

func TestFrontQueue(t *testing.T) {
	db := openMem(t)
	for _, prio := range []uint8{0, 1, 255} {
		if _, ok, err := db.LastFrontSeq(prio); ok || err != nil {
			t.Errorf("LastFrontSeq(%d) on empty store = %v, %v", prio, ok, err)
		}
	}
	b := db.NewBatch()
	for i := range 100 {
		b.PushFront(1, uint64(i), item("f.test", 9, i))
	}
	b.PushFront(0, 5, item("low.test", 1, 0))
	b.PushFront(2, 7, item("high.test", 2, 0))
	b.PushFront(255, 1<<64-1, item("max.test", 3, 0))
	commit(t, b)

	seqs := func(es []FrontEntry) []uint64 {
		var s []uint64
		for _, e := range es {
			s = append(s, e.Seq)
		}
		return s
	}
	check := func(prio uint8, from uint64, n int, want []uint64) {
		t.Helper()
		es, err := db.FrontRange(prio, from, n)
		if err != nil {
			t.Fatal(err)
		}
		if got := seqs(es); !slices.Equal(got, want) {
			t.Errorf("FrontRange(%d, %d, %d) = %v, want %v", prio, from, n, got, want)
		}
		for _, e := range es {
			if prio == 1 && !itemEqual(e.Item, item("f.test", 9, int(e.Seq))) {
				t.Errorf("FrontRange item %d = %+v", e.Seq, e.Item)
			}
		}
	}
	check(1, 0, 3, []uint64{0, 1, 2})
	check(1, 98, 10, []uint64{98, 99})
	check(1, 100, 10, nil)
	check(1, 0, 0, nil)
	check(0, 0, 10, []uint64{5})
	check(2, 0, 10, []uint64{7})
	check(255, 0, 10, []uint64{1<<64 - 1})
	check(3, 0, 10, nil)

	// Delete the head and some in the middle.
	b = db.NewBatch()
	for i := range 10 {
		b.DeleteFront(1, uint64(i))
	}
	b.DeleteFront(1, 50)
	b.DeleteFront(1, 99)
	b.DeleteFront(1, 1000) // absent: no effect
	commit(t, b)
	check(1, 0, 3, []uint64{10, 11, 12})
	check(1, 48, 4, []uint64{48, 49, 51, 52})
	if last, ok, err := db.LastFrontSeq(1); last != 98 || !ok || err != nil {
		t.Errorf("LastFrontSeq(1) = %d, %v, %v; want 98", last, ok, err)
	}
	if last, ok, err := db.LastFrontSeq(255); last != 1<<64-1 || !ok || err != nil {
		t.Errorf("LastFrontSeq(255) = %d, %v, %v", last, ok, err)
	}
	if n, err := db.CountFront(1); n != 88 || err != nil {
		t.Errorf("CountFront(1) = %d, %v; want 88", n, err)
	}
	if n, err := db.CountFront(0); n != 1 || err != nil {
		t.Errorf("CountFront(0) = %d, %v; want 1", n, err)
	}
	// Drain prio 1 entirely.
	b = db.NewBatch()
	for i := range 100 {
		b.DeleteFront(1, uint64(i))
	}
	commit(t, b)
	if _, ok, err := db.LastFrontSeq(1); ok || err != nil {
		t.Errorf("LastFrontSeq(1) after drain = %v, %v", ok, err)
	}
	check(1, 0, 10, nil)
	check(0, 0, 10, []uint64{5})
}

// model is a reference implementation of the back queues.
type model map[string]map[uint64]QueueItem // "part/host" -> seq -> item

func mkey(part uint16, host string) string { return fmt.Sprintf("%05d/%s", part, host) }

func TestBackQueuesAgainstModel(t *testing.T) {
	db := openMem(t)
	rng := rand.New(rand.NewPCG(7, 7))
	const nparts = 8
	var hosts []string
	for i := range 150 {
		hosts = append(hosts, fmt.Sprintf("h%03d.test", i))
	}
	hosts = append(hosts, "h001.test.evil", "h00", "h001.test0")
	m := model{}
	next := map[string]uint64{}
	for round := range 30 {
		b := db.NewBatch()
		for range 200 {
			h := hosts[rng.IntN(len(hosts))]
			p := uint16(partition.Of(h, nparts))
			k := mkey(p, h)
			if m[k] == nil {
				m[k] = map[uint64]QueueItem{}
			}
			if rng.IntN(3) > 0 || len(m[k]) == 0 {
				s := next[k]
				next[k]++
				it := item(h, p, int(s))
				b.PushQueue(p, h, s, it)
				m[k][s] = it
			} else {
				// Delete the head, as the frontier does.
				head := slices.Min(slices.Collect(maps.Keys(m[k])))
				b.DeleteQueue(p, h, head)
				delete(m[k], head)
			}
		}
		commit(t, b)
		if round%5 != 4 {
			continue
		}
		// Compare everything.
		var wantHosts []string
		for _, h := range hosts {
			p := uint16(partition.Of(h, nparts))
			k := mkey(p, h)
			q := m[k]
			if len(q) > 0 {
				wantHosts = append(wantHosts, k)
			}
			sorted := slices.Sorted(maps.Keys(q))
			if n, err := db.CountQueue(p, h); n != len(q) || err != nil {
				t.Fatalf("CountQueue(%q) = %d, %v; want %d", h, n, err, len(q))
			}
			last, ok, err := db.LastQueueSeq(p, h)
			if err != nil || ok != (len(q) > 0) || ok && last != sorted[len(sorted)-1] {
				t.Fatalf("LastQueueSeq(%q) = %d, %v, %v; model %v", h, last, ok, err, sorted)
			}
			from := uint64(0)
			if len(sorted) > 2 {
				from = sorted[1]
			}
			got, err := db.QueueRange(p, h, from, 5)
			if err != nil {
				t.Fatal(err)
			}
			var want []uint64
			for _, s := range sorted {
				if s >= from && len(want) < 5 {
					want = append(want, s)
				}
			}
			var gotSeqs []uint64
			for _, e := range got {
				gotSeqs = append(gotSeqs, e.Seq)
				if !itemEqual(e.Item, q[e.Seq]) {
					t.Fatalf("QueueRange(%q) item %d = %+v, want %+v", h, e.Seq, e.Item, q[e.Seq])
				}
			}
			if !slices.Equal(gotSeqs, want) {
				t.Fatalf("QueueRange(%q, %d, 5) = %v, want %v", h, from, gotSeqs, want)
			}
		}
		// QueuedHosts is in key order: partition, then host bytes; the
		// model key sorts the same way except where a host is a prefix of
		// another ("h00" < "h001.test" holds for both; 0x00 < '.' too).
		sort.Slice(wantHosts, func(i, j int) bool {
			return string(keyOfMkey(wantHosts[i])) < string(keyOfMkey(wantHosts[j]))
		})
		var gotHosts []string
		if err := db.QueuedHosts(func(p uint16, h string) bool {
			gotHosts = append(gotHosts, mkey(p, h))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gotHosts, wantHosts) {
			t.Fatalf("QueuedHosts =\n%v\nwant\n%v", gotHosts, wantHosts)
		}
		n := 0
		if err := db.QueuedHosts(func(uint16, string) bool { n++; return n < 3 }); err != nil || n != min(3, len(wantHosts)) {
			t.Fatalf("QueuedHosts with early stop called fn %d times, %v", n, err)
		}
	}
}

func keyOfMkey(k string) []byte {
	var p uint16
	var h string
	fmt.Sscanf(k[:5], "%d", &p)
	h = k[6:]
	return appendHostPrefix(nil, tagQueue, p, h)
}

// TestChurnLeavesReadsCorrect pushes and consumes many queue entries so that
// tombstones pile up, then checks every read still answers correctly.
func TestChurnLeavesReadsCorrect(t *testing.T) {
	db := openMem(t)
	cycles := 60
	if testing.Short() {
		cycles = 10
	}
	const per = 500
	var head, tail uint64
	qhead := map[string]uint64{}
	qtail := map[string]uint64{}
	hosts := []string{"c0.test", "c1.test", "c2.test"}
	for c := range cycles {
		b := db.NewBatch()
		for range per {
			b.PushFront(1, tail, item("churn.test", 0, int(tail)))
			tail++
		}
		if c > 0 {
			es, err := db.FrontRange(1, head, per)
			if err != nil || len(es) != per || es[0].Seq != head {
				t.Fatalf("FrontRange(head=%d) = %d entries, %v", head, len(es), err)
			}
			for _, e := range es {
				b.DeleteFront(1, e.Seq)
				h := hosts[e.Seq%3]
				b.PushQueue(0, h, qtail[h], e.Item)
				qtail[h]++
			}
			head += per
		}
		for _, h := range hosts[:2] { // c2.test only grows
			for qhead[h] < qtail[h] {
				b.DeleteQueue(0, h, qhead[h])
				qhead[h]++
			}
		}
		commit(t, b)
	}
	if n, err := db.CountFront(1); n != per || err != nil {
		t.Errorf("CountFront = %d, %v; want %d", n, err, per)
	}
	if last, ok, err := db.LastFrontSeq(1); last != tail-1 || !ok || err != nil {
		t.Errorf("LastFrontSeq = %d, %v, %v; want %d", last, ok, err, tail-1)
	}
	var queued []string
	if err := db.QueuedHosts(func(_ uint16, h string) bool { queued = append(queued, h); return true }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(queued, []string{"c2.test"}) {
		t.Errorf("QueuedHosts = %v, want [c2.test]", queued)
	}
	for _, h := range hosts[:2] {
		if _, ok, err := db.LastQueueSeq(0, h); ok || err != nil {
			t.Errorf("LastQueueSeq(%q) after drain = %v, %v", h, ok, err)
		}
	}
	if n, err := db.CountQueue(0, "c2.test"); n != int(qtail["c2.test"]) || err != nil {
		t.Errorf("CountQueue(c2.test) = %d, %v; want %d", n, err, qtail["c2.test"])
	}
}

func TestBatchLifecycle(t *testing.T) {
	db := openMem(t)
	b := db.NewBatch()
	if b.Len() != 0 {
		t.Errorf("empty batch Len = %d", b.Len())
	}
	if err := b.Commit(true); err != nil {
		t.Errorf("committing an empty batch: %v", err)
	}
	if err := b.Commit(false); err == nil {
		t.Error("second Commit succeeded")
	}
	b.Close() // after Commit: no effect

	b = db.NewBatch()
	b.PutMeta("k", []byte("v"))
	b.DeleteFront(0, 1)
	if b.Len() != 2 {
		t.Errorf("Len = %d, want 2", b.Len())
	}
	b.Close()
	b.Close()
	if _, ok, _ := db.GetMeta("k"); ok {
		t.Error("a closed batch was written")
	}
	if err := b.Commit(false); err == nil {
		t.Error("Commit after Close succeeded")
	}
	b.PutMeta("k", []byte("v")) // no effect, no panic

	b = db.NewBatch()
	b.PutMeta("k", []byte("v"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := db.GetMeta("k"); !ok || string(v) != "v" {
		t.Errorf("GetMeta after sync commit = %q, %v", v, ok)
	}
}

func TestClosedDB(t *testing.T) {
	db := openMem(t)
	b := db.NewBatch()
	b.PutMeta("k", []byte("v"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(false); !errors.Is(err, ErrClosed) {
		t.Errorf("Commit after Close = %v, want ErrClosed", err)
	}
	checks := map[string]error{}
	_, _, checks["GetHost"] = db.GetHost(0, "a")
	_, checks["HasURL"] = db.HasURL(0, "a", [16]byte{})
	_, _, checks["GetMeta"] = db.GetMeta("k")
	_, checks["FrontRange"] = db.FrontRange(0, 0, 1)
	_, _, checks["LastFrontSeq"] = db.LastFrontSeq(0)
	checks["QueuedHosts"] = db.QueuedHosts(func(uint16, string) bool { return true })
	_, checks["DiskSize"] = db.DiskSize()
	checks["Close"] = db.Close()
	checks["NewBatch.Commit"] = db.NewBatch().Commit(false)
	for name, err := range checks {
		if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "/db") {
			t.Errorf("%s after Close = %v, want ErrClosed naming the store", name, err)
		}
	}
}

func TestReadOnly(t *testing.T) {
	fs := vfs.NewMem()
	if _, err := Open("/missing", &Options{FS: fs, ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "/missing") {
		t.Errorf("read-only Open of a missing store = %v, want an error naming it", err)
	}
	db, err := Open("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	b.PutMeta("k", []byte("v"))
	commit(t, b)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open("/db", &Options{FS: fs, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, ok, err := db.GetMeta("k"); string(v) != "v" || !ok || err != nil {
		t.Errorf("GetMeta read-only = %q, %v, %v", v, ok, err)
	}
	b = db.NewBatch()
	b.PutMeta("k", []byte("w"))
	if err := b.Commit(false); !errors.Is(err, pebble.ErrReadOnly) || !strings.Contains(err.Error(), "/db") {
		t.Errorf("Commit read-only = %v", err)
	}
	// A read-only refusal is not a failure of the store.
	if _, _, err := db.GetMeta("k"); err != nil {
		t.Errorf("GetMeta after refused commit = %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{CacheSize: -1}, {MemTableSize: 1000}, {MemTableSize: 5 << 30}, {BloomBitsPerKey: -1}} {
		if err := o.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", o)
		}
		if _, err := Open("/x", &o); err == nil {
			t.Errorf("Open with %+v succeeded", o)
		}
	}
	var nilOpts *Options
	if err := nilOpts.Validate(); err != nil {
		t.Errorf("nil Options: %v", err)
	}
}

func TestOpenRealDiskAndDiskSize(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "store")
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Dir() != dir {
		t.Errorf("Dir = %q", db.Dir())
	}
	b := db.NewBatch()
	for i := range 1000 {
		b.PushFront(0, uint64(i), item("disk.test", 0, i))
	}
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	size, err := db.DiskSize()
	if err != nil || size < 50_000 {
		t.Errorf("DiskSize = %d, %v; want at least the WAL's 50 kB", size, err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("store dir not created: %v", err)
	}
}

// TestLookupsUseCacheAndFilters guards two settings: pebble charges
// memtables to the block cache, so a cache no larger than the memtables
// holds no blocks at all (every lookup then reads from the file); and the
// bloom filters must answer lookups of absent URLs.
func TestLookupsUseCacheAndFilters(t *testing.T) {
	db, err := Open("/db", &Options{FS: vfs.NewMem(), CacheSize: 4 << 20, MemTableSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const n = 150_000 // enough for memtables to grow to full size
	b := db.NewBatch()
	for i := range n {
		b.PutURL(uint16(i%16), fmt.Sprintf("h%d.test", i%100), hashOf(fmt.Sprint(i)), URLRecord{URL: fmt.Sprint(i), Status: URLQueued})
	}
	commit(t, b)
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	lookup := func(miss bool) {
		for i := range 2000 {
			k := hashOf(fmt.Sprint(i))
			if miss {
				k[0] ^= 0xff
			}
			has, err := db.HasURL(uint16(i%16), fmt.Sprintf("h%d.test", i%100), k)
			if err != nil || has == miss {
				t.Fatalf("HasURL(%d, miss=%v) = %v, %v", i, miss, has, err)
			}
		}
	}
	lookup(false) // warm the cache
	before := db.pdb.Metrics()
	lookup(false)
	lookup(true)
	after := db.pdb.Metrics()
	hits := after.BlockCache.Hits - before.BlockCache.Hits
	misses := after.BlockCache.Misses - before.BlockCache.Misses
	if hits == 0 || misses*50 > hits {
		t.Errorf("block cache: %d hits, %d misses over 4000 warm lookups; blocks are not staying cached", hits, misses)
	}
	negatives := after.Filter.Hits - before.Filter.Hits
	if negatives < 1800 {
		t.Errorf("bloom filters ruled out %d of 2000 absent URLs", negatives)
	}
}

// TestListURLs pages through the URL table: all hosts in key order, or
// one host's, resuming after any position (a position beyond a host's
// range gives nothing), filtered by status, and stopping after the records
// it may read, saying where.
func TestListURLs(t *testing.T) {
	db := openMem(t)
	b := db.NewBatch()
	type rec struct {
		part   uint16
		host   string
		url    string
		status URLStatus
	}
	all := []rec{{1, "a.test", "http://a.test/1", URLDone}, {1, "a.test", "http://a.test/2", URLQueued}, {1, "a.test.evil", "http://a.test.evil/", URLQueued}, {2, "b.test", "http://b.test/", URLDone}}
	for _, r := range all {
		b.PutURL(r.part, r.host, hashOf(r.url), URLRecord{URL: r.url, Status: r.status})
	}
	commit(t, b)
	page := func(host string, part uint16, status URLStatus, after *URLPos, n, scan int) ([]URLPos, []string, *URLPos) {
		t.Helper()
		pos, recs, next, err := db.ListURLs(host, part, status, after, n, scan)
		if err != nil {
			t.Fatal(err)
		}
		var urls []string
		for _, r := range recs {
			urls = append(urls, r.URL)
		}
		return pos, urls, next
	}
	var got []string
	var after *URLPos
	for range 5 {
		_, urls, next := page("", 0, 0, after, 2, 100)
		got = append(got, urls...)
		if after = next; after == nil {
			break
		}
	}
	if len(got) != 4 || got[3] != "http://b.test/" || !strings.HasPrefix(got[2], "http://a.test.evil") {
		t.Errorf("all, two at a time: %v", got)
	}
	if _, urls, next := page("a.test", 1, 0, nil, 10, 100); len(urls) != 2 || next != nil {
		t.Errorf("a.test's: %v, next %v", urls, next)
	}
	pos, _, _ := page("a.test", 1, 0, nil, 1, 100)
	if _, urls, _ := page("a.test", 1, 0, &pos[0], 10, 100); len(urls) != 1 {
		t.Errorf("a.test's after its first: %v", urls)
	}
	if _, urls, _ := page("a.test", 1, 0, &URLPos{Part: 2, Host: "b.test"}, 10, 100); len(urls) != 0 {
		t.Errorf("a.test's after a position past it: %v", urls)
	}
	if _, urls, _ := page("", 0, URLDone, nil, 10, 100); len(urls) != 2 || urls[1] != "http://b.test/" {
		t.Errorf("the done ones: %v", urls)
	}
	// One record read, not failed: none listed, and where to go on.
	if _, urls, next := page("", 0, URLFailed, nil, 10, 1); len(urls) != 0 || next == nil || next.Host != "a.test" {
		t.Errorf("failed, one record read: %v, next %v", urls, next)
	}
}
