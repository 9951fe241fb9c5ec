package crawl

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/state"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/testwait"
	"github.com/weft-crawler/weft/internal/warc"
)

// TestServeRecrawls runs the continuous mode, until the server has had
// the visits it judges (a few seconds on an idle machine), over a host
// with a page that never changes (it has an ETag and answers a matching
// If-None-Match with 304) and one that changes at every request (no
// validators), and one whose first request fails. From the server's
// side: the failed page is asked for again, the unchanged page is asked for
// again conditionally and answered 304, the changing one is fetched more
// often (its learnt rate is higher), and the host's delay holds
// throughout. The 304s are server-not-modified revisits in the WARC files
// and in the capture index.
func TestServeRecrawls(t *testing.T) {
	var changes, flaky atomic.Int64
	var mu sync.Mutex
	conditional := map[string]int{} // path -> requests with If-None-Match
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"r.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/static", "/changing", "/flaky", "/sess")
			case "/sess":
				// A redirect to a variant of its own URL: leased twice
				// in a row, it keeps one recrawl index entry.
				if !strings.Contains(r.RequestURI, "jsessionid") {
					http.Redirect(rw, r, "/sess;jsessionid=ABC", http.StatusFound)
					return
				}
				page(rw)
			case "/flaky":
				// The first request gets its connection cut: an error,
				// not a response. The URL must stay in the recrawl.
				if flaky.Add(1) == 1 {
					conn, _, err := rw.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
					return
				}
				page(rw)
			case "/static":
				if r.Header.Get("If-None-Match") != "" {
					mu.Lock()
					conditional[r.URL.Path]++
					mu.Unlock()
				}
				rw.Header().Set("ETag", `"v1"`)
				if r.Header.Get("If-None-Match") == `"v1"` {
					rw.WriteHeader(http.StatusNotModified)
					return
				}
				rw.Header().Set("Content-Type", "text/html")
				rw.Write([]byte("<html><body><p>the same words for ever</p></body></html>"))
			case "/changing":
				rw.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(rw, "<html><body><p>edition %d</p></body></html>", changes.Add(1))
			default:
				http.NotFound(rw, r)
			}
		},
	})
	const delay = 20 * time.Millisecond
	cfg := mw.config(t, delay, mw.url("r.test", "/"))
	// Compressed time: a page is due again after 0.7 s at the prior rate,
	// never sooner than 150 ms nor later than 1.5 s.
	cfg.Recrawl = &recrawl.Policy{Min: 150 * time.Millisecond, Max: 1500 * time.Millisecond, Prior: 1}
	cfg.RecrawlScan = 50 * time.Millisecond
	c := startCrawl(t, cfg)
	// Until the server has had the visits judged below: /static's first
	// and six conditional ones (enough for its schedule to have learnt
	// that it does not change, while /changing's learnt that it does),
	// /flaky's failed one and two after it, and /sess's first and one
	// recrawl. The crawl is judged at a count of visits, not after a
	// fixed time: a loaded machine fits fewer visits into a fixed window
	// (New alone took up to 1.2 s of a 4-second one, which then held one
	// request for /sess and two each for /static and /changing).
	testwait.Eventually(t, time.Minute, "seven requests for /static, three for /flaky, two for /sess", func() bool {
		n := map[string]int{}
		for _, p := range mw.paths("r.test") {
			n[p]++
		}
		return n["/static"] >= 7 && n["/flaky"] >= 3 && n["/sess"] >= 2
	})
	sum, err := c.stop()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, p := range mw.paths("r.test") {
		counts[p]++
	}
	mu.Lock()
	cond := conditional["/static"]
	mu.Unlock()
	t.Logf("requests: %v; %d conditional requests for /static; summary: %d recrawls, %d not modified", counts, cond, sum.Recrawls, sum.NotModified)
	if counts["/static"] < 2 || cond != counts["/static"]-1 || sum.NotModified != int64(cond) {
		t.Errorf("/static: %d requests, %d conditional, %d answered 304 by the summary; want every one after the first conditional, each a 304",
			counts["/static"], cond, sum.NotModified)
	}
	if counts["/changing"] <= counts["/static"] {
		t.Errorf("/changing fetched %d times, /static %d: the page that changes at every visit is not fetched more often", counts["/changing"], counts["/static"])
	}
	if counts["/flaky"] < 3 || len(sum.Errors) == 0 {
		t.Errorf("/flaky: %d requests, errors %v; want its failed first fetch, and recrawls after it", counts["/flaky"], sum.Errors)
	}
	if sum.Recrawls == 0 || sum.StoppedBy == "drained" {
		t.Errorf("summary: stopped by %s after %d recrawls; want a crawl that goes on until stopped", sum.StoppedBy, sum.Recrawls)
	}
	mw.checkPolite(t, delay)
	// Each page fetched and not queued again when the run stopped has one
	// entry (checkDueIndex).
	if n := checkDueIndex(t, cfg.DataDir, true); n == 0 {
		t.Error("no recrawl index entries")
	}
	if counts["/sess"] < 2 {
		t.Errorf("/sess requested %d times", counts["/sess"])
	}

	// The WARC files: each 304 a server-not-modified revisit of /static's
	// first capture.
	var revisits, first int
	var firstID string
	for _, name := range sum.WARCFiles {
		for _, r := range readWARC(t, filepath.Join(cfg.DataDir, "warc", name)) {
			if !strings.HasSuffix(r.header.Get("WARC-Target-URI"), "/static") {
				continue
			}
			switch r.header.Get("WARC-Type") {
			case "response":
				first++
				firstID = r.header.Get("WARC-Record-ID")
			case "revisit":
				revisits++
				if r.header.Get("WARC-Profile") != warc.ProfileServerNotModified || r.header.Get("WARC-Refers-To") != firstID ||
					!strings.HasPrefix(string(r.block), "HTTP/1.1 304") {
					t.Errorf("revisit of /static: %v", r.header)
				}
			}
		}
	}
	if first != 1 || revisits != cond {
		t.Errorf("/static in the WARC files: %d responses and %d revisits; want 1 and %d", first, revisits, cond)
	}
	a, err := archive.Open(cfg.DataDir, cfg.Canon)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	got, err := a.Get(mw.url("r.test", "/static"), time.Time{})
	if err != nil || got.Capture.Status != 304 || string(got.Record.Payload) != "<html><body><p>the same words for ever</p></body></html>" {
		t.Errorf("weft get of /static, latest: status %d, payload %q, %v; want the 304 resolved to the page", got.Capture.Status, got.Record.Payload, err)
	}
}

// TestServeErrorsBackOff runs the continuous mode over four seeds, each on
// its own host (so that one host's politeness does not pace another's
// pages): one answers unchanged, one 404, one 500, and one a response that
// is not HTTP (no answer). From the servers' side: each failing URL is
// asked for again with gaps that grow by its factor from the first error
// (recrawl.GoneFactor for the 404, recrawl.ErrorFactor for the others)
// and, within the run, no more often than the unchanged page.
func TestServeErrorsBackOff(t *testing.T) {
	serve := func(path string, answer func(rw http.ResponseWriter, r *http.Request)) func(*miniWeb, http.ResponseWriter, *http.Request) {
		return func(_ *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path != path {
				http.NotFound(rw, r)
				return
			}
			answer(rw, r)
		}
	}
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"same.test": serve("/same", func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html")
			rw.Write([]byte("<html><body><p>the same words for ever</p></body></html>"))
		}),
		"missing.test": serve("/missing", http.NotFound),
		"broken.test": serve("/broken", func(rw http.ResponseWriter, r *http.Request) {
			http.Error(rw, "broken", http.StatusInternalServerError)
		}),
		"garbled.test": serve("/garbled", func(rw http.ResponseWriter, r *http.Request) {
			if conn, _, err := rw.(http.Hijacker).Hijack(); err == nil {
				conn.Write([]byte("this is not HTTP\r\n\r\n"))
				conn.Close()
			}
		}),
	})
	const delay = 20 * time.Millisecond
	cfg := mw.config(t, delay, mw.url("same.test", "/same"), mw.url("missing.test", "/missing"), mw.url("broken.test", "/broken"), mw.url("garbled.test", "/garbled"))
	// Compressed time: at this prior an unchanged page is due again
	// after about Min, and backs off only after five unchanged visits.
	const minGap = 100 * time.Millisecond
	cfg.Recrawl = &recrawl.Policy{Min: minGap, Max: 10 * time.Second, Prior: 1}
	cfg.RecrawlScan = 25 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
	defer cancel()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	starts := map[string][]time.Time{}
	for host := range mw.auth {
		for _, r := range mw.requests(host) {
			starts[r.path] = append(starts[r.path], r.start)
		}
	}
	same := len(starts["/same"])
	t.Logf("requests in 4 s: /same %d, /missing %d, /broken %d, /garbled %d", same, len(starts["/missing"]), len(starts["/broken"]), len(starts["/garbled"]))
	if same < 5 {
		t.Fatalf("/same requested %d times in 4 s: the recrawl did not run", same)
	}
	// The server sees a request a little after the fetch began, which is
	// what the schedule counts from: a gap may look that much shorter.
	const slack = 20 * time.Millisecond
	for _, f := range []struct {
		path   string
		factor float64
	}{{"/missing", recrawl.GoneFactor}, {"/broken", recrawl.ErrorFactor}, {"/garbled", recrawl.ErrorFactor}} {
		s := starts[f.path]
		if len(s) < 2 {
			t.Errorf("%s requested %d times: want it asked for again", f.path, len(s))
		}
		if len(s) > same {
			t.Errorf("%s requested %d times, the unchanged /same %d", f.path, len(s), same)
		}
		for k := 1; k < len(s); k++ {
			want := time.Duration(float64(minGap)*math.Pow(f.factor, float64(k))) - slack
			if gap := s[k].Sub(s[k-1]); gap < want {
				t.Errorf("%s: request %d came %v after the one before, after %d errors in a row; want at least %v", f.path, k+1, gap, k, want+slack)
			}
		}
	}
	mw.checkPolite(t, delay)
}

// queuedURLs counts a stopped crawl's URLs queued to be fetched.
func queuedURLs(t *testing.T, dir string) (n int) {
	t.Helper()
	d, _, err := state.Open(dir, 0, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for part := range d.Partitions() {
		if err := d.DB.ScanURLs(uint16(part), func(_ string, _ [16]byte, r store.URLRecord) bool {
			if r.Status == store.URLQueued {
				n++
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// checkDueIndex reads a stopped crawl's state: in a continuous crawl every
// URL fetched has one recrawl index entry, at its NextCrawl, and no other
// entry is left; in another, there are none.
func checkDueIndex(t *testing.T, dir string, continuous bool) (entries int) {
	t.Helper()
	d, _, err := state.Open(dir, 0, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	type key struct {
		part uint16
		host string
		hash [16]byte
	}
	idx := map[key][]time.Time{}
	for part := range d.Partitions() {
		if err := d.DB.ScanDue(uint16(part), nil, time.Now().Add(100*365*24*time.Hour), func(e store.DueEntry) bool {
			k := key{e.Part, e.Host, e.Hash}
			idx[k] = append(idx[k], e.Due)
			entries++
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	for part := range d.Partitions() {
		if err := d.DB.ScanURLs(uint16(part), func(host string, hash [16]byte, r store.URLRecord) bool {
			k := key{uint16(part), host, hash}
			got := idx[k]
			delete(idx, k)
			indexed := continuous && (r.Status == store.URLDone || r.Status == store.URLFailed) && !r.LastFetch.IsZero()
			switch {
			case indexed && (len(got) != 1 || !got[0].Equal(r.NextCrawl)):
				t.Errorf("%s (%v, next crawl %v): recrawl index entries %v", r.URL, r.Status, r.NextCrawl, got)
			case !indexed && len(got) > 0:
				t.Errorf("%s (%v): recrawl index entries %v, want none", r.URL, r.Status, got)
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range idx {
		t.Errorf("recrawl index entries %v for %s, which has no record", v, k.host)
	}
	return entries
}

// TestRecrawlIndexRebuilt: pages fetched by a crawl that was not
// continuous are recrawled when the state is served, and a change of
// policy reschedules every page by the new one.
func TestRecrawlIndexRebuilt(t *testing.T) {
	// Each run below ends when the web has had the page requests it waits
	// for (want), or at its time limit.
	var hits, want atomic.Int64
	reached := make(chan struct{}, 1)
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"r.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/robots.txt" && hits.Add(1) == want.Load() {
				select {
				case reached <- struct{}{}:
				default:
				}
			}
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/a", "/b")
			default:
				page(rw)
			}
		},
	})
	const delay = 10 * time.Millisecond
	cfg := mw.config(t, delay, mw.url("r.test", "/"))
	run := func(cfg Config, d time.Duration, requests int64) Summary {
		t.Helper()
		hits.Store(0)
		want.Store(requests)
		select {
		case <-reached:
		default:
		}
		ctx, cancel := context.WithTimeout(t.Context(), d)
		defer cancel()
		go func() {
			select {
			case <-reached:
				cancel()
			case <-ctx.Done():
			}
		}()
		_, sum := runCrawlerCtx(t, ctx, cfg)
		return sum
	}
	if sum := run(cfg, 10*time.Second, 0); sum.StoppedBy != "drained" || sum.Pages < 3 {
		t.Fatalf("the crawl: %+v", sum)
	}
	if n := checkDueIndex(t, cfg.DataDir, false); n != 0 {
		t.Errorf("a crawl that is not continuous left %d recrawl index entries", n)
	}
	before := len(mw.paths("r.test"))
	serve := cfg
	serve.Recrawl = &recrawl.Policy{Min: 100 * time.Millisecond, Max: 300 * time.Millisecond, Prior: 1}
	serve.RecrawlScan = 20 * time.Millisecond
	if sum := run(serve, 10*time.Second, 3); sum.Recrawls < 3 {
		t.Errorf("served: %d recrawls, want the pages the crawl fetched recrawled", sum.Recrawls)
	}
	if after := len(mw.paths("r.test")); after < before+3 {
		t.Errorf("%d requests while served, want every page again", after-before)
	}
	checkDueIndex(t, cfg.DataDir, true)

	// The serve run stopped with any of the pages queued again (due every
	// 100-300 ms, each may be): serve once more under a policy that
	// recrawls nothing within the run, until those are fetched, so that
	// every page is scheduled and has an entry to reschedule.
	settle := serve
	settle.Recrawl = &recrawl.Policy{Min: time.Hour, Max: 2 * time.Hour}
	if queued := queuedURLs(t, cfg.DataDir); queued > 0 {
		run(settle, 10*time.Second, int64(queued))
	}
	if n := checkDueIndex(t, cfg.DataDir, true); n < 3 {
		t.Fatalf("%d recrawl index entries after every page was fetched; want every page's", n)
	}

	// A new policy: every page is scheduled by it when the crawl opens.
	slow := serve
	slow.Recrawl = &recrawl.Policy{Min: 3 * time.Hour, Max: 4 * time.Hour}
	c, err := New(slow)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.close(0); err != nil {
		t.Fatal(err)
	}
	// Every page fetched and not queued again when the run stopped has its
	// entry (checkDueIndex), rescheduled by the new policy (below).
	if n := checkDueIndex(t, cfg.DataDir, true); n == 0 {
		t.Error("no recrawl index entries after the policy changed")
	}
	d, _, err := state.Open(cfg.DataDir, 0, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for part := range d.Partitions() {
		d.DB.ScanURLs(uint16(part), func(_ string, _ [16]byte, r store.URLRecord) bool {
			if wait := r.NextCrawl.Sub(r.LastFetch); r.Status == store.URLDone && (wait < 3*time.Hour || wait > 4*time.Hour) {
				t.Errorf("%s: next crawl %v after the last, want the new policy's [3h, 4h]", r.URL, wait)
			}
			return true
		})
	}
}

// TestInLinks: each page's followed links count toward their targets'
// in-links once, at its first fetch; the count reaches the URL's record
// and the importance it is scheduled with; and the counts survive a
// restart.
func TestInLinks(t *testing.T) {
	const pages = 10
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"i.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch p := r.URL.Path; {
			case p == "/robots.txt":
				http.NotFound(rw, r)
			case p == "/":
				var links []string
				for i := range pages {
					links = append(links, fmt.Sprintf("/p%d", i))
				}
				page(rw, links...)
			case p == "/p0":
				page(rw, "/popular", "/popular", "/obscure", "/p0") // a repeat and a self-link count for nothing
			case strings.HasPrefix(p, "/p"):
				page(rw, "/popular")
			default: // /popular and /obscure never change
				rw.Header().Set("ETag", `"same"`)
				if r.Header.Get("If-None-Match") == `"same"` {
					rw.WriteHeader(http.StatusNotModified)
					return
				}
				page(rw)
			}
		},
	})
	cfg := mw.config(t, 5*time.Millisecond, mw.url("i.test", "/"))
	cfg.Recrawl = &recrawl.Policy{Min: 200 * time.Millisecond, Max: time.Hour, Prior: 0.01}
	cfg.RecrawlScan = 20 * time.Millisecond
	c := startCrawl(t, cfg)
	// The crawl's own store is read while it runs, until /popular has
	// been fetched again after every page linking to it was read, and
	// both pages are scheduled: the due entries judged are those of that
	// moment. The server's log says a request came, not that the crawler
	// committed what it learnt from it; and once the crawl is stopped, a
	// page whose recrawl was queued has no due entry to judge. (A fixed
	// run of 2.5 s was too short on a loaded machine; waits on the server's
	// log, then on the records, each let the check read a page whose
	// recrawl had been queued.)
	popular, obscure := mw.url("i.test", "/popular"), mw.url("i.test", "/obscure")
	host := mw.auth["i.test"]
	part := uint16(partition.Of(host, c.state.Partitions()))
	var weight map[[16]byte]float64
	testwait.Eventually(t, time.Minute, "/popular fetched after every page linking to it, and both pages scheduled", func() bool {
		var lastP time.Time
		seenP := map[string]bool{}
		for _, r := range mw.requests("i.test") {
			if r.path != "/popular" && r.path != "/obscure" && strings.HasPrefix(r.path, "/p") {
				seenP[r.path] = true
				if r.start.After(lastP) {
					lastP = r.start
				}
			}
		}
		// One request in flight per host: a fetch the crawler began
		// after the last /pN's request came began after it was read. A
		// due entry read after the record is that fetch's or a later one's.
		rec, _, err := c.state.DB.GetURL(part, host, seen.KeyOf(popular))
		if err != nil {
			t.Fatal(err)
		}
		if len(seenP) < pages || !rec.LastFetch.After(lastP) {
			return false
		}
		weight = map[[16]byte]float64{}
		if err := c.state.DB.ScanDue(part, nil, time.Now().Add(time.Hour), func(e store.DueEntry) bool { weight[e.Hash] = e.Importance; return true }); err != nil {
			t.Fatal(err)
		}
		_, p := weight[seen.KeyOf(popular)]
		_, o := weight[seen.KeyOf(obscure)]
		return p && o
	})
	if _, err := c.stop(); err != nil {
		t.Fatal(err)
	}
	// Scheduled with the importance of their in-links (recrawl.Importance):
	// 1 + log2(1 + in-links).
	if pw, ow := weight[seen.KeyOf(popular)], weight[seen.KeyOf(obscure)]; math.Abs(pw-(1+math.Log2(1+pages))) > 1e-9 || ow != 2 {
		t.Errorf("scheduled with importance %v (/popular) and %v (/obscure), want %v and 2", pw, ow, 1+math.Log2(1+pages))
	}
	d, _, err := state.Open(cfg.DataDir, 0, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string]store.URLRecord{}
	for part := range d.Partitions() {
		d.DB.ScanURLs(uint16(part), func(_ string, _ [16]byte, r store.URLRecord) bool { recs[r.URL] = r; return true })
	}
	d.Close()
	p, o, p0 := recs[popular], recs[obscure], recs[mw.url("i.test", "/p0")]
	if p.InLinks != pages || o.InLinks != 1 || p0.InLinks != 1 {
		t.Errorf("in-links in the records: /popular %d, /obscure %d, /p0 %d; want %d, 1 and 1 (its self-link not counted)", p.InLinks, o.InLinks, p0.InLinks, pages)
	}
	again, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer again.close(0)
	if n := again.inlinks.Count(seen.KeyOf(popular)); n != pages {
		t.Errorf("after a restart /popular has %d in-links, want %d", n, pages)
	}
}

// TestHistogram: observations land in the bucket of their bound, counts
// are cumulative, and the overflow counts in Count only.
func TestHistogram(t *testing.T) {
	var h histogram
	for _, d := range []time.Duration{time.Millisecond, 5 * time.Millisecond, 30 * time.Millisecond, 2 * 24 * time.Hour} {
		h.observe(d)
	}
	s := h.snapshot()
	at := func(bound float64) uint64 {
		i := slices.Index(s.Bounds, bound)
		return s.Counts[i]
	}
	if at(0.005) != 2 || at(0.025) != 2 || at(0.05) != 3 || at(86400) != 3 || s.Count != 4 {
		t.Errorf("buckets %v, count %d", s.Counts, s.Count)
	}
	if want := (36*time.Millisecond + 48*time.Hour).Seconds(); math.Abs(s.Sum-want) > 1e-6 {
		t.Errorf("sum %v, want %v", s.Sum, want)
	}
}

// TestServeAfterCrawlAsksConditionally: weft serve on the directory of a
// finished weft crawl asks for its pages with the validators the crawl
// received (If-None-Match and If-Modified-Since), whichever command
// fetched them first, and archives the 304 as a revisit.
func TestServeAfterCrawlAsksConditionally(t *testing.T) {
	const etag, modified = `"e1"`, "Mon, 30 Nov 2026 10:00:00 GMT"
	var mu sync.Mutex
	asked := map[string][]http.Header{}
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"v.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			mu.Lock()
			asked[r.URL.Path] = append(asked[r.URL.Path], r.Header.Clone())
			mu.Unlock()
			rw.Header().Set("ETag", etag)
			rw.Header().Set("Last-Modified", modified)
			if r.Header.Get("If-None-Match") == etag {
				rw.WriteHeader(http.StatusNotModified)
				return
			}
			switch r.URL.Path {
			case "/":
				page(rw, "/a")
			case "/a":
				rw.Header().Set("Content-Type", "text/html")
				rw.Write([]byte("<html><body><p>the same words for ever</p></body></html>"))
			default:
				http.NotFound(rw, r)
			}
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("v.test", "/"))
	if sum := runCrawl(t, cfg); sum.StoppedBy != "drained" || sum.Pages != 2 {
		t.Fatalf("the crawl: %s, %d pages", sum.StoppedBy, sum.Pages)
	}
	cfg.Recrawl = &recrawl.Policy{Min: 100 * time.Millisecond, Max: 300 * time.Millisecond, Prior: 1}
	cfg.RecrawlScan = 50 * time.Millisecond
	c := startCrawl(t, cfg)
	testwait.Eventually(t, 20*time.Second, "both pages asked for again", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(asked["/"]) >= 2 && len(asked["/a"]) >= 2
	})
	sum, _ := c.stop()
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{"/", "/a"} {
		h := asked[p][1]
		if h.Get("If-None-Match") != etag || h.Get("If-Modified-Since") != modified {
			t.Errorf("%s asked again with If-None-Match %q, If-Modified-Since %q; want the crawl's validators", p, h.Get("If-None-Match"), h.Get("If-Modified-Since"))
		}
	}
	if sum.NotModified < 2 {
		t.Errorf("%d answers 304 archived, want both pages'", sum.NotModified)
	}
}

// TestServeTokensAreNoChange: a page whose every answer differs only out
// of sight (a script's nonce, a form's token, a time in a comment), as
// many do, has its recrawls find no change, and is asked for less and
// less often, as an unchanging page is; so does one whose token changes
// every other answer (the same bytes twice are a revisit, not read
// again). A page whose visible words change on every answer finds a
// change on every visit, and so does a listing whose new entries read as
// the old ones ("Read more") but link elsewhere.
func TestServeTokensAreNoChange(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	// Each page's words its own, so that none is a near-duplicate of
	// another, whose links would not be followed (and a second answer
	// of the same bytes would then be read again, not a revisit).
	words := map[string]string{}
	for i, p := range []string{"/tokens", "/sticky", "/news", "/list"} {
		words[p] = strings.Repeat(fmt.Sprintf("page%d words%d for%d ever%d ", i, i, i, i), 20)
	}
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"v.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			mu.Lock()
			asked[r.URL.Path]++
			n := asked[r.URL.Path]
			mu.Unlock()
			rw.Header().Set("Content-Type", "text/html")
			switch r.URL.Path {
			case "/":
				fmt.Fprint(rw, `<html><body><p>home</p><a href="/tokens">t</a> <a href="/sticky">s</a> <a href="/news">n</a> <a href="/list">l</a></body></html>`)
			case "/tokens", "/sticky":
				if r.URL.Path == "/sticky" {
					n /= 2
				}
				fmt.Fprintf(rw, `<html><head><script>var nonce = "%d";</script></head><body><!-- served %d --><p>%s</p>`+
					`<form><input type="hidden" name="csrf" value="%d"></form><a href="/">home</a></body></html>`, n, n, words[r.URL.Path], n)
			case "/news":
				fmt.Fprintf(rw, `<html><body><p>%s</p><p>news number %d</p></body></html>`, words["/news"], n)
			case "/list":
				fmt.Fprintf(rw, `<html><body><p>%s</p><a href="/post/%d">Read more</a></body></html>`, words["/list"], n)
			default:
				http.NotFound(rw, r)
			}
		},
	})
	cfg := mw.config(t, time.Millisecond, mw.url("v.test", "/"))
	cfg.Recrawl = &recrawl.Policy{Min: 50 * time.Millisecond, Max: time.Hour, Prior: 1}
	cfg.RecrawlScan = 20 * time.Millisecond
	c := startCrawl(t, cfg)
	testwait.Eventually(t, 30*time.Second, "each page asked for three times or more, /sticky five", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return asked["/tokens"] >= 3 && asked["/sticky"] >= 5 && asked["/news"] >= 3 && asked["/list"] >= 3
	})
	if _, err := c.stop(); err != nil {
		t.Fatal(err)
	}
	d, _, err := state.Open(cfg.DataDir, 0, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	record := func(path string) store.URLRecord {
		t.Helper()
		u := mw.url("v.test", path)
		host := mw.auth["v.test"]
		r, ok, err := d.DB.GetURL(uint16(partition.Of(host, d.Partitions())), host, seen.KeyOf(u))
		if err != nil || !ok {
			t.Fatalf("%s: no record (%v)", u, err)
		}
		return r
	}
	for _, path := range []string{"/tokens", "/sticky"} {
		r := record(path)
		t.Logf("%s: %d visits, unchanged %d, changes %.2f of %.2f", path, asked[path], r.Unchanged, r.Changes, r.Visits)
		if r.Unchanged < 2 || r.TextHash == 0 || r.Changes > 0 {
			t.Errorf("%s: %d visits in a row found no change, changes %.2f (text hash %x); want its recrawls to find none", path, r.Unchanged, r.Changes, r.TextHash)
		}
	}
	for _, path := range []string{"/news", "/list"} {
		r := record(path)
		t.Logf("%s: %d visits, unchanged %d, changes %.2f of %.2f", path, asked[path], r.Unchanged, r.Changes, r.Visits)
		if r.Unchanged != 0 || r.Changes < 1 {
			t.Errorf("%s: %d visits in a row found no change, changes %.2f; want every visit to find one", path, r.Unchanged, r.Changes)
		}
	}
}
