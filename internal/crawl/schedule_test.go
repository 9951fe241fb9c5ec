package crawl

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

// TestMissingSitemapOnRobotsSchedule runs the continuous mode over a host
// whose /sitemap.xml answers 404, for many times the recrawl interval:
// the server sees /sitemap.xml asked for once, since it is retried on the
// robots.txt schedule (once per RobotsTTL), not recrawled as a page, while
// the pages themselves are fetched again.
func TestMissingSitemapOnRobotsSchedule(t *testing.T) {
	web, err := synthweb.Start(synthweb.Config{
		Seed: 19, Hosts: 1, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}, NoSitemap: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	cfg := testConfig(t, web, 2, 10*time.Millisecond)
	cfg.NoSitemaps = false
	cfg.RobotsTTL = time.Hour
	cfg.Recrawl = &recrawl.Policy{Min: 100 * time.Millisecond, Max: 500 * time.Millisecond, Prior: 1}
	cfg.RecrawlScan = 20 * time.Millisecond
	// The crawl runs until / has been fetched three times and five times
	// Max has passed (many times the recrawl interval), however slow the
	// machine; the minute is a bound against a hang.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx)
		done <- err
	}()
	stopped := false
	defer func() {
		if !stopped { // the wait failed: stop the crawl before the test ends
			cancel()
			<-done
		}
	}()
	testwait.Eventually(t, 50*time.Second, "/ requested 3 times", func() bool {
		n := 0
		for _, r := range web.Log() {
			if r.Path == "/" {
				n++
			}
		}
		return n >= 3 && time.Since(start) >= 5*cfg.Recrawl.Max
	})
	cancel()
	err = <-done
	stopped = true
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start).Round(10 * time.Millisecond)
	counts := map[string]int{}
	for _, r := range web.Log() {
		counts[r.Path]++
		if r.Path == "/sitemap.xml" && r.Status != 404 {
			t.Fatalf("/sitemap.xml answered %d", r.Status)
		}
	}
	t.Logf("in %v: /sitemap.xml %d requests, robots.txt %d, / %d", took, counts["/sitemap.xml"], counts["/robots.txt"], counts["/"])
	if counts["/sitemap.xml"] != 1 {
		t.Errorf("/sitemap.xml (404) requested %d times within one robots TTL; want 1", counts["/sitemap.xml"])
	}
	if counts["/"] < 3 {
		t.Errorf("/ requested %d times: the pages were not recrawled, so the test shows nothing", counts["/"])
	}
}

// TestRecrawlIndexRebuild builds the recrawl index again from the URL
// records, as a start does when the index was built for another policy or
// by a binary that schedules otherwise (an older scheduleVersion, whose
// key had no version at all): a sitemap that answered 404 and was put on
// the robots.txt schedule keeps it even when it is not the host's
// /sitemap.xml (one its robots.txt named, which the record does not say),
// and a page that answered 404 gets a page's schedule.
func TestRecrawlIndexRebuild(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"r.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) { http.NotFound(rw, r) },
	})
	cfg := mw.config(t, time.Millisecond, mw.url("r.test", "/"))
	cfg.RobotsTTL = time.Hour
	cfg.Recrawl = &recrawl.Policy{Min: time.Second, Max: time.Minute}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(0)
	host := strings.TrimPrefix(mw.url("r.test", ""), "http://")
	part := uint16(partition.Of(host, c.cfg.Partitions))
	last := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	recs := map[string]store.URLRecord{
		"/maps/a.xml": {LastStatus: 404, NextCrawl: last.Add(cfg.RobotsTTL)},
		"/gone":       {LastStatus: 404, NextCrawl: last.Add(time.Hour + time.Minute)},
		"/page":       {LastStatus: 200, NextCrawl: last.Add(time.Hour)},
	}
	write := func(meta string) {
		b := c.state.db.NewBatch()
		b.ClearDue()
		for path, r := range recs {
			r.URL, r.Depth, r.Status, r.LastFetch, r.SitemapPriority = mw.url("r.test", path), 1, store.URLDone, last, -1
			k := seen.KeyOf(r.URL)
			b.PutURL(part, host, k, r)
			b.PutDue(dueEntry(part, host, k, r, 1))
		}
		b.PutMeta(metaRecrawl, []byte(meta))
		if err := b.Commit(true); err != nil {
			t.Fatal(err)
		}
	}
	check := func(name string) {
		t.Helper()
		for path, want := range map[string]bool{"/maps/a.xml": true, "/gone": false, "/page": false} {
			r, ok, err := c.state.db.GetURL(part, host, seen.KeyOf(mw.url("r.test", path)))
			if err != nil || !ok {
				t.Fatalf("%s: %s: %v %v", name, path, ok, err)
			}
			robots := r.NextCrawl.Equal(last.Add(cfg.RobotsTTL))
			if page := !r.NextCrawl.After(last.Add(cfg.Recrawl.Max)); robots != want || (!want && !page) {
				t.Errorf("%s: %s due %v after its last fetch; want the robots.txt schedule (%v): %t", name, path, r.NextCrawl.Sub(last), cfg.RobotsTTL, want)
			}
			var due []time.Time
			if err := c.state.db.ScanDue(part, nil, last.Add(48*time.Hour), func(e store.DueEntry) bool {
				if e.Hash == seen.KeyOf(r.URL) {
					due = append(due, e.Due)
				}
				return true
			}); err != nil {
				t.Fatal(err)
			}
			if len(due) != 1 || !due[0].Equal(r.NextCrawl) {
				t.Errorf("%s: %s has index entries %v, its record %v", name, path, due, r.NextCrawl)
			}
		}
	}
	// Built for another policy.
	write("min=1 max=2 prior=1 floor=1 uniform=false")
	if err := c.sched.prepareDueIndex(); err != nil {
		t.Fatal(err)
	}
	check("another policy")
	// Built by a binary without the schedule's version, for this policy.
	p := cfg.Recrawl.WithDefaults()
	write(fmt.Sprintf("min=%d max=%d prior=%g floor=%g uniform=%t", p.Min, p.Max, p.Prior, p.Floor, p.Uniform))
	if err := c.sched.prepareDueIndex(); err != nil {
		t.Fatal(err)
	}
	check("an older schedule")
}

// TestRecrawlRescheduledWhenNotDue: a recrawl index entry whose time has
// come but whose URL the policy does not find Due (here: Min has not
// passed since its last fetch, as when the host's prior changed since it
// was scheduled) is moved by the scan to the time the policy gives, not
// left to be read again at every scan; nothing is queued.
func TestRecrawlRescheduledWhenNotDue(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"n.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) { http.NotFound(rw, r) },
	})
	cfg := mw.config(t, time.Millisecond, mw.url("n.test", "/"))
	cfg.Recrawl = &recrawl.Policy{Min: time.Minute}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(0)
	host := strings.TrimPrefix(mw.url("n.test", ""), "http://")
	part := uint16(partition.Of(host, c.cfg.Partitions))
	now := time.Now()
	r := store.URLRecord{URL: mw.url("n.test", "/a"), Depth: 1, Status: store.URLDone, LastStatus: 200,
		LastFetch: now.Add(-time.Second), NextCrawl: now.Add(-time.Millisecond), SitemapPriority: -1}
	k := seen.KeyOf(r.URL)
	b := c.state.db.NewBatch()
	b.PutURL(part, host, k, r)
	b.PutDue(dueEntry(part, host, k, r, 1))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := c.recrawler.queueDue(now); err != nil {
		t.Fatal(err)
	}
	if n := c.stats.recrawls.Load(); n != 0 {
		t.Errorf("%d recrawls queued; want none", n)
	}
	got, ok, err := c.state.db.GetURL(part, host, k)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if got.Status != store.URLDone || got.NextCrawl.Before(r.LastFetch.Add(time.Minute)) {
		t.Errorf("record %v, due %v after its last fetch; want done, due at least Min (1m) after it", got.Status, got.NextCrawl.Sub(r.LastFetch))
	}
	var due []time.Time
	if err := c.state.db.ScanDue(part, nil, now.Add(time.Hour), func(e store.DueEntry) bool {
		due = append(due, e.Due)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 || !due[0].Equal(got.NextCrawl) {
		t.Errorf("index entries %v; want one, at the record's %v", due, got.NextCrawl)
	}
}

// TestRecrawlEntryImportanceRefreshed: an entry whose time has come, not
// Due by the importance it was scheduled with but Due by the one its URL
// has now (it gained in-links), takes that importance, so that the next
// scan queues it rather than read it again and again.
func TestRecrawlEntryImportanceRefreshed(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"i.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) { http.NotFound(rw, r) },
	})
	cfg := mw.config(t, time.Millisecond, mw.url("i.test", "/"))
	cfg.Recrawl = &recrawl.Policy{Min: 2 * time.Millisecond, Prior: 1}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(0)
	host := strings.TrimPrefix(mw.url("i.test", ""), "http://")
	part := uint16(partition.Of(host, c.cfg.Partitions))
	now := time.Now()
	r := store.URLRecord{URL: mw.url("i.test", "/a"), Depth: 1, Status: store.URLDone, LastStatus: 200, InLinks: 100,
		LastFetch: now.Add(-time.Second), NextCrawl: now.Add(-time.Millisecond), SitemapPriority: -1}
	k := seen.KeyOf(r.URL)
	b := c.state.db.NewBatch()
	b.PutURL(part, host, k, r)
	b.PutDue(dueEntry(part, host, k, r, 1e-4)) // scheduled when it had hardly any importance
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := c.recrawler.queueDue(time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.stats.recrawls.Load(); n != 1 {
		t.Errorf("%d recrawls queued in two scans; want 1", n)
	}
}
