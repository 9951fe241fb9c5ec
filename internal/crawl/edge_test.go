package crawl

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
	cfg := Config{
		Seeds:     seeds,
		DataDir:   t.TempDir(),
		Workers:   8,
		Delay:     delay,
		UserAgent: "weft/test (+https://example.org/weft-crawler)",
	}
	cfg.Fetch.Resolve = mw.resolve
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

// A robots.txt that redirects to another host: the hop is that host's
// request, made under its clock after its own robots.txt, and the rules
// found there apply to the first host.
func TestRobotsRedirectToAnotherHost(t *testing.T) {
	const delay = 150 * time.Millisecond
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.Redirect(rw, r, w.url("b.test", "/rules-for-a.txt"), http.StatusMovedPermanently)
			case "/":
				page(rw, "/open", "/private/secret")
			default:
				page(rw)
			}
		},
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nDisallow: /nothing-here/\n")
			case "/rules-for-a.txt":
				robotsFile(rw, "User-agent: *\nDisallow: /private/\n")
			case "/":
				page(rw, "/b1", "/b2")
			default:
				page(rw)
			}
		},
	})
	sum := runCrawl(t, mw.config(t, delay, mw.url("a.test", "/"), mw.url("b.test", "/")))
	mw.checkPolite(t, delay)
	a := mw.paths("a.test")
	if slices.Contains(a, "/private/secret") {
		t.Errorf("a.test: fetched /private/secret, which the redirected robots.txt disallows (requests %v)", a)
	}
	if !slices.Contains(a, "/open") {
		t.Errorf("a.test: /open not fetched (requests %v)", a)
	}
	if b := mw.paths("b.test"); !slices.Contains(b, "/rules-for-a.txt") || len(b) != 5 {
		t.Errorf("b.test requests %v; want robots.txt, the hop for a.test, / and two pages", b)
	}
	if sum.RobotsHops != 1 || sum.Robots["rules"] != 2 {
		t.Errorf("robots %v, %d hops; want both hosts with rules, one hop", sum.Robots, sum.RobotsHops)
	}
}

// A robots.txt that redirects to a path its target host disallows: the hop
// is not made, and the first host is treated as unreachable.
func TestRobotsRedirectToDisallowedPath(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(rw, r, w.url("b.test", "/private/secret"), http.StatusFound)
				return
			}
			page(rw, "/x")
		},
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				robotsFile(rw, "User-agent: *\nDisallow: /private/\n")
				return
			}
			page(rw)
		},
	})
	cfg := mw.config(t, 50*time.Millisecond, mw.url("a.test", "/"))
	sum := runCrawl(t, cfg)
	mw.checkPolite(t, 50*time.Millisecond)
	mw.checkRobotsRetries(t, "a.test", cfg)
	if got := mw.paths("b.test"); slices.Contains(got, "/private/secret") {
		t.Errorf("b.test requests %v: the disallowed hop was fetched", got)
	}
	if sum.HostsDown["redirect-disallowed"] != 1 {
		t.Errorf("hosts down %v; want a.test counted as redirect-disallowed", sum.HostsDown)
	}
}

// Two hosts whose robots.txt files redirect to each other's pages must not
// wait on each other forever.
func TestRobotsRedirectCycleEnds(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(rw, r, w.url("b.test", "/r"), http.StatusFound)
				return
			}
			page(rw)
		},
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(rw, r, w.url("a.test", "/r"), http.StatusFound)
				return
			}
			page(rw)
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c, err := New(mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"), mw.url("b.test", "/")))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.StoppedBy != "drained" {
		t.Fatalf("crawl %s: a robots.txt redirect cycle hung it", sum.StoppedBy)
	}
	mw.checkPolite(t, 10*time.Millisecond)
}

// A link to the robots.txt of a host whose robots.txt failed must not
// probe it again as a page.
func TestLinkToRobotsTxtIsNotFetchedAsPage(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			page(rw, w.url("b.test", "/robots.txt"), w.url("b.test", "/"))
		},
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			http.Error(rw, "down", http.StatusServiceUnavailable)
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"), mw.url("b.test", "/"))
	runCrawl(t, cfg)
	mw.checkRobotsRetries(t, "b.test", cfg)
}

// A robots.txt whose gzip body is cut short could have lost its Disallow
// lines: the host is treated as unreachable, not crawled on partial rules.
func TestUndecodableRobotsTxtDisallowsAll(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte("User-agent: *\nAllow: /\n" + strings.Repeat("# padding line to push the rule out\n", 200) + "Disallow: /private/\n"))
	zw.Close()
	half := zipped.Bytes()[:zipped.Len()/2]
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				rw.Header().Set("Content-Encoding", "gzip")
				rw.Header().Set("Content-Type", "text/plain")
				rw.Write(half)
				return
			}
			page(rw, "/private/secret")
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	sum := runCrawl(t, cfg)
	n := mw.checkRobotsRetries(t, "a.test", cfg)
	if sum.Robots["disallow-all"] != int64(n) || len(sum.Robots) != 1 {
		t.Errorf("robots outcomes %v; want %d failures", sum.Robots, n)
	}
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

// Ctrl-C in the middle of a fetch is not the host's error.
func TestInterruptedFetchIsNotAnError(t *testing.T) {
	started := make(chan struct{}, 1)
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			select {
			case started <- struct{}{}:
			default:
			}
			<-r.Context().Done() // hang until the client gives up
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	cfg.Grace = 100 * time.Millisecond // then the hanging fetch is cut
	sum := runInterrupted(t, cfg, started)
	if sum.StoppedBy != "interrupted" || len(sum.Errors) != 0 {
		t.Errorf("stopped by %q with errors %v; want interrupted and no errors", sum.StoppedBy, sum.Errors)
	}
}

// runInterrupted runs a crawl and cancels its context when started fires.
func runInterrupted(t *testing.T, cfg Config, started <-chan struct{}) Summary {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		select {
		case <-started:
			cancel()
		case <-ctx.Done():
		}
	}()
	sum, err := c.Run(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	return sum
}

// A fetch in flight when the crawl is interrupted may finish within the
// grace period, and is archived like any other.
func TestInterruptLetsFetchesInFlightFinish(t *testing.T) {
	started := make(chan struct{}, 1)
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			select {
			case started <- struct{}{}:
			default:
			}
			time.Sleep(300 * time.Millisecond) // a slow page, still answered
			page(rw, "/next")
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	cfg.Grace = 5 * time.Second
	sum := runInterrupted(t, cfg, started)
	if sum.StoppedBy != "interrupted" || sum.Pages != 1 || sum.ByStatus["2xx"] != 1 {
		t.Fatalf("stopped by %q after %d pages (%v); want the page in flight finished", sum.StoppedBy, sum.Pages, sum.ByStatus)
	}
	if got := mw.paths("a.test"); slices.Contains(got, "/next") {
		t.Errorf("requests %v: a new lease was taken after the interrupt", got)
	}
	recs := 0
	for _, name := range sum.WARCFiles {
		for _, r := range readWARC(t, cfg.DataDir+"/warc/"+name) {
			if r.header.Get("WARC-Type") == "response" && strings.HasSuffix(r.header.Get("WARC-Target-URI"), "/") {
				recs++
			}
		}
	}
	if recs != 1 {
		t.Errorf("%d response records for the page finished in the grace period, want 1", recs)
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

// A host fetched just before a restart keeps its clock in the next run even
// with nothing left in its queue: a link to it found at once must wait.
func TestRestartKeepsClockOfHostWithNothingQueued(t *testing.T) {
	const crawlDelay = 2 * time.Second // a.test's; --delay is much shorter
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nCrawl-delay: 2\n")
			case "/":
				page(rw, w.url("b.test", "/"))
			default:
				page(rw)
			}
		},
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			page(rw, w.url("a.test", "/x"))
		},
	})
	cfg := mw.config(t, 50*time.Millisecond, mw.url("a.test", "/"))
	cfg.Scope.Mode = "any"
	cfg.MaxPages = 1 // a.test/ only; b.test/ stays queued, a.test has nothing left
	runCrawl(t, cfg)
	cfg.MaxPages = 0
	runCrawl(t, cfg) // b.test/ at once, and its link to a.test/x
	reqs := mw.requests("a.test")
	if len(reqs) < 3 {
		t.Fatalf("a.test requests %v; want the second run to reach it", mw.paths("a.test"))
	}
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].start.Sub(reqs[i-1].start); gap < crawlDelay {
			t.Errorf("a.test: %s started %v after %s, want >= its Crawl-delay %v", reqs[i].path, gap, reqs[i-1].path, crawlDelay)
		}
	}
}

// A restart reads each host's robots.txt answer from the store instead of
// asking the host again, and goes on obeying it.
func TestRestartKeepsRobots(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nDisallow: /private\n")
			case "/":
				page(rw, "/one", "/two", "/private/x")
			default:
				page(rw, "/private/y")
			}
		},
		"down.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			http.Error(rw, "down", http.StatusInternalServerError)
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"), mw.url("down.test", "/"), mw.url("down.test", "/b"))
	cfg.MaxPages = 1 // robots.txt of both hosts, a.test/ only; the rest stays queued
	if sum := runCrawl(t, cfg); sum.StoppedBy != "max-pages" {
		t.Fatalf("first run %s", sum.StoppedBy)
	}
	cfg.MaxPages = 0
	if sum := runCrawl(t, cfg); sum.StoppedBy != "drained" || !sum.Resumed {
		t.Fatalf("second run %s, resumed %v", sum.StoppedBy, sum.Resumed)
	}
	// down.test's 5xx is retried; its failures are counted across the
	// restart, so it is given up after as many attempts as in one run.
	if got := mw.paths("down.test"); len(got) != cfg.RobotsAttempts {
		t.Errorf("down.test requests %v; want robots.txt %d times in both runs", got, cfg.RobotsAttempts)
	}
	mw.checkRobotsRetries(t, "down.test", cfg)
	for host, want := range map[string][]string{
		"a.test": {"/robots.txt", "/", "/one", "/two"},
	} {
		got := mw.paths(host)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s requests %v, want %v", host, got, want)
		}
	}
}

// A robots.txt that fails twice and then answers: the host's URLs wait for
// it (none is lost), each retry after the wait, and its rules then apply.
func TestRobotsRetriedUntilItAnswers(t *testing.T) {
	var robotsAsked atomic.Int32
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				if robotsAsked.Add(1) <= 2 {
					http.Error(rw, "busy", http.StatusServiceUnavailable)
					return
				}
				robotsFile(rw, "User-agent: *\nDisallow: /private\n")
			case "/":
				page(rw, "/one", "/private/x")
			default:
				page(rw)
			}
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	cfg.Politeness.MinBackoff = 10 * time.Millisecond // a 503's backoff, which also holds the retry
	sum := runCrawl(t, cfg)
	mw.checkPolite(t, 10*time.Millisecond)
	want := []string{"/robots.txt", "/robots.txt", "/robots.txt", "/", "/one"}
	if got := mw.paths("a.test"); !slices.Equal(got, want) {
		t.Fatalf("a.test requests %v, want %v", got, want)
	}
	reqs := mw.requests("a.test")
	for k := 1; k <= 2; k++ {
		if gap, wait := reqs[k].start.Sub(reqs[k-1].start), cfg.RobotsRetryWait<<(k-1); gap < wait {
			t.Errorf("robots.txt attempt %d started %v after the one before; want at least %v", k+1, gap, wait)
		}
	}
	if sum.RobotsRetries != 2 || len(sum.HostsDown) != 0 {
		t.Errorf("%d robots.txt retries, hosts down %v; want 2 and none", sum.RobotsRetries, sum.HostsDown)
	}
}

// A robots.txt that answers once and then fails for good, while the crawl
// of its host goes on past the answer's TTL. By RFC 9309 the host is then
// completely disallowed and its remaining URLs dropped; with Google's rule
// (RobotsLastGood) the last good copy goes on being used, and obeyed.
func TestRobotsLastGoodCopy(t *testing.T) {
	const chain = 12
	run := func(t *testing.T, lastGood time.Duration) (*miniWeb, Summary) {
		var robotsAsked atomic.Int32
		mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
			"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					if robotsAsked.Add(1) == 1 {
						robotsFile(rw, "User-agent: *\nDisallow: /private\n")
						return
					}
					http.Error(rw, "down", http.StatusInternalServerError)
					return
				}
				// A chain of pages, each also linking a disallowed one.
				n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
				page(rw, fmt.Sprintf("/p/%d", n+1), fmt.Sprintf("/private/%d", n))
			},
		})
		cfg := mw.config(t, 50*time.Millisecond, mw.url("a.test", "/p/1"))
		cfg.Scope.MaxDepth = chain - 1 // /p/1 .. /p/chain
		cfg.RobotsTTL = 200 * time.Millisecond
		cfg.RobotsLastGood = lastGood
		sum := runCrawl(t, cfg)
		mw.checkPolite(t, 50*time.Millisecond)
		for _, p := range mw.paths("a.test") {
			if strings.HasPrefix(p, "/private") {
				t.Errorf("fetched %s, which the last good robots.txt disallows", p)
			}
		}
		return mw, sum
	}
	pages := func(mw *miniWeb) int {
		n := 0
		for _, p := range mw.paths("a.test") {
			if strings.HasPrefix(p, "/p/") {
				n++
			}
		}
		return n
	}
	t.Run("rfc", func(t *testing.T) {
		mw, sum := run(t, 0)
		if n := pages(mw); n >= chain {
			t.Errorf("%d of %d pages fetched; want the chain cut where robots.txt became unreachable", n, chain)
		}
		if sum.HostsDown["robots.txt 5xx"] != 1 || sum.RobotsLastGood != 0 {
			t.Errorf("hosts down %v, %d last-good uses; want a.test down", sum.HostsDown, sum.RobotsLastGood)
		}
	})
	t.Run("google", func(t *testing.T) {
		mw, sum := run(t, time.Hour)
		if n := pages(mw); n != chain {
			t.Errorf("%d of %d pages fetched; want all, by the last good copy", n, chain)
		}
		if sum.RobotsLastGood == 0 || len(sum.HostsDown) != 0 {
			t.Errorf("%d last-good uses, hosts down %v; want some and none", sum.RobotsLastGood, sum.HostsDown)
		}
	})
}

// Google's rule across a restart: the last good robots.txt, fetched by an
// earlier run, stands in for a file that now fails, so its body must have
// survived the failures recorded since.
func TestRobotsLastGoodSurvivesRestart(t *testing.T) {
	var robotsAsked atomic.Int32
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				if robotsAsked.Add(1) == 1 {
					robotsFile(rw, "User-agent: *\nDisallow: /private\n")
					return
				}
				http.Error(rw, "down", http.StatusInternalServerError)
			case "/":
				page(rw, "/one", "/two", "/private/x")
			default:
				page(rw, "/private/y")
			}
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	cfg.MaxPages = 1 // robots.txt and / only; /one and /two stay queued
	runCrawl(t, cfg)
	// The stored answer goes stale: fetched again, and failing three times,
	// the good copy is used for /one; the failures are stored.
	cfg.RobotsTTL = 50 * time.Millisecond
	cfg.RobotsLastGood = time.Hour
	time.Sleep(2 * cfg.RobotsTTL)
	first := runCrawl(t, cfg)
	// A third run reads the failures and the good copy from the store.
	cfg.MaxPages = 0
	sum := runCrawl(t, cfg)
	sum.RobotsLastGood += first.RobotsLastGood
	got := mw.paths("a.test")
	if len(got) < 7 || !slices.Equal(got[:5], []string{"/robots.txt", "/", "/robots.txt", "/robots.txt", "/robots.txt"}) ||
		!slices.Contains(got, "/one") || !slices.Contains(got, "/two") {
		t.Errorf("a.test requests %v; want robots.txt and / in the first run, then three failed robots.txt and /one and /two (after a restart) by the last good copy", got)
	}
	for _, p := range got {
		if strings.HasPrefix(p, "/private") {
			t.Errorf("fetched %s, which the last good robots.txt disallows", p)
		}
	}
	if sum.RobotsLastGood == 0 {
		t.Errorf("the last good copy was never used: %+v", sum)
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

// weft get --at picks the nearest capture even for a time centuries away,
// where time.Sub saturates.
func TestCloserDoesNotSaturate(t *testing.T) {
	early, late := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	far := time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)
	if !closer(late, early, far) || closer(early, late, far) {
		t.Error("for a far future time, the later capture is the closer")
	}
	past := time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC)
	if !closer(early, late, past) {
		t.Error("for a far past time, the earlier capture is the closer")
	}
}

// After a kill -9, the WARC file a capture names is still ".open": weft get
// reads it there.
func TestWarcPathFallsBackToOpen(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "warc"), 0o755); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "warc", "a.warc.gz.open")
	if err := os.WriteFile(open, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a := &Archive{dir: dir}
	if got := a.warcPath("a.warc.gz"); got != open {
		t.Errorf("warcPath = %s, want %s", got, open)
	}
	if got, want := a.warcPath("b.warc.gz"), filepath.Join(dir, "warc", "b.warc.gz"); got != want {
		t.Errorf("warcPath of a missing file = %s, want %s (for its error to name)", got, want)
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
	var one fetchRecord
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
