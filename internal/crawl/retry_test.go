package crawl

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/fetchlog"
)

// TestTransientFailuresAreAskedOnceMore: a URL whose first fetch got a
// 500, a 502 from a gateway or a broken connection is asked for once
// more, after the rest of its host's URLs, and archived when that works;
// one that fails again is not asked a third time, and a 404 or a 501 not
// a second. The summary counts them. A crawl stopped by its page cap
// after the first failures asks each once more in the next run, and no
// more: the URL's record keeps its failures.
func TestTransientFailuresAreAskedOnceMore(t *testing.T) {
	for _, resumed := range []bool{false, true} {
		t.Run(fmt.Sprintf("resumed=%v", resumed), func(t *testing.T) { checkRetries(t, resumed) })
	}
}

func checkRetries(t *testing.T, resumed bool) {
	var mu sync.Mutex
	asked := map[string]int{}
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"retry.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			mu.Lock()
			asked[r.URL.Path]++
			n := asked[r.URL.Path]
			mu.Unlock()
			links := []string{"/flaky500", "/flakyreset", "/always502", "/gone", "/notimpl"}
			for i := range 30 {
				links = append(links, fmt.Sprintf("/p%d", i))
			}
			switch r.URL.Path {
			case "/":
				page(rw, links[5:]...) // the others are found on the pages it links
			case "/flaky500", "/flakyreset":
				if n > 1 {
					page(rw)
				} else if r.URL.Path == "/flaky500" {
					http.Error(rw, "busy", http.StatusInternalServerError)
				} else if conn, _, err := http.NewResponseController(rw).Hijack(); err == nil {
					conn.Close() // the connection breaks before an answer
				}
			case "/always502":
				http.Error(rw, "no backend", http.StatusBadGateway)
			case "/notimpl":
				http.Error(rw, "no", http.StatusNotImplemented)
			case "/gone", "/robots.txt":
				http.NotFound(rw, r)
			default:
				// Every page links every other, as a site's navigation
				// does: the URLs that fail are found again before and
				// after they fail, and queued again as their rank rises.
				page(rw, links...)
			}
		},
	})
	cfg := mw.config(t, 0, mw.url("retry.test", "/"))
	cfg.NoSitemaps = true
	retried, left := int64(0), int64(0)
	if resumed {
		cfg.MaxPages = 5 // the home page, p0 and the three that fail
		sum := runCrawl(t, cfg)
		if sum.StoppedBy != "max-pages" {
			t.Fatalf("the first run stopped by %s", sum.StoppedBy)
		}
		retried, left = sum.Retried, int64(sum.Queued)
		cfg.MaxPages = 0
	}
	sum := runCrawl(t, cfg)
	retried += sum.Retried
	// The second tries left queued are URLs, not copies of one.
	if resumed && (sum.ResumedQueue != left || left == 0) {
		t.Errorf("the first run left %d URLs queued, the second found %d", left, sum.ResumedQueue)
	}
	mu.Lock()
	defer mu.Unlock()
	for path, want := range map[string]int{"/flaky500": 2, "/flakyreset": 2, "/always502": 2, "/gone": 1, "/notimpl": 1, "/p0": 1} {
		if asked[path] != want {
			t.Errorf("%s asked for %d times, want %d", path, asked[path], want)
		}
	}
	// Each second try is queued anew, not first on its host: another
	// URL comes between.
	paths := mw.paths("retry.test")
	for i, p := range paths[1:] {
		if p == paths[i] {
			t.Errorf("%s asked for twice in a row: %v", p, paths)
		}
	}
	if retried != 3 || sum.StoppedBy != "drained" {
		t.Errorf("stopped by %s with %d URLs retried; want drained, 3", sum.StoppedBy, retried)
	}
	last := map[string]int{}
	for _, r := range readFetchLog(t, cfg.DataDir) {
		last[r.URL] = r.Status
	}
	for path, want := range map[string]int{"/flaky500": 200, "/flakyreset": 200, "/always502": 502} {
		if got := last[mw.url("retry.test", path)]; got != want {
			t.Errorf("%s: last fetch %d, want %d", path, got, want)
		}
	}
}

// TestRetryLeftQueuedIsDeferred: a crawl that ends with a URL's second
// try still queued, its host asking for an hour, lists it among the URLs
// it leaves for the next run, once. When pages of another host link the
// URL that failed (a broken connection) while it waits, its rank rises:
// it is still asked for twice in all, and no URL is listed twice. (Once,
// copies of it were queued again as its rank rose after it failed, and
// went before its host's other URLs.)
func TestRetryLeftQueuedIsDeferred(t *testing.T) {
	for _, linked := range []bool{false, true} {
		t.Run(fmt.Sprintf("linked=%v", linked), func(t *testing.T) { checkRetryDeferred(t, linked) })
	}
}

func checkRetryDeferred(t *testing.T, linked bool) {
	var mw *miniWeb
	mw = newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"links.test": linkingSite(&mw, 40, "later.test", "/x"),
		"later.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				page(rw, "/x", "/y")
			case "/x":
				if !linked {
					http.Error(rw, "busy", http.StatusInternalServerError)
				} else if conn, _, err := http.NewResponseController(rw).Hijack(); err == nil {
					conn.Close() // the connection breaks before an answer
				}
			case "/y":
				rw.Header().Set("Retry-After", "3600")
				http.Error(rw, "later", http.StatusTooManyRequests)
			default:
				http.NotFound(rw, r)
			}
		},
	})
	cfg := mw.config(t, 0, mw.url("later.test", "/"))
	cfg.NoSitemaps = true
	if linked {
		cfg.Seeds = append(cfg.Seeds, mw.url("links.test", "/"))
	}
	sum := runCrawl(t, cfg)
	var listed []string
	for _, r := range readFetchLog(t, cfg.DataDir) {
		if r.Outcome == fetchlog.OutcomeDeferred {
			listed = append(listed, r.URL)
		}
	}
	slices.Sort(listed)
	x, y := mw.url("later.test", "/x"), mw.url("later.test", "/y")
	if linked {
		asked := 0
		for _, p := range mw.paths("later.test") {
			if p == "/x" {
				asked++
			}
		}
		t.Logf("%d URLs queued again as their rank rose; deferred %v", sum.Requeued, listed)
		if asked > 2 {
			t.Errorf("/x asked for %d times, %d copies queued again; want twice at most", asked, sum.Requeued)
		}
		if len(slices.Compact(slices.Clone(listed))) != len(listed) || int(sum.Deferred) != len(listed) || !slices.Contains(listed, y) {
			t.Errorf("deferred %d, listed %v; want each URL once, /y among them", sum.Deferred, listed)
		}
		return
	}
	if sum.StoppedBy != "deferred" || sum.Retried != 1 || sum.Deferred != 2 || sum.Queued != 2 {
		t.Errorf("stopped by %s, %d retried, %d deferred, %d left queued; want deferred, /x tried again later and /y, both left",
			sum.StoppedBy, sum.Retried, sum.Deferred, sum.Queued)
	}
	if want := []string{x, y}; !slices.Equal(listed, want) {
		t.Errorf("fetch log's deferred lines: %v, want %v", listed, want)
	}
}

// TestBrokenPagesDoNotParkTheirHost: a site with as many broken pages
// (always a 500) as good ones, more than --give-up-after of each, is
// crawled whole, at the default failure rules: the second tries come
// last and in a row, and their 500s, which say the pages are broken
// rather than the server, neither park nor give up the host; nor do the
// first tries, each of which an answer takes back (the host was once
// given up at its twentieth broken page, with a third of its good ones
// unasked).
func TestBrokenPagesDoNotParkTheirHost(t *testing.T) {
	const each = 25
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"broken.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			var links []string
			for i := range each {
				links = append(links, fmt.Sprintf("/good%d", i), fmt.Sprintf("/bad%d", i))
			}
			switch {
			case r.URL.Path == "/":
				page(rw, links...)
			case strings.HasPrefix(r.URL.Path, "/bad"):
				http.Error(rw, "broken", http.StatusInternalServerError)
			case strings.HasPrefix(r.URL.Path, "/good"):
				page(rw)
			default:
				http.NotFound(rw, r)
			}
		},
	})
	cfg := mw.config(t, 0, mw.url("broken.test", "/"))
	cfg.NoSitemaps = true
	cfg.Politeness.ParkFor = 2 * time.Second // a park would cost the test this, not a minute
	sum := runCrawl(t, cfg)
	bad := 0
	for _, p := range mw.paths("broken.test") {
		if strings.HasPrefix(p, "/bad") {
			bad++
		}
	}
	if sum.StoppedBy != "drained" || sum.Parks != 0 || sum.GaveUp != 0 || sum.Pages != 3*each+1 || bad != 2*each {
		t.Errorf("stopped by %s, %d parks, %d given up, %d pages, broken pages asked for %d times; want drained, none, none, %d, %d",
			sum.StoppedBy, sum.Parks, sum.GaveUp, sum.Pages, bad, 3*each+1, 2*each)
	}
}

// TestBrokenConnectionsAreTriedAgainLast: a site of which one page in
// four closes the connection unanswered, every page linking every other,
// as a site's navigation does. Each failing URL is asked for a second
// time only once every other page has been asked for, though the links
// to it go on raising its rank (a copy queued as its rank rose once went
// before the host's other pages, failed again, and doubled the host's
// backoff each time), and the host, which answers most requests, is not
// given up.
func TestBrokenConnectionsAreTriedAgainLast(t *testing.T) {
	const pages = 40
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"reset.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			var links []string
			for i := range pages {
				links = append(links, fmt.Sprintf("/p%d", i))
			}
			var n int
			switch _, err := fmt.Sscanf(r.URL.Path, "/p%d", &n); {
			case r.URL.Path == "/":
				page(rw, links...)
			case err != nil:
				http.NotFound(rw, r)
			case n%4 == 0:
				if conn, _, err := http.NewResponseController(rw).Hijack(); err == nil {
					conn.Close() // the connection breaks before an answer
				}
			default:
				page(rw, links...)
			}
		},
	})
	cfg := mw.config(t, 0, mw.url("reset.test", "/"))
	cfg.NoSitemaps = true
	cfg.Politeness.MinBackoff = 10 * time.Millisecond // the strain backoff, at this scale
	cfg.Politeness.ParkFor = 100 * time.Millisecond
	cfg.Politeness.MaxBackoff = 200 * time.Millisecond
	// Fewer than the pages that break, but more than their second tries,
	// which come in a row at the end.
	cfg.Politeness.GiveUpAfter = 12
	sum := runCrawl(t, cfg)
	asked, lastFirst, firstAgain := map[string]int{}, -1, -1
	for i, p := range mw.paths("reset.test") {
		if asked[p]++; asked[p] == 1 {
			lastFirst = i
		} else if firstAgain < 0 {
			firstAgain = i
		}
	}
	t.Logf("requests: %v", mw.paths("reset.test"))
	if firstAgain >= 0 && firstAgain < lastFirst {
		t.Errorf("a URL asked for again at request %d, before the last first request (%d)", firstAgain, lastFirst)
	}
	for i := range pages {
		p := fmt.Sprintf("/p%d", i)
		want := 1
		if i%4 == 0 {
			want = 2
		}
		if asked[p] != want {
			t.Errorf("%s asked for %d times, want %d", p, asked[p], want)
		}
	}
	if sum.GaveUp != 0 || sum.Pages != pages-pages/4+1 {
		t.Errorf("%d hosts given up, %d pages; want none, %d", sum.GaveUp, sum.Pages, pages-pages/4+1)
	}
}

// TestPagesUnavailableForEver: a site three of whose pages, one after
// another in its order, answer 503 (or 429), with no Retry-After, to every
// request, while the others answer. Each is put aside and asked for a
// second time only after every other page; then it waits first on its
// host, as a 429 or 503 does, until the crawl stops waiting for the host
// and leaves it queued for the next run, the host not given up. (Once, a
// 503 kept its URL first on its host whatever the host's other pages did:
// the page was asked again and again with a doubling backoff, the host
// parked, and the crawl ended with most of the site unasked; later, a
// 429 after another was kept first, with the same end.) A server that
// answers 503 (or 429) to everything is backed off and given up (or
// deferred), every page but one asked for twice at most.
func TestPagesUnavailableForEver(t *testing.T) {
	const pages = 30
	broken := func(p string) bool { return p == "/p3" || p == "/p4" || p == "/p5" }
	for _, tc := range []struct {
		status int
		down   bool
	}{{503, false}, {503, true}, {429, false}, {429, true}} {
		down := tc.down
		t.Run(fmt.Sprintf("%d/server-down=%v", tc.status, down), func(t *testing.T) {
			mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
				"u.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
					switch {
					case r.URL.Path == "/robots.txt":
						http.NotFound(rw, r)
					case r.URL.Path == "/":
						page(rw, numbered("/p", pages)...)
					case broken(r.URL.Path) || down:
						http.Error(rw, "not now", tc.status)
					default:
						page(rw, numbered("/p", pages)...)
					}
				},
			})
			cfg := mw.config(t, 0, mw.url("u.test", "/"))
			cfg.NoSitemaps = true
			cfg.Politeness.MinBackoff = 10 * time.Millisecond
			cfg.Politeness.MaxBackoff = 100 * time.Millisecond
			cfg.Politeness.ParkFor = 100 * time.Millisecond
			cfg.FailureWait = time.Second
			sum := runCrawl(t, cfg)
			paths := mw.paths("u.test")
			t.Logf("stopped by %s, %d given up, %d left queued; requests: %v", sum.StoppedBy, sum.GaveUp, sum.Queued, paths)
			asked, lastFirst, again := map[string]int{}, 0, -1
			for i, p := range paths {
				switch asked[p]++; {
				case asked[p] == 1 && !broken(p):
					lastFirst = i
				case asked[p] == 2 && again < 0:
					again = i
				}
			}
			many := 0
			for _, n := range asked {
				if n > 2 {
					many++
				}
			}
			if down {
				// Given up, or deferred first by the failure wait: which
				// comes first is the machine's pace.
				if sum.GaveUp != 1 && sum.StoppedBy != "deferred" || many > 1 {
					t.Errorf("stopped by %s, %d given up, %d pages asked for more than twice; want the host given up or deferred, one page at most",
						sum.StoppedBy, sum.GaveUp, many)
				}
				return
			}
			if sum.StoppedBy != "deferred" || sum.GaveUp != 0 || len(asked) != pages+2 || again < lastFirst || sum.Queued != 3 {
				t.Errorf("stopped by %s, %d given up; %d paths asked, a second request at %d (the last good page's first at %d), %d left queued; want deferred, none; all %d, after, the 3 broken pages",
					sum.StoppedBy, sum.GaveUp, len(asked), again, lastFirst, sum.Queued, pages+2)
			}
		})
	}
}

// TestRateLimitedHostLosesNoPage: a host that answers 429, without
// Retry-After, any request that comes within 60 ms of the last one it
// answered, as a rate limiter does. Each page is had in the end: a 429
// after an answer puts its URL aside until the rest is asked, and then
// it waits first on its host, to be asked again once the backoff allows,
// never dropped. (A URL sent back as a 500's is, once, lost 8 of 31.)
func TestRateLimitedHostLosesNoPage(t *testing.T) {
	const pages = 30
	var mu sync.Mutex
	var last time.Time
	answered := map[string]bool{}
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"limit.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			mu.Lock()
			now := time.Now()
			limited := !last.IsZero() && now.Sub(last) < 60*time.Millisecond
			if !limited {
				last = now
				answered[r.URL.Path] = true
			}
			mu.Unlock()
			if limited {
				http.Error(rw, "slow down", http.StatusTooManyRequests)
				return
			}
			var links []string
			for i := range pages {
				links = append(links, fmt.Sprintf("/p%d", i))
			}
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			page(rw, links...)
		},
	})
	cfg := mw.config(t, 0, mw.url("limit.test", "/"))
	cfg.NoSitemaps = true
	cfg.Politeness.MinBackoff = 10 * time.Millisecond
	cfg.Politeness.MaxBackoff = 200 * time.Millisecond
	sum := runCrawl(t, cfg)
	mu.Lock()
	defer mu.Unlock()
	delete(answered, "/robots.txt")
	t.Logf("%d requests, %d 429s", len(mw.paths("limit.test")), sum.Throttled)
	if len(answered) != pages+1 || sum.GaveUp != 0 || sum.StoppedBy != "drained" {
		t.Errorf("%d pages answered, %d hosts given up, stopped by %s; want all %d, none, drained", len(answered), sum.GaveUp, sum.StoppedBy, pages+1)
	}
}

// TestCopyFailingBeforeItsFirstEntry: a URL linked from many pages of
// another host is queued again as its rank rises, and a copy of it is
// leased before its first entry; that copy gets a 500, and the first
// entry, still queued, is its second try, which gets a 429 asking for an
// hour. The crawl leaves it queued and names it once.
func TestCopyFailingBeforeItsFirstEntry(t *testing.T) {
	var mu sync.Mutex
	xAsked := 0
	var mw *miniWeb
	mw = newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"links.test": linkingSite(&mw, 20, "slow.test", "/x"),
		"slow.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				page(rw, "/a0", "/x")
			case "/x":
				mu.Lock()
				xAsked++
				first := xAsked == 1
				mu.Unlock()
				if first {
					http.Error(rw, "busy", http.StatusInternalServerError)
					return
				}
				rw.Header().Set("Retry-After", "3600")
				http.Error(rw, "later", http.StatusTooManyRequests)
			default:
				page(rw)
			}
		},
	})
	cfg := mw.config(t, 0, mw.url("slow.test", "/"), mw.url("links.test", "/"))
	cfg.NoSitemaps = true
	cfg.Delay = 150 * time.Millisecond // slow.test's /x waits while links.test's pages raise its rank
	sum := runCrawl(t, cfg)
	var listed []string
	for _, r := range readFetchLog(t, cfg.DataDir) {
		if r.Outcome == fetchlog.OutcomeDeferred {
			listed = append(listed, r.URL)
		}
	}
	t.Logf("requests %v, %d copies queued again, deferred %v", mw.paths("slow.test"), sum.Requeued, listed)
	if sum.StoppedBy != "deferred" || sum.Deferred != 1 || sum.Queued != 1 || len(listed) != 1 || listed[0] != mw.url("slow.test", "/x") {
		t.Errorf("stopped by %s, %d deferred, %d left queued, listed %v; want /x, once", sum.StoppedBy, sum.Deferred, sum.Queued, listed)
	}
	mu.Lock()
	defer mu.Unlock()
	if xAsked != 2 {
		t.Errorf("/x asked for %d times, want twice", xAsked)
	}
}

// linkingSite is a site whose home page links its pages, each of which
// links to path on host of the web *mw: their links raise that URL's rank.
func linkingSite(mw **miniWeb, pages int, host, path string) func(*miniWeb, http.ResponseWriter, *http.Request) {
	return func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
		var links []string
		for i := range pages {
			links = append(links, fmt.Sprintf("/p%d", i))
		}
		if r.URL.Path != "/" {
			links = []string{(*mw).url(host, path)}
		}
		page(rw, links...)
	}
}
