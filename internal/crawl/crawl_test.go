package crawl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		runCrashChild() // exits
	}
	goleak.VerifyTestMain(m)
}

// bare turns off, where cfg leaves them to their defaults, the settings a
// crawl has by default that the tests were written without, each counting
// what a bare crawl does: a delay (zero here is no gap), requisites,
// rendering, the depth and per-host caps.
func bare(cfg Config) Config {
	if cfg.Delay == 0 {
		cfg.Delay = -1
	}
	cfg.NoRequisites = true
	if cfg.Render.Mode == "" {
		cfg.Render.Mode = RenderNever
	}
	if cfg.Scope.MaxDepth == 0 {
		cfg.Scope.MaxDepth = -1
	}
	if cfg.MaxURLsPerHost == 0 {
		cfg.MaxURLsPerHost = -1
	}
	return cfg
}

// hostileHost is web's host of the hostile or trap kind.
func hostileHost(t testing.TB, web *synthweb.Web, kind string) synthweb.HostInfo {
	t.Helper()
	for _, h := range web.Hosts() {
		if h.Hostile == kind {
			return h
		}
	}
	t.Fatalf("no %s host in the web", kind)
	return synthweb.HostInfo{}
}

// offline is the resolver of the tests' crawls. Every name a test serves
// is pinned to a loopback address (Config.Fetch.Resolve), so any other is
// answered "no such host" without a query leaving the machine; and a
// name that is not one reserved for tests (.test, .invalid, .example,
// localhost: RFC 2606 and 6761) fails the test, as the crawl tried to
// reach the world (a sitemap's namespace, http://www.sitemaps.org/...,
// taken for a link, say).
type offline struct{ t testing.TB }

func (o offline) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	reserved := name == "localhost"
	for _, tld := range []string{".test", ".invalid", ".example", ".localhost"} {
		reserved = reserved || strings.HasSuffix(name, tld)
	}
	if !reserved {
		o.t.Errorf("the crawl looked up %q, a name outside the test's loopback web", host)
	}
	return nil, &net.DNSError{Err: "no such host (the tests' offline resolver)", Name: host, IsNotFound: true}
}

// errorsTB keeps what is reported to it as errors.
type errorsTB struct {
	testing.TB
	errs []string
}

func (e *errorsTB) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// The tests' resolver answers every name "no such host", and fails the
// test for a name not reserved for tests.
func TestOfflineResolverRefusesTheWorld(t *testing.T) {
	tb := &errorsTB{TB: t}
	for _, name := range []string{"h001.weft.test", "nowhere.invalid", "a.example", "localhost", "www.sitemaps.org", "example.com."} {
		var de *net.DNSError
		if _, err := (offline{tb}).LookupNetIP(t.Context(), "ip", name); !errors.As(err, &de) || !de.IsNotFound {
			t.Errorf("%s: %v, want a DNS error, not found", name, err)
		}
	}
	if len(tb.errs) != 2 || !strings.Contains(tb.errs[0], "www.sitemaps.org") || !strings.Contains(tb.errs[1], "example.com") {
		t.Errorf("errors %q, want www.sitemaps.org's and example.com's", tb.errs)
	}
}

// testConfig is a bare crawl of web with test-sized timeouts.
func testConfig(t testing.TB, web *synthweb.Web, workers int, delay time.Duration) Config {
	cfg := bare(Config{
		Seeds:     web.Seeds(),
		DataDir:   t.TempDir(),
		Workers:   workers,
		Delay:     delay,
		UserAgent: "weft/test (+https://example.org/weft-crawler)",
	})
	cfg.Fetch.Resolve, cfg.Fetch.Resolver = web.Resolve(), offline{t}
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	// Generous enough for a loaded CI machine under -race: a timeout here
	// makes a host look down, which the tests would rightly call a bug.
	cfg.Fetch.ResponseHeaderTimeout = 3 * time.Second
	cfg.Fetch.IdleTimeout = 3 * time.Second
	cfg.Fetch.Timeout = 10 * time.Second
	// The web's failing robots.txt answers 503 with Retry-After: 3600 or
	// never: retry it twice, soon, so that a test ends in seconds.
	cfg.RobotsAttempts, cfg.RobotsRetryWait = 2, testRobotsWait
	cfg.Politeness.MaxRetryAfter = testRetryAfterCap
	// Most tests count the requests they expect; the acceptance crawl and
	// the sitemap tests turn sitemaps on.
	cfg.NoSitemaps = true
	return cfg
}

// The robots.txt retry wait and the Retry-After cap of testConfig.
const (
	testRobotsWait    = 100 * time.Millisecond
	testRetryAfterCap = 300 * time.Millisecond
)

func startWeb(t *testing.T, cfg synthweb.Config) *synthweb.Web {
	t.Helper()
	web, err := synthweb.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	return web
}

func runCrawl(t *testing.T, cfg Config) Summary {
	t.Helper()
	_, sum := runCrawler(t, cfg)
	return sum
}

// runCrawlWithin is runCrawl under a deadline d: a crawl that should end
// by itself and does not is cut there, and ends "interrupted".
func runCrawlWithin(t *testing.T, cfg Config, d time.Duration) Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	_, sum := runCrawlerCtx(t, ctx, cfg)
	return sum
}

// runCrawler is runCrawl for a test that looks into the Crawler after.
func runCrawler(t *testing.T, cfg Config) (*Crawler, Summary) {
	t.Helper()
	return runCrawlerCtx(t, t.Context(), cfg)
}

// runCrawlerCtx is runCrawler until ctx is done.
func runCrawlerCtx(t *testing.T, ctx context.Context, cfg Config) (*Crawler, Summary) {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c, sum
}

// running is a crawl started in the background by startCrawl.
type running struct {
	*Crawler
	cancel context.CancelFunc
	done   chan struct{}
	sum    Summary
	err    error
}

// startCrawl runs a crawl of cfg in the background, for a test that
// watches it run (a continuous crawl, which does not end by itself);
// stop ends it. The test's cleanup stops it if the test did not.
func startCrawl(t *testing.T, cfg Config) *running {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	r := &running{Crawler: c, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.sum, r.err = c.Run(ctx)
	}()
	t.Cleanup(func() { r.stop() })
	return r
}

// stop cancels the crawl, and returns what Run returned once it has.
func (r *running) stop() (Summary, error) {
	r.cancel()
	<-r.done
	return r.sum, r.err
}

func TestMaxPagesStopsTheCrawl(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 3, Hosts: 10, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30})
	cfg := testConfig(t, web, 8, 0)
	cfg.MaxPages = 25
	sum := runCrawl(t, cfg)
	if sum.StoppedBy != "max-pages" {
		t.Errorf("stopped by %q, want max-pages", sum.StoppedBy)
	}
	if sum.Pages != 25 {
		t.Errorf("%d pages fetched, want exactly 25", sum.Pages)
	}
}

func TestDepthAndScope(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 5, Hosts: 8, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30})
	cfg := testConfig(t, web, 8, 0)
	cfg.Seeds = web.Seeds()[:1]
	cfg.Scope.Mode = "host"
	cfg.Scope.MaxDepth = 1
	sum := runCrawl(t, cfg)
	seedHost := strings.SplitN(strings.TrimPrefix(cfg.Seeds[0], "http://"), "/", 2)[0]
	for _, r := range readFetchLog(t, cfg.DataDir) {
		if r.Host != seedHost {
			t.Errorf("fetched %s outside the seed's host", r.URL)
		}
		if r.Depth > 1 {
			t.Errorf("fetched %s at depth %d, limit 1", r.URL, r.Depth)
		}
	}
	if sum.Rejected[judge.Scope] == 0 || sum.Rejected[judge.Depth] == 0 {
		t.Errorf("rejections %v; want scope and depth rejections counted", sum.Rejected)
	}
}

// TestDepthIsTheShortestWayIn: a page first found deep, at the end of a
// chain the importance order follows first, and found again nearer the
// seed before it is fetched, is fetched at the lesser depth: its own
// link, which the depth limit refused at the first depth, is followed.
// The fetch log gives each page its shortest depth.
func TestDepthIsTheShortestWayIn(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"d.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/chain1", "/hub")
			case "/chain1": // one link: the chain gathers the cash, and is followed first
				page(rw, "/chain2")
			case "/chain2": // depth 2: /x at depth 3, among many
				page(rw, append([]string{"/x"}, numbered("/a", 40)...)...)
			case "/hub": // depth 1, fetched after the chain: /x at depth 2
				page(rw, append([]string{"/x"}, numbered("/b", 40)...)...)
			case "/x":
				page(rw, "/y")
			default:
				page(rw)
			}
		},
	})
	cfg := mw.config(t, 0, mw.url("d.test", "/"))
	cfg.NoSitemaps = true
	cfg.Scope.MaxDepth = 3
	runCrawl(t, cfg)
	depth := map[string]int{}
	for _, r := range readFetchLog(t, cfg.DataDir) {
		depth[strings.TrimPrefix(r.URL, mw.url("d.test", ""))] = r.Depth
	}
	t.Logf("requests: %v", mw.paths("d.test"))
	if d, ok := depth["/y"]; !ok || depth["/x"] != 2 || d != 3 {
		t.Errorf("/x fetched at depth %d, /y at %d (fetched: %v); want 2 and 3", depth["/x"], d, ok)
	}
}

func TestInterruptReturnsSummary(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 9, Hosts: 4, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30})
	cfg := testConfig(t, web, 4, 200*time.Millisecond)
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan Summary)
	go func() {
		sum, err := c.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- sum
	}()
	testwait.Eventually(t, time.Minute, "3 pages crawled", func() bool { return c.Progress().Pages >= 3 })
	cancel()
	sum := <-done
	if sum.StoppedBy != "interrupted" {
		t.Errorf("stopped by %q, want interrupted", sum.StoppedBy)
	}
	if sum.Queued == 0 {
		t.Errorf("nothing left queued after an early stop")
	}
	// The archive is closed and readable.
	for _, name := range sum.WARCFiles {
		readWARC(t, filepath.Join(cfg.DataDir, "warc", name))
	}
}

func TestBadConfigNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Seeds = []string{"http://[::1"} }, "http://[::1"},
		{func(c *Config) { c.Seeds = []string{"ftp://a.test/"} }, "ftp"},
		{func(c *Config) { c.UserAgent = "" }, "user agent"},
		{func(c *Config) { c.Grace = -time.Second }, "grace"},
		{func(c *Config) { c.Scope.Include = []string{"("} }, "include"},
	} {
		cfg := Config{Seeds: []string{"http://a.test/"}, DataDir: t.TempDir(), UserAgent: "weft/1"}
		tc.mod(&cfg)
		_, err := New(cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v; want one naming %q", err, tc.want)
		}
	}
}

func TestHostCapBoundsURLsPerHost(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 6, Hosts: 4, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	cfg := testConfig(t, web, 8, 0)
	cfg.MaxURLsPerHost = 5
	sum := runCrawl(t, cfg)
	perHost := map[string]int{} // URLs asked for: a server error's second try is no other URL
	for _, r := range synthweb.FirstTries(web.Log()) {
		if !isRobotsPath(r.Path) {
			perHost[r.Addr]++
		}
	}
	for addr, n := range perHost {
		if n > 5 {
			t.Errorf("%s: %d pages fetched, cap 5", addr, n)
		}
	}
	if sum.Rejected[judge.HostCap] == 0 {
		t.Errorf("rejections %v; want host-cap counted", sum.Rejected)
	}
}
