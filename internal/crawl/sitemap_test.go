package crawl

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/schedule"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// TestSeedSitemapGoesNext: a seed's host names a sitemap in its
// robots.txt, and the seed links to five pages. The sitemap is asked for
// right after the seed, before the pages it links to, whatever their
// ranks: one request that lists the host's pages, with what ranks them.
func TestSeedSitemapGoesNext(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"s.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch {
			case mappedSite(w, rw, r):
			case r.URL.Path == "/":
				page(rw, "/a", "/b", "/c", "/d", "/e")
			default:
				page(rw)
			}
		},
	})
	cfg := mw.config(t, 0, mw.url("s.test", "/"))
	cfg.Workers = 1
	cfg.NoSitemaps = false
	runCrawl(t, cfg)
	var got []string
	for _, p := range mw.paths("s.test") {
		if p != "/robots.txt" && p != "/sitemap.xml" {
			got = append(got, p)
		}
	}
	if len(got) < 3 || got[0] != "/" || got[1] != "/map.xml" {
		t.Errorf("asked for %v: want the seed, then its sitemap", got)
	}
	if !slices.Contains(got, "/listed") {
		t.Errorf("asked for %v: the page the sitemap lists is missing", got)
	}
}

// A seed's first maxSeedSitemaps sitemaps are High; its others, and
// those of a host reached by a link, are Normal.
func TestSitemapPriority(t *testing.T) {
	seed, link := frontier.Lease{Item: frontier.Item{Depth: 0}}, frontier.Lease{Item: frontier.Item{Depth: 1, Priority: frontier.High}}
	for i := range maxSeedSitemaps {
		if p := sitemapPriority(seed, i); p != frontier.High {
			t.Errorf("a seed's sitemap %d: %v, want High", i, p)
		}
	}
	if p := sitemapPriority(seed, maxSeedSitemaps); p != frontier.Normal {
		t.Errorf("a seed's sitemap past the first %d: %v, want Normal", maxSeedSitemaps, p)
	}
	if p := sitemapPriority(link, 0); p != frontier.Normal {
		t.Errorf("the sitemap of a host a High link reached: %v, want Normal", p)
	}
}

// TestSitemaps crawls a host whose robots.txt names a sitemap index:
// a gzipped urlset (with lastmod, and URLs on another seeded host, one of
// them disallowed there, and on a host out of scope), a malformed urlset,
// and one past the 50,000-URL limit. Every listed URL goes through the
// filters, robots.txt and the seen set like a link; the malformed file
// gives the URLs before its error; the big one is cut at the limit; and
// the server log shows politeness kept.
func TestSitemaps(t *testing.T) {
	urlset := func(locs ...string) string {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
		for _, l := range locs {
			fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>2026-11-29</lastmod></url>\n", l)
		}
		b.WriteString("</urlset>\n")
		return b.String()
	}
	var mw *miniWeb
	var big string
	mw = newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"s.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nDisallow: /big/\n\nSitemap: "+w.url("s.test", "/index.xml")+"\n")
			case "/":
				page(rw)
			case "/index.xml":
				rw.Header().Set("Content-Type", "application/xml")
				fmt.Fprintf(rw, `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>%s</loc><lastmod>2026-11-29</lastmod></sitemap>
<sitemap><loc>%s</loc></sitemap>
<sitemap><loc>%s</loc></sitemap>
</sitemapindex>`, w.url("s.test", "/a.xml.gz"), w.url("s.test", "/broken.xml"), w.url("s.test", "/big.xml"))
			case "/a.xml.gz":
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				zw.Write([]byte(urlset(w.url("s.test", "/p1"), w.url("s.test", "/p2"), w.url("d.test", "/ok"), w.url("d.test", "/private/x"), "http://out-of-scope.example/x")))
				zw.Close()
				rw.Header().Set("Content-Type", "application/gzip")
				rw.Write(buf.Bytes())
			case "/broken.xml":
				rw.Header().Set("Content-Type", "text/xml")
				fmt.Fprintf(rw, "<urlset>\n<url><loc>%s</loc></url>\n<url><loc>%s</url>\n<url><loc>%s</loc></url>\n</urlset>", w.url("s.test", "/p3"), w.url("s.test", "/p4"), w.url("s.test", "/p5"))
			case "/big.xml":
				rw.Header().Set("Content-Type", "application/xml")
				rw.Write([]byte(big))
			case "/sitemap.xml":
				http.NotFound(rw, r)
			default:
				page(rw)
			}
		},
		"d.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nDisallow: /private/\n")
			case "/sitemap.xml":
				http.NotFound(rw, r)
			default:
				page(rw)
			}
		},
	})
	locs := make([]string, 50001)
	for i := range locs {
		locs[i] = mw.url("s.test", fmt.Sprintf("/big/%d", i))
	}
	big = urlset(locs...)

	const delay = 5 * time.Millisecond
	cfg := mw.config(t, delay, mw.url("s.test", "/"), mw.url("d.test", "/"))
	cfg.NoSitemaps = false
	// Refused by scope before any request; were it not, loopback (where
	// nothing listens on its port), never DNS.
	cfg.Fetch.Resolve = maps.Clone(cfg.Fetch.Resolve)
	cfg.Fetch.Resolve["out-of-scope.example"] = "127.0.0.1"
	sum := runCrawl(t, cfg)

	s, d := mw.paths("s.test"), mw.paths("d.test")
	for _, p := range []string{"/sitemap.xml", "/index.xml", "/a.xml.gz", "/broken.xml", "/big.xml", "/p1", "/p2", "/p3"} {
		if n := strings.Count(" "+strings.Join(s, " ")+" ", " "+p+" "); n != 1 {
			t.Errorf("s.test: %s requested %d times, want once (requests %v)", p, n, s)
		}
	}
	for _, p := range []string{"/p4", "/p5"} {
		if slices.Contains(s, p) {
			t.Errorf("s.test: %s requested, listed after the malformed part", p)
		}
	}
	for _, p := range s {
		if strings.HasPrefix(p, "/big/") {
			t.Errorf("s.test: %s requested, disallowed by robots.txt", p)
		}
	}
	if !slices.Contains(d, "/ok") || slices.Contains(d, "/private/x") {
		t.Errorf("d.test requests %v; want /ok, from s.test's sitemap, and not the disallowed /private/x", d)
	}
	if sum.Handled["sitemap"] != 4 || sum.Unreadable["sitemap"] != 1 || sum.Cut["sitemap"] != 1 {
		t.Errorf("sitemaps read %v, malformed %v, cut %v; want 4 read, 1 malformed, 1 cut", sum.Handled, sum.Unreadable, sum.Cut)
	}
	// The big sitemap's first 50,000 URLs were judged (refused by
	// robots.txt), the 50,001st never read.
	if got := sum.Rejected[judge.Robots]; got != 50000+1 { // and d.test's /private/x
		t.Errorf("%d URLs refused by robots.txt, want the 50,000 read of the big sitemap and d.test's /private/x", got)
	}
	if sum.Rejected["scope"] == 0 {
		t.Errorf("rejections %v: the out-of-scope URL was not refused by scope", sum.Rejected)
	}
	mw.checkPolite(t, delay)
}

// TestAdmitListed: what a sitemap says of a page. A new page goes to the
// high-priority front queue when its <lastmod> is within a day or its
// <priority> is above the default, and its record keeps the hints. What it
// says of a page already fetched is applied by the next recrawl scan: a
// page whose <lastmod> is after its last fetch is queued again at once, at
// high priority, its recrawl index entry gone, once Min has passed since
// that fetch (until then the hint waits); one whose <lastmod> is older
// only keeps the hints; a <lastmod> in the future is not believed.
func TestAdmitListed(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"l.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) { http.NotFound(rw, r) },
	})
	cfg := mw.config(t, time.Millisecond, mw.url("l.test", "/"))
	cfg.Recrawl = &recrawl.Policy{}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close(0)
	now := time.Now()
	host := strings.TrimPrefix(mw.url("l.test", ""), "http://")
	part := uint16(partition.Of(host, c.cfg.Partitions))
	// Pages fetched before: in the seen set and the recrawl index.
	fetched := map[string]time.Time{"/done": now.Add(-time.Hour), "/recent": now.Add(-time.Minute), "/future": now.Add(-time.Hour), "/soon": now.Add(-time.Minute)}
	b := c.state.DB.NewBatch()
	var pending []seen.Pending
	for path, last := range fetched {
		u := mw.url("l.test", path)
		r := store.URLRecord{URL: u, Depth: 2, Status: store.URLDone, LastFetch: last, NextCrawl: now.Add(24 * time.Hour), SitemapPriority: -1}
		if _, err := c.seen.Add(host, u, func(p int, k seen.Key) (bool, error) {
			b.PutURL(uint16(p), host, k, r)
			b.PutDue(schedule.Entry(uint16(p), host, k, r, 1))
			pending = append(pending, seen.Pending{Partition: p, Key: k})
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	c.seen.Settle(pending)

	sm := mw.url("l.test", "/sitemap.xml")
	lease := frontier.Lease{Item: frontier.Item{URL: sm, Host: host, Depth: 1}}
	pb := c.state.NewBatch()
	hints := map[string]content.Hint{
		"/done":    {LastMod: now.Add(-10 * time.Minute), Priority: 0.9},
		"/recent":  {LastMod: now.Add(-time.Hour), Priority: -1},
		"/future":  {LastMod: now.Add(24 * time.Hour), Priority: -1},
		"/soon":    {LastMod: now.Add(-30 * time.Second), Priority: -1},
		"/new":     {LastMod: now.Add(-time.Hour), Priority: -1},
		"/old":     {LastMod: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), Priority: -1},
		"/liked":   {Priority: 0.9},
		"/default": {Priority: 0.5},
	}
	for _, path := range slices.Sorted(maps.Keys(hints)) {
		u, err := c.canon.Parse(mw.url("l.test", path))
		if err != nil {
			t.Fatal(err)
		}
		h := hints[path]
		c.admitListed(pb, &found{Candidate: judge.Candidate{URL: u}, listed: &h}, lease)
	}
	queued := map[string]frontier.Priority{}
	for _, it := range pb.Items {
		queued[strings.TrimPrefix(it.URL, mw.url("l.test", ""))] = it.Priority
	}
	if err := pb.Commit(c.seen, c.front); err != nil {
		t.Fatal(err)
	}
	want := map[string]frontier.Priority{"/new": frontier.High, "/old": frontier.Normal, "/liked": frontier.High, "/default": frontier.Normal}
	if !maps.Equal(queued, want) {
		t.Errorf("new pages queued %v, want %v", queued, want)
	}
	// The scan applies the hints about known pages.
	if err := c.recrawler.QueueDue(now); err != nil {
		t.Fatal(err)
	}
	if n := c.recrawler.Counts().ListedChanged; n != 1 {
		t.Errorf("%d pages queued early for their <lastmod>, want 1", n)
	}
	high, err := c.state.DB.FrontRange(uint8(frontier.High), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(high, func(e store.FrontEntry) bool { return e.Item.URL == mw.url("l.test", "/done") }) {
		t.Errorf("/done is not in the high-priority front queue: %v", high)
	}
	get := func(path string) store.URLRecord {
		t.Helper()
		r, ok, err := c.state.DB.GetURL(part, host, seen.KeyOf(mw.url("l.test", path)))
		if err != nil || !ok {
			t.Fatalf("%s: no record (%v)", path, err)
		}
		return r
	}
	entries := map[string]bool{}
	c.state.DB.ScanDue(part, nil, now.Add(48*time.Hour), func(e store.DueEntry) bool {
		for path := range fetched {
			if e.Hash == seen.KeyOf(mw.url("l.test", path)) {
				entries[path] = true
			}
		}
		return true
	})
	if r := get("/done"); r.Status != store.URLQueued || !r.InSitemap || r.SitemapPriority != 0.9 || entries["/done"] {
		t.Errorf("/done, changed since its fetch: %v, in sitemap %v, priority %v, still in the recrawl index %v", r.Status, r.InSitemap, r.SitemapPriority, entries["/done"])
	}
	if r := get("/recent"); r.Status != store.URLDone || !r.InSitemap || !r.SitemapLastMod.Equal(hints["/recent"].LastMod) || !entries["/recent"] {
		t.Errorf("/recent, fetched since its lastmod: %+v, in the recrawl index %v", r, entries["/recent"])
	}
	if r := get("/future"); r.Status != store.URLDone || !r.InSitemap || !r.SitemapLastMod.IsZero() || !entries["/future"] {
		t.Errorf("/future, a lastmod in the future: %+v", r)
	}
	if r := get("/soon"); r.Status != store.URLDone || !entries["/soon"] {
		t.Errorf("/soon, changed a minute after its fetch, Min not passed: %+v", r)
	}
	if r := get("/new"); !r.InSitemap || r.Priority != uint8(frontier.High) || r.Status != store.URLQueued {
		t.Errorf("/new: %+v", r)
	}
	if r := get("/liked"); c.sched.Importance(r.URL, &r) != 1.4 {
		t.Errorf("importance of a page a sitemap gives priority 0.9: %v, want 1.4", c.sched.Importance(r.URL, &r))
	}
}

// A crawl with a page cap asks for a sitemap only while it has queued
// fewer pages than the cap leaves it to fetch: a sitemap index of twelve
// sitemaps of 20 pages each, under a cap of 15 pages, costs one of them.
// The rest stay queued: a run resumed under a cap of 5, whose queued
// pages are still on disk, asks for none, and the next, without a cap,
// asks for each once and fetches every page once. Under a cap of 100, a
// sitemap put off is asked for once the pages found have run out: five
// of them, for the 100 pages.
func TestSitemapsOnlyAsPagesAreNeeded(t *testing.T) {
	const maps, perMap = 12, 20
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"s.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "application/xml")
			var m int
			switch {
			case r.URL.Path == "/robots.txt":
				robotsFile(rw, "User-agent: *\nAllow: /\nSitemap: "+w.url("s.test", "/index.xml")+"\n")
			case r.URL.Path == "/index.xml":
				fmt.Fprint(rw, `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
				for i := range maps {
					fmt.Fprintf(rw, "<sitemap><loc>%s</loc></sitemap>", w.url("s.test", fmt.Sprintf("/map-%d.xml", i)))
				}
				fmt.Fprint(rw, `</sitemapindex>`)
			case mapNumber(r.URL.Path, &m):
				locs := make([]string, perMap)
				for i := range locs {
					locs[i] = w.url("s.test", fmt.Sprintf("/item/%d/%d", m, i))
				}
				urlsetFile(rw, locs...)
			case r.URL.Path == "/sitemap.xml":
				http.NotFound(rw, r)
			default:
				page(rw)
			}
		},
	})
	count := func(from int) (sitemaps, items int, twice []string) {
		seen := map[string]bool{}
		for _, p := range mw.paths("s.test")[from:] {
			switch {
			case strings.HasPrefix(p, "/map-"):
				sitemaps++
			case strings.HasPrefix(p, "/item/"):
				items++
			}
			if seen[p] && p != "/robots.txt" {
				twice = append(twice, p)
			}
			seen[p] = true
		}
		return sitemaps, items, twice
	}
	cfg := mw.config(t, 0, mw.url("s.test", "/"))
	cfg.NoSitemaps = false
	cfg.HeadSize = 4 // most of a host's queue on disk, as on a large site
	cfg.MaxPages = 15
	sum := runCrawl(t, cfg)
	if n, items, _ := count(0); n != 1 || items != 14 || sum.StoppedBy != "max-pages" {
		t.Errorf("under a cap of 15 pages: %d sitemaps and %d pages asked for, stopped by %s; want one sitemap, the seed and 14 pages it lists, then the cap",
			n, items, sum.StoppedBy)
	}
	if sum.SitemapsLater == 0 {
		t.Errorf("no sitemap counted as put off")
	}

	// Resumed under a cap of 5: the six pages left queued on disk, not
	// read back yet, are enough, and no sitemap is asked for.
	cfg.MaxPages = 5
	runCrawl(t, cfg)
	if n, items, _ := count(0); n != 1 || items != 19 {
		t.Errorf("resumed under a cap of 5: %d sitemaps and %d pages asked for in all; want still one sitemap, and 5 pages more", n, items)
	}

	cfg.MaxPages = 0
	runCrawl(t, cfg)
	if n, items, twice := count(0); n != maps || items != maps*perMap || len(twice) > 0 {
		t.Errorf("the three runs: %d sitemaps and %d pages asked for, %v twice; want each of %d sitemaps and %d pages once", n, items, twice, maps, maps*perMap)
	}

	before := len(mw.paths("s.test"))
	cfg = mw.config(t, 0, mw.url("s.test", "/"))
	cfg.NoSitemaps = false
	cfg.HeadSize = 4
	cfg.MaxPages = 100
	sum = runCrawl(t, cfg)
	if n, items, _ := count(before); n != 5 || items != 99 || sum.StoppedBy != "max-pages" {
		t.Errorf("under a cap of 100 pages: %d sitemaps and %d pages asked for, stopped by %s; want five sitemaps, the seed and 99 pages, then the cap",
			n, items, sum.StoppedBy)
	}
}

// mapNumber reads the number of a path /map-N.xml into m.
func mapNumber(path string, m *int) bool {
	n, err := fmt.Sscanf(path, "/map-%d.xml", m)
	return err == nil && n == 1
}

// A crawl whose cap is reached when only a sitemap is left ends there,
// the sitemap left queued unrequested, rather than putting it aside and
// bringing it back for ever. One whose queued pages turn out not to be
// fetched (another host's robots.txt forbids them) asks for the sitemap
// it put off once they are gone.
func TestSitemapAtTheCap(t *testing.T) {
	// d.s.test answers its robots.txt once /a has been asked for, so that
	// its pages are still queued when the sitemaps are leased.
	var gate atomic.Pointer[chan struct{}]
	open := func() {
		select {
		case <-*gate.Load():
		default:
			close(*gate.Load())
		}
	}
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"s.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch {
			case mappedSite(w, rw, r):
			case r.URL.Path == "/":
				page(rw, "/a", w.url("d.s.test", "/x1"), w.url("d.s.test", "/x2"), w.url("d.s.test", "/x3"))
			case r.URL.Path == "/a":
				open()
				page(rw)
			case r.URL.Path == "/sitemap.xml":
				http.NotFound(rw, r)
			default:
				page(rw)
			}
		},
		"d.s.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				select {
				case <-*gate.Load():
				case <-r.Context().Done():
				}
				robotsFile(rw, "User-agent: *\nDisallow: /\n")
				return
			}
			page(rw)
		},
	})
	opened := make(chan struct{})
	close(opened)
	gate.Store(&opened)
	// A seed with no links, under a cap of one page: the cap is reached
	// with only the sitemaps left.
	cfg := mw.config(t, 0, mw.url("s.test", "/empty"))
	cfg.NoSitemaps, cfg.Workers = false, 1
	cfg.MaxPages = 1
	sum := runCrawlWithin(t, cfg, 30*time.Second)
	if sum.StoppedBy != "max-pages" || slices.Contains(mw.paths("s.test"), "/map.xml") {
		t.Errorf("cap of one page: stopped by %s, requests %v; want the cap, the sitemap not asked for", sum.StoppedBy, mw.paths("s.test"))
	}

	// Under a cap of four, the seed's four links are enough: the sitemap
	// is put off. Three of them are refused when leased, and the sitemap
	// is asked for then, with the page it lists.
	shut := make(chan struct{})
	gate.Store(&shut)
	before := len(mw.paths("s.test"))
	cfg = mw.config(t, 0, mw.url("s.test", "/"))
	cfg.NoSitemaps, cfg.Workers = false, 2
	cfg.MaxPages = 4
	sum = runCrawlWithin(t, cfg, 30*time.Second)
	got := mw.paths("s.test")[before:]
	if !slices.Contains(got, "/map.xml") || !slices.Contains(got, "/listed") || sum.SitemapsLater == 0 {
		t.Errorf("cap of four pages: %d sitemap leases put off, requests %v; want the sitemap put off, then asked for once the pages ran out, and its page",
			sum.SitemapsLater, got)
	}
	for _, p := range mw.paths("d.s.test") {
		if p != "/robots.txt" {
			t.Errorf("d.s.test requests %v; want its robots.txt alone", mw.paths("d.s.test"))
			break
		}
	}
}

// mappedSite answers, for s.test of w, a robots.txt naming its sitemap
// /map.xml and that sitemap, which lists /listed; it reports whether r
// was for one of them.
func mappedSite(w *miniWeb, rw http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/robots.txt":
		robotsFile(rw, "User-agent: *\nAllow: /\nSitemap: "+w.url("s.test", "/map.xml")+"\n")
	case "/map.xml":
		urlsetFile(rw, w.url("s.test", "/listed"))
	default:
		return false
	}
	return true
}

// urlsetFile answers with a sitemap listing locs. (The sitemaps.org URL is
// the protocol's XML namespace, a name, never asked for.)
func urlsetFile(rw http.ResponseWriter, locs ...string) {
	rw.Header().Set("Content-Type", "application/xml")
	fmt.Fprint(rw, `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, l := range locs {
		fmt.Fprintf(rw, "<url><loc>%s</loc></url>", l)
	}
	fmt.Fprint(rw, "</urlset>")
}
