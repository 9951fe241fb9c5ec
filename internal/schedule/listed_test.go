package schedule

import (
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// TestListed: a new page a sitemap lists goes first when its <lastmod> is
// recent or its <priority> above the default; a <lastmod> in the future
// is not believed.
func TestListed(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		name    string
		hint    content.Hint
		prio    frontier.Priority
		lastMod time.Time
	}{
		{"recent", content.Hint{LastMod: now.Add(-time.Hour), Priority: -1}, frontier.High, now.Add(-time.Hour)},
		{"old", content.Hint{LastMod: now.Add(-48 * time.Hour), Priority: -1}, frontier.Normal, now.Add(-48 * time.Hour)},
		{"liked", content.Hint{Priority: 0.9}, frontier.High, time.Time{}},
		{"default", content.Hint{Priority: 0.5}, frontier.Normal, time.Time{}},
		{"future", content.Hint{LastMod: now.Add(24 * time.Hour), Priority: -1}, frontier.Normal, time.Time{}},
		{"a clock a little ahead", content.Hint{LastMod: now.Add(30 * time.Minute), Priority: -1}, frontier.High, now.Add(30 * time.Minute)},
	} {
		h, prio := Listed(c.hint, now)
		if prio != c.prio || !h.LastMod.Equal(c.lastMod) || h.Priority != c.hint.Priority {
			t.Errorf("%s: %+v at %v; want lastmod %v at %v", c.name, h, prio, c.lastMod, c.prio)
		}
	}
}

// TestApplyListed: a scan applies what sitemaps said of known URLs. A URL
// whose <lastmod> is after its last fetch is queued again at high
// priority once Min has passed since that fetch (until then its hint
// waits for a later scan, as one about a URL in flight does), unless the
// scope now refuses it; one whose <lastmod> is older only keeps the
// hints, and its place in the recrawl index.
func TestApplyListed(t *testing.T) {
	p := newPlanner(t, Config{Policy: &recrawl.Policy{}}) // Min: 10 minutes
	q := &committed{}
	rc := newRecrawler(t, p, "http://l.test/", q, nil)
	now := time.Now()
	fetched := func(url string, last time.Time) store.URLRecord {
		return store.URLRecord{URL: url, Depth: 2, Status: store.URLDone, LastFetch: last, NextCrawl: now.Add(24 * time.Hour), SitemapPriority: -1}
	}
	inFlight := fetched("http://l.test/leased", now.Add(-time.Hour))
	inFlight.Status = store.URLQueued
	keys := put(t, p, fetched("http://l.test/done", now.Add(-time.Hour)), fetched("http://l.test/recent", now.Add(-time.Minute)),
		fetched("http://l.test/soon", now.Add(-time.Minute)), fetched("http://m.test/out", now.Add(-time.Hour)), inFlight)
	hints := map[string]content.Hint{
		"http://l.test/done":   {LastMod: now.Add(-10 * time.Minute), Priority: 0.9},
		"http://l.test/recent": {LastMod: now.Add(-time.Hour), Priority: -1},
		"http://l.test/soon":   {LastMod: now.Add(-30 * time.Second), Priority: -1},
		"http://m.test/out":    {LastMod: now.Add(-time.Minute), Priority: -1},
		"http://l.test/leased": {LastMod: now.Add(-time.Minute), Priority: -1},
		"http://l.test/none":   {LastMod: now.Add(-time.Minute), Priority: -1}, // no record: nothing to apply it to
	}
	for url, h := range hints {
		u, err := p.canon.Parse(url)
		if err != nil {
			t.Fatal(err)
		}
		rc.Hint(u.Authority, seen.KeyOf(url), h)
	}
	if err := rc.QueueDue(now); err != nil {
		t.Fatal(err)
	}
	if len(q.items) != 1 || q.items[0].URL != "http://l.test/done" || q.items[0].Priority != frontier.High || rc.Counts().ListedChanged != 1 {
		t.Errorf("queued %v (%d counted); want /done alone, at high priority", q.items, rc.Counts().ListedChanged)
	}
	if r := record(t, p, "http://l.test/done"); r.Status != store.URLQueued || !r.InSitemap || r.SitemapPriority != 0.9 || len(dueTimes(t, p, r.URL)) != 0 {
		t.Errorf("/done, changed since its fetch: %+v, index entries %v", r, dueTimes(t, p, r.URL))
	}
	if r := record(t, p, "http://l.test/recent"); r.Status != store.URLDone || !r.InSitemap || !r.SitemapLastMod.Equal(hints[r.URL].LastMod) || len(dueTimes(t, p, r.URL)) != 1 {
		t.Errorf("/recent, fetched since its lastmod: %+v, index entries %v", r, dueTimes(t, p, r.URL))
	}
	if r := record(t, p, "http://m.test/out"); r.Status != store.URLRejected || len(dueTimes(t, p, r.URL)) != 0 {
		t.Errorf("m.test/out, out of scope now: %+v, index entries %v", r, dueTimes(t, p, r.URL))
	}
	held := rc.listed.take()
	if len(held) != 2 || held[keys["http://l.test/soon"]].host != "l.test" || held[keys["http://l.test/leased"]].host != "l.test" {
		t.Errorf("hints held for a later scan: %v, want /soon's (Min not passed) and /leased's (in flight)", held)
	}
}

// TestHintsBounded: past maxListed hints waiting for a scan, a hint about
// another URL is dropped and counted; a newer hint about a URL waiting
// replaces the older.
func TestHintsBounded(t *testing.T) {
	p := newPlanner(t, Config{Policy: &recrawl.Policy{}})
	rc := newRecrawler(t, p, "http://l.test/", &committed{}, nil)
	for i := range maxListed {
		rc.Hint("l.test", seen.Key{byte(i), byte(i >> 8), byte(i >> 16)}, content.Hint{Priority: -1})
	}
	rc.Hint("l.test", seen.Key{0, 0, 0}, content.Hint{Priority: 0.7})
	rc.Hint("l.test", seen.KeyOf("http://l.test/late"), content.Hint{Priority: -1})
	if n := rc.Counts().ListedDropped; n != 1 {
		t.Errorf("%d hints dropped, want the one past the bound", n)
	}
	if held := rc.listed.take(); len(held) != maxListed || held[seen.Key{}].hint.Priority != 0.7 {
		t.Errorf("%d hints held, the first's priority %v; want %d, the newer hint's 0.7", len(held), held[seen.Key{}].hint.Priority, maxListed)
	}
}
