package schedule

import (
	"crypto/sha1"
	"net/http"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/store"
)

// lease is a lease of url, of host, queued at depth 1.
func lease(url, host string) frontier.Lease {
	return frontier.Lease{Item: frontier.Item{URL: url, Host: host, Depth: 1, Seq: 1}}
}

// answer is a response of status to a request made at start, with header
// fields as pairs of name and value.
func answer(status int, start time.Time, fields ...string) *fetch.Response {
	h := http.Header{}
	for i := 0; i+1 < len(fields); i += 2 {
		h.Set(fields[i], fields[i+1])
	}
	return &fetch.Response{StatusCode: status, Header: h, Start: start}
}

// TestLearn: a visit that found a change brings the next one closer than
// one that found none (a 304 included, and another payload of the same
// visible words), and keeps the page's validators
// and digest; both pool into the host's prior. An error is one more in a
// row, a 404'd sitemap waits for the robots.txt schedule, and a first
// visit teaches the host nothing.
func TestLearn(t *testing.T) {
	const robotsTTL = 6 * time.Hour
	p := newPlanner(t, Config{Policy: &recrawl.Policy{Min: time.Minute, Max: 30 * 24 * time.Hour}, RobotsTTL: robotsTTL})
	l := lease("http://a.test/page", "a.test")
	t0 := time.Now().Add(-24 * time.Hour)
	start := t0.Add(12 * time.Hour)
	prev := store.URLRecord{URL: l.URL, Depth: 1, Status: store.URLDone, LastStatus: 200, LastFetch: t0, Visits: 4, Changes: 1, Span: 4 * 43200,
		Digest: [sha1.Size]byte{1}, ETag: `"v1"`, SitemapPriority: -1}

	// Last-Modified "x" is kept as given, though it dates nothing.
	changed := p.Learn(l, prev, answer(200, start, "ETag", `"v2"`, "Last-Modified", "x"), Seen{Capture: archive.Capture{Digest: [sha1.Size]byte{2}}})
	same := p.Learn(l, prev, answer(304, start, "ETag", `"v1b"`), Seen{NotModified: true})
	if r := changed.Record; r.Digest != ([sha1.Size]byte{2}) || r.ETag != `"v2"` || r.LastModified != "x" || !r.LastFetch.Equal(start) {
		t.Errorf("a changed page's record: digest %x, ETag %s, Last-Modified %q, fetched %v", r.Digest[:1], r.ETag, r.LastModified, r.LastFetch)
	}
	if r := same.Record; r.Digest != prev.Digest || r.ETag != `"v1b"` || r.LastModified != prev.LastModified || r.Unchanged != 1 {
		t.Errorf("a 304's record: digest %x, ETag %s, Last-Modified %q, unchanged %d; want the page's as it was, the new ETag", r.Digest[:1], r.ETag, r.LastModified, r.Unchanged)
	}
	if !changed.Record.NextCrawl.Before(same.Record.NextCrawl) || !changed.Record.NextCrawl.After(start) {
		t.Errorf("next visit %v after a change, %v after none; want the first sooner", changed.Record.NextCrawl.Sub(start), same.Record.NextCrawl.Sub(start))
	}
	if changed.prior == nil || same.prior == nil || p.Prior("a.test").Visits == 0 {
		t.Errorf("the visits taught the host nothing: %v %v, prior %+v", changed.prior, same.prior, p.Prior("a.test"))
	}
	if !changed.prevDue.Equal(Scheduled(prev)) || changed.Importance != recrawl.Importance(recrawl.Signals{Priority: -1}) {
		t.Errorf("due before %v, importance %v; want the record's due time, a page's importance", changed.prevDue, changed.Importance)
	}

	// Another payload of the same visible text (a token, a nonce): no
	// change, as a 304; another text: a change.
	prev.TextHash = 7
	tokens := p.Learn(l, prev, answer(200, start), Seen{Capture: archive.Capture{Digest: [sha1.Size]byte{3}}, Text: 7})
	if r := tokens.Record; r.Unchanged != 1 || r.Digest != ([sha1.Size]byte{3}) || r.TextHash != 7 || !r.NextCrawl.Equal(same.Record.NextCrawl) {
		t.Errorf("another payload, the same text: unchanged %d, digest %x, text %d, next visit %v after (a 304's %v)",
			r.Unchanged, r.Digest[:1], r.TextHash, r.NextCrawl.Sub(start), same.Record.NextCrawl.Sub(start))
	}
	revisit := p.Learn(l, tokens.Record, answer(200, start.Add(time.Hour)), Seen{Capture: archive.Capture{Digest: [sha1.Size]byte{3}}})
	if r := revisit.Record; r.Unchanged != 2 || r.TextHash != 7 {
		t.Errorf("the same payload again, not read: unchanged %d, text %d; want 2, the text kept", r.Unchanged, r.TextHash)
	}
	text := p.Learn(l, prev, answer(200, start), Seen{Capture: archive.Capture{Digest: [sha1.Size]byte{3}}, Text: 8})
	noText := p.Learn(l, prev, answer(200, start), Seen{Capture: archive.Capture{Digest: [sha1.Size]byte{3}}})
	if text.Record.Unchanged != 0 || noText.Record.Unchanged != 0 || noText.Record.TextHash != 0 || !text.Record.NextCrawl.Equal(changed.Record.NextCrawl) {
		t.Errorf("another text: unchanged %d; no text read: unchanged %d, text %d; want changes, as a new payload without text", text.Record.Unchanged, noText.Record.Unchanged, noText.Record.TextHash)
	}
	prev.TextHash = 0

	failed := p.Learn(l, prev, answer(500, start), Seen{})
	if r := failed.Record; r.Errors != 1 || r.Digest != prev.Digest || failed.prior != nil {
		t.Errorf("a 500: %d errors in a row, digest %x, prior %v; want 1, the page's, none", r.Errors, r.Digest[:1], failed.prior)
	}
	sm := lease("http://a.test/maps/b.xml", "a.test")
	sm.Via = "http://a.test/robots.txt"
	if v := p.Learn(sm, store.URLRecord{}, answer(404, start), Seen{}); !v.Record.NextCrawl.Equal(start.Add(robotsTTL)) {
		t.Errorf("a sitemap robots.txt named answered 404: due %v after, want the robots.txt's %v", v.Record.NextCrawl.Sub(start), robotsTTL)
	}
	if v := p.Learn(lease("http://a.test/new", "a.test"), store.URLRecord{}, answer(200, start), Seen{}); v.prior != nil {
		t.Errorf("a first visit pooled into the host's prior: %+v", v.prior)
	}
}

// TestIsSitemap: a lease is of a sitemap when it is a host's /sitemap.xml,
// came from its robots.txt, or is one its robots.txt names.
func TestIsSitemap(t *testing.T) {
	p := newPlanner(t, Config{Robots: sitemapsOf{"https://a.test": {"https://a.test/maps/named.xml"}}})
	for url, want := range map[string]bool{
		"http://a.test/sitemap.xml":      true,
		"https://a.test/maps/named.xml":  true,
		"http://a.test/maps/named.xml":   false, // another origin's robots.txt
		"https://a.test/maps/other.xml":  false,
		"https://a.test/sitemap.xml?x=1": false,
		"https://a.test/a/sitemap.xml":   false,
	} {
		if got := p.isSitemap(lease(url, "a.test")); got != want {
			t.Errorf("%s: %t, want %t", url, got, want)
		}
	}
	l := lease("https://a.test/maps/via.xml", "a.test")
	l.Via = "https://a.test/robots.txt"
	if !p.isSitemap(l) {
		t.Errorf("a sitemap queued from robots.txt is not one")
	}
}

// TestPreviousVisit: the request is conditional while the capture that
// holds the URL's last payload can be referred to, with the validators
// its last answer gave; otherwise it is whole.
func TestPreviousVisit(t *testing.T) {
	first := store.DigestRecord{URL: "http://a.test/p", File: "a.warc.gz", Length: 10, RecordID: "<urn:uuid:1>"}
	for _, c := range []struct {
		name     string
		rec      store.URLRecord
		archived archived
		want     http.Header
	}{
		{"both validators", store.URLRecord{Digest: [sha1.Size]byte{9}, ETag: `"e"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT"}, true,
			http.Header{"If-None-Match": {`"e"`}, "If-Modified-Since": {"Mon, 02 Jan 2006 15:04:05 GMT"}}},
		{"an ETag", store.URLRecord{Digest: [sha1.Size]byte{9}, ETag: `"e"`}, true, http.Header{"If-None-Match": {`"e"`}}},
		{"no validators", store.URLRecord{Digest: [sha1.Size]byte{9}}, true, nil},
		{"no payload", store.URLRecord{ETag: `"e"`}, true, nil},
		{"the capture lost", store.URLRecord{Digest: [sha1.Size]byte{9}, ETag: `"e"`}, false, nil},
	} {
		p := newPlanner(t, Config{Archive: c.archived})
		b := p.db.NewBatch()
		b.PutDigest([sha1.Size]byte{9}, first)
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
		c.rec.URL, c.rec.Status = "http://a.test/p", store.URLDone
		put(t, p, c.rec)
		prev, got, hdr := p.PreviousVisit(lease(c.rec.URL, "a.test"))
		if prev.ETag != c.rec.ETag || len(hdr) != len(c.want) {
			t.Errorf("%s: record %+v, headers %v; want %v", c.name, prev, hdr, c.want)
			continue
		}
		for k := range c.want {
			if hdr.Get(k) != c.want.Get(k) {
				t.Errorf("%s: %s: %q, want %q", c.name, k, hdr.Get(k), c.want.Get(k))
			}
		}
		if (got.RecordID != "") != (c.want != nil) {
			t.Errorf("%s: capture %+v returned with headers %v", c.name, got, hdr)
		}
	}
}

// TestKeepVisit: a lease that ended without an answer is one more error
// in a row, keeps the URL's validators, and replaces its index entry.
func TestKeepVisit(t *testing.T) {
	p := newPlanner(t, Config{Policy: &recrawl.Policy{Min: time.Minute}})
	now := time.Now()
	prev := store.URLRecord{URL: "http://a.test/p", Depth: 1, Status: store.URLDone, LastStatus: 200, LastFetch: now.Add(-time.Hour),
		NextCrawl: now.Add(-time.Minute), ETag: `"e"`, Errors: 1, SitemapPriority: -1}
	put(t, p, prev)
	v := p.KeepVisit(lease(prev.URL, "a.test"))
	if r := v.Record; r.Errors != 2 || r.ETag != `"e"` || r.LastFetch.Before(now) || !r.NextCrawl.After(r.LastFetch) {
		t.Errorf("kept: %d errors, ETag %s, fetched %v ago, due %v after; want 2, the ETag, now, later", r.Errors, r.ETag, time.Since(r.LastFetch), r.NextCrawl.Sub(r.LastFetch))
	}
	if !v.prevDue.Equal(prev.NextCrawl) {
		t.Errorf("due before %v, want the record's %v", v.prevDue, prev.NextCrawl)
	}
}
