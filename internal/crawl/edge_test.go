package crawl

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/fetchlog"
)

// miniWeb serves a few hand-written hosts, each on its own loopback
// address, for the edge cases the synthetic web does not generate. It logs
// every request like synthweb does.
type miniWeb struct {
	auth    map[string]string // name -> "name:port"
	resolve map[string]string
	servers []*http.Server
	wg      sync.WaitGroup

	mu  sync.Mutex
	log []miniReq
}

type miniReq struct {
	host, path string
	start, end time.Time
}

// newMiniWeb starts one server per host name; handlers get the web so they
// can link to the other hosts by authority.
func newMiniWeb(t *testing.T, hosts map[string]func(w *miniWeb, rw http.ResponseWriter, r *http.Request)) *miniWeb {
	t.Helper()
	mw := &miniWeb{auth: map[string]string{}, resolve: map[string]string{}}
	names := make([]string, 0, len(hosts))
	for n := range hosts {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, name := range names {
		ip := fmt.Sprintf("127.0.3.%d", i+1)
		ln, err := net.Listen("tcp", ip+":0")
		if err != nil {
			t.Fatal(err)
		}
		mw.auth[name] = fmt.Sprintf("%s:%d", name, ln.Addr().(*net.TCPAddr).Port)
		mw.resolve[name] = ip
		h := hosts[name]
		srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			start := time.Now()
			h(mw, rw, r)
			mw.mu.Lock()
			mw.log = append(mw.log, miniReq{host: name, path: r.URL.RequestURI(), start: start, end: time.Now()})
			mw.mu.Unlock()
		})}
		mw.servers = append(mw.servers, srv)
		mw.wg.Go(func() { srv.Serve(ln) })
	}
	t.Cleanup(func() {
		for _, s := range mw.servers {
			s.Close()
		}
		mw.wg.Wait()
	})
	return mw
}

func (mw *miniWeb) url(host, path string) string { return "http://" + mw.auth[host] + path }

func (mw *miniWeb) requests(host string) []miniReq {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	var out []miniReq
	for _, r := range mw.log {
		if r.host == host {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b miniReq) int { return a.start.Compare(b.start) })
	return out
}

func (mw *miniWeb) paths(host string) []string {
	var out []string
	for _, r := range mw.requests(host) {
		out = append(out, r.path)
	}
	return out
}

// checkPolite fails on an overlap, a start-to-start gap below delay, or a
// first request that is not robots.txt, on any host.
func (mw *miniWeb) checkPolite(t *testing.T, delay time.Duration) {
	t.Helper()
	for name := range mw.auth {
		reqs := mw.requests(name)
		if len(reqs) > 0 && reqs[0].path != "/robots.txt" {
			t.Errorf("%s: first request %s, not /robots.txt", name, reqs[0].path)
		}
		for i := 1; i < len(reqs); i++ {
			if reqs[i].start.Before(reqs[i-1].end) {
				t.Errorf("%s: %s overlaps %s", name, reqs[i].path, reqs[i-1].path)
			}
			if gap := reqs[i].start.Sub(reqs[i-1].start); gap < delay {
				t.Errorf("%s: %s started %v after %s, want >= %v", name, reqs[i].path, gap, reqs[i-1].path, delay)
			}
		}
	}
}

func (mw *miniWeb) config(t *testing.T, delay time.Duration, seeds ...string) Config {
	cfg := bare(Config{
		Seeds:     seeds,
		DataDir:   t.TempDir(),
		Workers:   8,
		Delay:     delay,
		UserAgent: "weft/test (+https://example.org/weft-crawler)",
	})
	cfg.Fetch.Resolve, cfg.Fetch.Resolver = mw.resolve, offline{t}
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Fetch.ResponseHeaderTimeout = 3 * time.Second
	cfg.Fetch.Timeout = 10 * time.Second
	cfg.RobotsAttempts, cfg.RobotsRetryWait = 3, testRobotsWait
	// Most tests list the requests they expect; the sitemap tests turn
	// sitemaps on.
	cfg.NoSitemaps = true
	return cfg
}

// checkRobotsRetries checks that host was asked nothing but its robots.txt,
// which always fails, with the retries cfg asks for; it returns how many
// times.
func (mw *miniWeb) checkRobotsRetries(t *testing.T, host string, cfg Config) int {
	t.Helper()
	var starts []time.Time
	for _, r := range mw.requests(host) {
		if r.path != "/robots.txt" {
			t.Errorf("%s: requested %s; want only robots.txt", host, r.path)
		}
		starts = append(starts, r.start)
	}
	checkRobotsRetries(t, host, starts, cfg.RobotsAttempts, cfg.RobotsRetryWait, 0)
	return len(starts)
}

// pageSerial makes every page() body unique: pages with identical bodies
// are archived once and their links followed once (exact dedup), which the
// tests of other things must not trip over.
var pageSerial atomic.Int64

// numbered returns prefix0, prefix1, ... up to n of them: a page's links.
func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func page(rw http.ResponseWriter, links ...string) {
	rw.Header().Set("Content-Type", "text/html")
	var b strings.Builder
	fmt.Fprintf(&b, "<html><!-- %d --><body>", pageSerial.Add(1))
	for _, l := range links {
		fmt.Fprintf(&b, "<a href=%q>x</a>", l)
	}
	b.WriteString("</body></html>")
	rw.Write([]byte(b.String()))
}

func robotsFile(rw http.ResponseWriter, body string) {
	rw.Header().Set("Content-Type", "text/plain")
	rw.Write([]byte(body))
}

// A redirect to a variant of its own canonical URL (a session id the
// server insists on) is followed, and the page behind it crawled.
func TestRedirectToOwnVariantIsFollowed(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/robots.txt":
				http.NotFound(rw, r)
			case r.URL.Path == "/":
				page(rw, "/page")
			case r.URL.Path == "/page" && !strings.Contains(r.RequestURI, "jsessionid"):
				http.Redirect(rw, r, "/page;jsessionid=ABC123", http.StatusFound)
			case strings.HasPrefix(r.URL.Path, "/page"):
				page(rw, "/deep")
			default:
				page(rw)
			}
		},
	})
	runCrawl(t, mw.config(t, 10*time.Millisecond, mw.url("a.test", "/")))
	want := []string{"/robots.txt", "/", "/page", "/page;jsessionid=ABC123", "/deep"}
	if got := mw.paths("a.test"); !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
}

// seedRedirectWeb is a seed host a.test that redirects everything to
// www.b.test, whose home page links to /next.
func seedRedirectWeb(t *testing.T) *miniWeb {
	return newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			http.Redirect(rw, r, w.url("www.b.test", "/"), http.StatusMovedPermanently)
		},
		"www.b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			page(rw, "/next")
		},
	})
}

// A seed that redirects to another host (a domain to its www host, http to
// https) carries the scope with it.
func TestSeedRedirectWidensScope(t *testing.T) {
	mw := seedRedirectWeb(t)
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	cfg.Scope.Mode = "host"
	runCrawl(t, cfg)
	if got := mw.paths("www.b.test"); !slices.Contains(got, "/next") {
		t.Errorf("www.b.test requests %v; the seed's redirect target should be in scope", got)
	}
}

// A seed's redirect widens the scope, and a restart must remember that: the
// redirect itself is done and will not be fetched again.
func TestSeedRedirectScopeSurvivesRestart(t *testing.T) {
	mw := seedRedirectWeb(t)
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	cfg.Scope.Mode = "host"
	cfg.MaxPages = 1 // stop after the seed's redirect: www.b.test/ stays queued
	if sum := runCrawl(t, cfg); sum.StoppedBy != "max-pages" {
		t.Fatalf("first run %s", sum.StoppedBy)
	}
	cfg.MaxPages = 0
	if sum := runCrawl(t, cfg); !sum.Resumed {
		t.Fatal("second run did not resume")
	}
	if got := mw.paths("www.b.test"); !slices.Contains(got, "/next") {
		t.Errorf("www.b.test requests %v: after the restart its links fell out of scope", got)
	}
}

// Exact dedup stores a payload once but loses no link: a copy whose first
// capture was not parsed for links (a robots.txt, a nofollow page) is
// parsed itself. A copy of a page whose links were followed is not.
func TestDedupLosesNoLinks(t *testing.T) {
	const shell = `<html><body><p>app shell</p><a href="/app/1">go</a></body></html>`
	const nofollowed = `<html><body><p>shared body</p><a href="/z">z</a></body></html>`
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		// A catch-all server: robots.txt too is the app shell.
		"spa.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html")
			rw.Write([]byte(shell))
		},
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/nf", "/ok", "/copy1", "/copy2")
			case "/nf":
				rw.Header().Set("X-Robots-Tag", "nofollow")
				rw.Header().Set("Content-Type", "text/html")
				rw.Write([]byte(nofollowed))
			case "/ok":
				rw.Header().Set("Content-Type", "text/html")
				rw.Write([]byte(nofollowed))
			case "/copy1", "/copy2":
				rw.Header().Set("Content-Type", "text/html")
				rw.Write([]byte(`<html><body><a href="/only-from-copies">x</a></body></html>`))
			default:
				page(rw)
			}
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("spa.test", "/"), mw.url("b.test", "/"))
	cfg.Workers = 1 // /nf is fetched before /ok
	sum := runCrawl(t, cfg)
	if got := mw.paths("spa.test"); !slices.Contains(got, "/app/1") {
		t.Errorf("spa.test requests %v; the shell's link was lost to dedup against robots.txt", got)
	}
	got := mw.paths("b.test")
	if !slices.Contains(got, "/z") {
		t.Errorf("b.test requests %v; /ok's link was lost to dedup against the nofollow /nf", got)
	}
	if n := strings.Count(strings.Join(got, " "), "/only-from-copies"); n != 1 {
		t.Errorf("b.test requests %v; want /only-from-copies once", got)
	}
	// spa.test: / and /app/1 are copies of robots.txt; b.test: /ok of /nf
	// and /copy2 of /copy1.
	if sum.Revisits != 4 {
		t.Errorf("%d revisits, want 4", sum.Revisits)
	}
}

// After a power loss, the store can name as a payload's first capture a
// WARC record whose file tail never reached the disk. Recovery cuts the
// tail; a later copy of that payload must then be archived whole, not as a
// revisit of a record that is gone.
func TestDigestOfALostRecordIsNotReferredTo(t *testing.T) {
	const body = `<html><body><p>the same bytes at two URLs</p></body></html>`
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/one")
			default:
				rw.Header().Set("Content-Type", "text/html")
				rw.Write([]byte(body))
			}
		},
	})
	cfg := mw.config(t, 5*time.Millisecond, mw.url("a.test", "/"))
	sum := runCrawl(t, cfg)
	// Cut the file just before /one's response, as recovery would after
	// its tail was lost, and leave it ".open".
	var one fetchlog.Record
	for _, r := range readFetchLog(t, cfg.DataDir) {
		if strings.HasSuffix(r.URL, "/one") {
			one = r
		}
	}
	if one.WARCFile == "" || len(sum.WARCFiles) != 1 {
		t.Fatalf("no WARC record of /one: %+v, files %v", one, sum.WARCFiles)
	}
	path := filepath.Join(cfg.DataDir, "warc", one.WARCFile)
	if err := os.Truncate(path, one.WARCOffset); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".open"); err != nil {
		t.Fatal(err)
	}
	cfg.Seeds = append(cfg.Seeds, mw.url("a.test", "/two"))
	sum = runCrawl(t, cfg)
	if sum.Revisits != 0 || sum.Pages != 1 {
		t.Errorf("after recovery: %d pages, %d revisits; want /two archived whole", sum.Pages, sum.Revisits)
	}
}

// TestNearDupLosesNoLinks is TestDedupLosesNoLinks for near-duplicates: a
// page is flagged a copy only of a page whose links were followed at its
// depth or shallower, so a nofollow page's near-copy is read for links,
// and the copy of a followed page is flagged and its links dropped.
func TestNearDupLosesNoLinks(t *testing.T) {
	story := strings.Repeat("the quick brown fox jumps over the lazy dog while seven wizards quietly judge boxing matches ", 8)
	article := func(rw http.ResponseWriter, extra, link string) {
		rw.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(rw, `<html><body><p>%s %s</p><a href=%q>more</a></body></html>`, story, extra, link)
	}
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/nf", "/ok", "/copy")
			case "/nf":
				rw.Header().Set("X-Robots-Tag", "nofollow")
				article(rw, "first edition", "/from-nf")
			case "/ok":
				article(rw, "second edition", "/from-ok")
			case "/copy":
				article(rw, "third edition", "/from-copy")
			default:
				page(rw)
			}
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("b.test", "/"))
	cfg.Workers = 1 // in link order: /nf, /ok, /copy
	sum := runCrawl(t, cfg)
	got := mw.paths("b.test")
	if !slices.Contains(got, "/from-ok") {
		t.Errorf("b.test requests %v; /ok's link was lost to its nofollow near-copy /nf", got)
	}
	if slices.Contains(got, "/from-nf") || slices.Contains(got, "/from-copy") {
		t.Errorf("b.test requests %v; a nofollow link or a near-duplicate's link was followed", got)
	}
	if sum.NearDups != 1 {
		t.Errorf("%d near-duplicates, want /copy alone", sum.NearDups)
	}
}
