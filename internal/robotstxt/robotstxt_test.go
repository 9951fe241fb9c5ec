package robotstxt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/testwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "weft"

// web serves several hosts from one loopback server, by the Host header's
// name, and counts the requests per host and path.
type web struct {
	srv   *httptest.Server
	port  string
	mu    sync.Mutex
	hits  map[string]int // "host/path"
	hosts map[string]http.HandlerFunc
}

func newWeb(t *testing.T, hosts map[string]http.HandlerFunc) *web {
	w := &web{hits: map[string]int{}, hosts: hosts}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		name, _, _ := net.SplitHostPort(r.Host)
		w.mu.Lock()
		w.hits[name+r.URL.Path]++
		w.mu.Unlock()
		if h := w.hosts[name]; h != nil {
			h(rw, r)
			return
		}
		http.NotFound(rw, r)
	}))
	t.Cleanup(w.srv.Close)
	_, w.port, _ = net.SplitHostPort(w.srv.Listener.Addr().String())
	return w
}

// authority is name's host:port on the web's server.
func (w *web) authority(name string) string { return name + ":" + w.port }

func (w *web) url(name, path string) string { return "http://" + w.authority(name) + path }

func (w *web) requests(name, path string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hits[name+path]
}

// crawlSide is what Files is given of a crawl, recorded for the tests.
type crawlSide struct {
	mu       sync.Mutex
	added    []frontier.Item
	unparked []string
	lines    []fetchlog.Record
	archived int
	fetched  map[string]int
	failed   []error
}

func (s *crawlSide) Add(items ...frontier.Item) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.added = append(s.added, items...)
}

func (s *crawlSide) Unpark(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unparked = append(s.unparked, host)
}

func (s *crawlSide) Write(l fetchlog.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, l)
}

func (s *crawlSide) Archive(*fetch.Response, *archive.Staging, *canon.URL) (archive.Capture, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.archived++
	return archive.Capture{}, nil
}

func (s *crawlSide) Index(archive.Capture, *archive.Staging) error { return nil }

func (s *crawlSide) Fetched(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetched[host]++
}

func (s *crawlSide) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed = append(s.failed, err)
}

func (s *crawlSide) items() []frontier.Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.added)
}

func (s *crawlSide) wasUnparked(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.unparked, host)
}

// fixture is a Files over a web, with a store and a crawl side of its own.
type fixture struct {
	*Files
	web   *web
	side  *crawlSide
	db    *store.DB
	canon *canon.Canonicalizer
	cfg   Config
}

const parts = 4

func newFixture(t *testing.T, w *web, retry robots.Retry, runStart time.Time, cluster Cluster) *fixture {
	t.Helper()
	fetcher, err := fetch.New(fetch.Config{
		UserAgent:  "weft/test",
		Resolve:    map[string]string{"a.test": "127.0.0.1", "b.test": "127.0.0.1", "c.test": "127.0.0.1"},
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver:   noDNS{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fetcher.Close)
	db, err := store.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := &fixture{web: w, side: &crawlSide{fetched: map[string]int{}}, db: db, canon: canon.New(canon.Config{})}
	f.cfg = Config{
		Cache: NewCache(CacheConfig{Partitions: parts, Retry: retry, RunStart: runStart}), Token: token, DB: db, Partitions: parts,
		Fetcher: fetcher, Canon: f.canon, Frontier: f.side, Archive: f.side, FetchLog: f.side, Requests: f.side,
		Policies: policy.NewSet(policy.Limits{}), Cluster: cluster, Log: slog.New(slog.DiscardHandler), Fail: f.side.fail,
	}
	f.Files = New(f.cfg)
	return f
}

// noDNS refuses every name: a test's names are all pinned to loopback.
type noDNS struct{}

func (noDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, fmt.Errorf("no DNS in tests: %s", host)
}

// lease is a lease of the URL, as the frontier gives one.
func (f *fixture) lease(t *testing.T, rawURL string) (frontier.Lease, canon.URL) {
	t.Helper()
	u, err := f.canon.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return frontier.Lease{Item: frontier.Item{URL: u.String, Host: u.Authority}}, u
}

// hopLease is the lease of a hop the frontier was given.
func (f *fixture) hopLease(t *testing.T, it frontier.Item) (frontier.Lease, canon.URL) {
	t.Helper()
	l, u := f.lease(t, it.URL)
	l.Item = it
	return l, u
}

var testRetry = robots.Retry{TTL: time.Hour, Attempts: 2, Wait: time.Millisecond}

func rules(body string) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		io.WriteString(rw, body)
	}
}

// redirectTo redirects every request to path on host name of the same
// server.
func redirectTo(name, path string) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		_, port, _ := net.SplitHostPort(r.Host)
		http.Redirect(rw, r, "http://"+name+":"+port+path, http.StatusFound)
	}
}

// A file is fetched under the lease of its host, judged, logged, archived
// and kept: the next lease judges by it, and so does the next run,
// without fetching it again.
func TestEnsureFetchesOnceAndKeeps(t *testing.T) {
	const file = "User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n"
	w := newWeb(t, map[string]http.HandlerFunc{"a.test": func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			rules(file)(rw, r)
		}
	}})
	f := newFixture(t, w, testRetry, time.Time{}, nil)
	l, u := f.lease(t, w.url("a.test", "/page"))
	ctx := context.Background()

	pol, res := f.Ensure(ctx, l, u)
	if pol != nil || !res.Retry || !res.Fetched || res.Signal != frontier.OK || !res.SetCrawlDelay || res.CrawlDelay != 2*time.Second {
		t.Fatalf("first lease: policy %v, result %+v; want the lease spent on robots.txt, its Crawl-delay set", pol, res)
	}
	pol, res = f.Ensure(ctx, l, u)
	if pol == nil || pol.Allowed("/private/x") || !pol.Allowed("/page") || res != (frontier.Result{}) {
		t.Fatalf("second lease: policy %v, result %+v; want the file's rules", pol, res)
	}
	origin := Origin("http", w.authority("a.test"))
	if f.Cached(origin, time.Now()) != pol || f.CachedHost(w.authority("a.test"), time.Now()) != pol {
		t.Errorf("Cached and CachedHost do not give the policy judged by")
	}
	c := f.Counts()
	if c.Fetches != 1 || c.Bytes != int64(len(file)) || !only(c.Outcomes, "rules", 1) || c.Failed != 0 {
		t.Errorf("counts %+v; want one fetch of %d bytes, rules", c, len(file))
	}
	if len(f.side.lines) != 1 || f.side.lines[0].Outcome != "robots" || f.side.lines[0].Robots != "rules" ||
		f.side.lines[0].Host != w.authority("a.test") || f.side.lines[0].Status != 200 {
		t.Errorf("fetch log %+v; want one robots line with rules", f.side.lines)
	}
	if f.side.archived != 1 || f.side.fetched[w.authority("a.test")] != 1 {
		t.Errorf("archived %d, requests counted %v; want one each", f.side.archived, f.side.fetched)
	}

	again := New(Config{
		Cache: NewCache(CacheConfig{Partitions: parts, Retry: testRetry}), Token: token, DB: f.db, Partitions: parts, Fetcher: f.cfg.Fetcher,
		Canon: f.canon, Frontier: f.side, Archive: f.side, FetchLog: f.side, Requests: f.side, Policies: f.cfg.Policies,
		Log: f.cfg.Log, Fail: f.side.fail,
	})
	if pol, _ := again.Ensure(ctx, l, u); pol == nil || pol.Allowed("/private/x") || pol.CrawlDelay != 2*time.Second {
		t.Errorf("next run: policy %v; want the kept file's rules", pol)
	}
	if n := w.requests("a.test", "/robots.txt"); n != 1 {
		t.Errorf("robots.txt requested %d times; want once, the next run reading the kept file", n)
	}
	if len(f.side.failed) != 0 {
		t.Errorf("failed: %v", f.side.failed)
	}
}

func only(m map[string]int64, k string, v int64) bool { return len(m) == 1 && m[k] == v }

// A redirect on the file's own host is the next lease's request.
func TestRedirectOnTheSameHost(t *testing.T) {
	w := newWeb(t, map[string]http.HandlerFunc{"a.test": func(rw http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.Redirect(rw, r, "/moved.txt", http.StatusMovedPermanently)
		case "/moved.txt":
			rules("User-agent: *\nDisallow: /x/\n")(rw, r)
		}
	}})
	f := newFixture(t, w, testRetry, time.Time{}, nil)
	l, u := f.lease(t, w.url("a.test", "/"))
	pol, res := f.Ensure(context.Background(), l, u)
	if pol != nil || res.SetCrawlDelay || !res.Retry || w.requests("a.test", "/moved.txt") != 0 {
		t.Fatalf("first lease: policy %v, result %+v; want the redirect only", pol, res)
	}
	if _, res = f.Ensure(context.Background(), l, u); !res.SetCrawlDelay {
		t.Fatalf("second lease: result %+v; want the file decided", res)
	}
	if pol := f.Cached(Origin("http", w.authority("a.test")), time.Now()); pol == nil || pol.Allowed("/x/y") {
		t.Errorf("policy %v; want the moved file's rules", pol)
	}
	if c := f.Counts(); c.Fetches != 2 || c.Hops != 1 {
		t.Errorf("counts %+v; want 2 fetches, one hop", c)
	}
	if got := []string{f.side.lines[0].Robots, f.side.lines[1].Robots}; !slices.Equal(got, []string{"redirect", "rules"}) {
		t.Errorf("fetch log says %v", got)
	}
}

// A redirect to another host is queued there, under that host's clock,
// its owner parked; the hop's lease decides the owner's file, if the hop's
// host allows the request.
func TestRedirectToAnotherHost(t *testing.T) {
	for _, allowed := range []bool{true, false} {
		t.Run(fmt.Sprint("allowed=", allowed), func(t *testing.T) {
			w := newWeb(t, map[string]http.HandlerFunc{
				"a.test": redirectTo("b.test", "/for-a.txt"),
				"b.test": rules("User-agent: *\nDisallow: /x/\n"),
			})
			f := newFixture(t, w, testRetry, time.Time{}, nil)
			l, u := f.lease(t, w.url("a.test", "/"))
			if _, res := f.Ensure(context.Background(), l, u); !res.Park {
				t.Fatalf("result %+v; want a.test parked", res)
			}
			items := f.side.items()
			origin := Origin("http", w.authority("a.test"))
			if len(items) != 1 || items[0].Host != w.authority("b.test") || items[0].RobotsFor != origin || items[0].Priority != frontier.High {
				t.Fatalf("queued %+v; want the hop on b.test for %s", items, origin)
			}
			if !f.parked(w.authority("a.test")) {
				t.Error("a.test not waiting for its hop")
			}
			hl, hu := f.hopLease(t, items[0])
			bPol := robots.FromStatus(200, []byte("User-agent: *\nDisallow: /for-a.txt\n"), token, time.Now())
			if allowed {
				bPol = robots.FromStatus(200, []byte("User-agent: *\nCrawl-delay: 3\n"), token, time.Now())
			}
			res := f.Hop(context.Background(), hl, hu, bPol)
			if !res.SetCrawlDelay || res.CrawlDelay != bPol.CrawlDelay {
				t.Errorf("hop result %+v; want b.test's Crawl-delay kept", res)
			}
			if !f.side.wasUnparked(w.authority("a.test")) || f.parked(w.authority("a.test")) {
				t.Error("a.test still parked")
			}
			pol := f.Cached(origin, time.Now())
			if !allowed {
				if n := w.requests("b.test", "/for-a.txt"); pol != nil || n != 0 {
					t.Errorf("policy %v, %d requests; want the hop not made and a.test undecided", pol, n)
				}
				return
			}
			if pol == nil || pol.Allowed("/x/1") || !res.Fetched {
				t.Errorf("policy %v, result %+v; want a.test judged by b.test's file", pol, res)
			}
		})
	}
}

// A file that fails is retried after a wait, its URLs kept; once every
// attempt failed in a crawl that ends, the host is down to its end.
func TestFailuresRetriedThenDown(t *testing.T) {
	w := newWeb(t, map[string]http.HandlerFunc{"a.test": func(rw http.ResponseWriter, r *http.Request) {
		http.Error(rw, "busy", http.StatusServiceUnavailable)
	}})
	// The hold is what is left of the wait when Ensure returns: a wait
	// much longer than a fetch on a loaded machine (testRetry's 1 ms was
	// often spent by the fetch itself under -race), short enough to wait
	// out below.
	f := newFixture(t, w, robots.Retry{TTL: time.Hour, Attempts: 2, Wait: time.Second}, time.Now(), nil)
	l, u := f.lease(t, w.url("a.test", "/"))
	ctx := context.Background()
	_, res := f.Ensure(ctx, l, u)
	if res.Hold <= 0 || !res.HoldRetry || res.Signal != frontier.Unavailable || res.Cause != "robots.txt 503" {
		t.Fatalf("first failure: %+v; want the host held for a retry", res)
	}
	if c := f.Counts(); c.Retries != 1 || len(c.HostsDown) != 0 {
		t.Fatalf("counts %+v; want one retry, no host down", c)
	}
	testwait.Eventually(t, 5*time.Second, "the second attempt", func() bool {
		_, res = f.Ensure(ctx, l, u)
		return f.Counts().Fetches == 2
	})
	if res.Drain != frontier.DrainStart {
		t.Errorf("last failure: %+v; want the host's queue dropped", res)
	}
	c := f.Counts()
	origin := Origin("http", w.authority("a.test"))
	if c.HostsDown["robots.txt 5xx"] != 1 || len(c.DownNamed) != 1 || c.DownNamed[0].Host != origin || !only(c.Outcomes, "disallow-all", 2) {
		t.Errorf("counts %+v; want %s down for robots.txt 5xx", c, origin)
	}
	if pol := f.Cached(origin, time.Now().Add(24*time.Hour)); pol == nil || pol.Outcome != robots.DisallowAll {
		t.Errorf("a day later: %v; want disallow-all to the crawl's end", pol)
	}
	if h, ok := f.History(origin); !ok || h.Failures != 2 || h.Status != 503 {
		t.Errorf("history %+v", h)
	}
}

// A robots.txt that cannot be reached counts as an error of its kind, the
// last error, with its fetch log line.
func TestUnreachableCounted(t *testing.T) {
	w := newWeb(t, nil)
	f := newFixture(t, w, robots.Retry{TTL: time.Hour, Attempts: 1, Wait: time.Hour}, time.Time{}, nil)
	w.srv.Close() // nothing listens on the port now
	l, u := f.lease(t, w.url("a.test", "/"))
	_, res := f.Ensure(context.Background(), l, u)
	c := f.Counts()
	if c.Failed != 1 || c.Errors["connect"] != 1 || c.LastError != w.authority("a.test")+": connect" || c.LastErrorAt.IsZero() {
		t.Errorf("counts %+v; want one connect error", c)
	}
	if res.Cause != "robots.txt connect" || res.Drain != frontier.DrainStart {
		t.Errorf("result %+v", res)
	}
	if len(f.side.lines) != 1 || f.side.lines[0].Outcome != "error:connect" || f.side.lines[0].Robots != "disallow-all" {
		t.Errorf("fetch log %+v", f.side.lines)
	}
	if c.HostsDown["connect"] != 1 {
		t.Errorf("hosts down %v", c.HostsDown)
	}
}

// HopFor makes a hop another node asked for under this node's lease of
// the hop's host, and answers with the decision; one hop per host at a
// time; DropHops ends those of a partition this node lets go.
func TestHopForAnotherNode(t *testing.T) {
	w := newWeb(t, map[string]http.HandlerFunc{"b.test": rules("User-agent: *\nDisallow: /x/\n")})
	f := newFixture(t, w, testRetry, time.Time{}, nil)
	forA := Origin("http", w.authority("a.test"))
	type reply struct {
		a   Answer
		err error
	}
	asked := make(chan reply, 1)
	go func() {
		a, err := f.HopFor(context.Background(), forA, w.url("b.test", "/for-a.txt"), w.authority("b.test"), 1, false)
		asked <- reply{a, err}
	}()
	testwait.Eventually(t, 5*time.Second, "the hop queued", func() bool { return len(f.side.items()) == 1 })
	if _, err := f.HopFor(context.Background(), forA, w.url("b.test", "/again.txt"), w.authority("b.test"), 1, false); !errors.Is(err, errHopBusy) {
		t.Errorf("a second hop for a.test: %v; want %v", err, errHopBusy)
	}
	hl, hu := f.hopLease(t, f.side.items()[0])
	f.Hop(context.Background(), hl, hu, robots.FromStatus(404, nil, token, time.Now()))
	r := <-asked
	if r.err != nil || r.a.Outcome != robots.Rules || r.a.Local {
		t.Fatalf("answer %+v, %v; want rules", r.a, r.err)
	}
	if pol := r.a.policy(token); pol.Allowed("/x/1") || !pol.Allowed("/y") {
		t.Errorf("the answer's policy %v; want the file's rules", pol)
	}

	forC := Origin("http", w.authority("c.test"))
	go func() {
		a, err := f.HopFor(context.Background(), forC, w.url("b.test", "/for-c.txt"), w.authority("b.test"), 0, false)
		asked <- reply{a, err}
	}()
	testwait.Eventually(t, 5*time.Second, "the hop queued", func() bool { return len(f.side.items()) == 2 })
	f.DropHops(partition.Of(w.authority("b.test"), parts))
	select {
	case r := <-asked:
		if !errors.Is(r.err, context.Canceled) {
			t.Errorf("a dropped hop: %+v; want it cancelled", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a dropped hop still waits for its answer")
	}
	if f.parked(w.authority("c.test")) {
		t.Error("c.test left waiting for a hop no one answers")
	}
	if _, err := f.HopFor(context.Background(), forA, "http://elsewhere.test/x", w.authority("b.test"), 0, false); err == nil || !strings.Contains(err.Error(), "not a URL of") {
		t.Errorf("a hop to another host's URL: %v", err)
	}
}

// remoteCluster answers every hop with one decision, after failing the
// first ask (the owner between two nodes).
type remoteCluster struct {
	mu    sync.Mutex
	asked int
	ans   Answer
}

func (c *remoteCluster) RobotsHop(ctx context.Context, forHost, target, targetHost string, hops int) (Answer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked++
	if c.asked == 1 {
		return Answer{}, errors.New("no owner yet")
	}
	return c.ans, nil
}

// In a cluster a hop to another host is asked of its owner, off the
// workers, until it answers; the answer decides the parked host's file.
func TestRemoteHop(t *testing.T) {
	w := newWeb(t, map[string]http.HandlerFunc{"a.test": redirectTo("b.test", "/for-a.txt")})
	file := "User-agent: *\nDisallow: /x/\n"
	cl := &remoteCluster{ans: Answer{Outcome: robots.Rules, Status: 200, Body: []byte(file), FetchedAt: time.Now()}}
	f := newFixture(t, w, testRetry, time.Time{}, cl)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); f.Wait() }()
	f.Begin(ctx)
	l, u := f.lease(t, w.url("a.test", "/"))
	if _, res := f.Ensure(ctx, l, u); !res.Park || len(f.side.items()) != 0 {
		t.Fatalf("result %+v, queued %v; want a.test parked and the hop asked of the cluster", res, f.side.items())
	}
	testwait.Eventually(t, 10*time.Second, "a.test unparked", func() bool { return f.side.wasUnparked(w.authority("a.test")) })
	if pol := f.Cached(Origin("http", w.authority("a.test")), time.Now()); pol == nil || pol.Allowed("/x/1") {
		t.Errorf("policy %v; want the owner's answer", pol)
	}
	if c := f.Counts(); !only(c.Outcomes, "rules", 1) || c.Hops != 1 {
		t.Errorf("counts %+v", c)
	}
}

// A file asking for a longer Crawl-delay than the crawl waits drains its
// host's queue at once, with no Crawl-delay left on its clock, and names
// the host among those not crawled once, however often the file is
// fetched again.
func TestEnsureRefusesTooLongACrawlDelay(t *testing.T) {
	w := newWeb(t, map[string]http.HandlerFunc{"a.test": func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			rules("User-agent: *\nCrawl-delay: 120\n")(rw, r)
		}
	}})
	f := newFixture(t, w, testRetry, time.Time{}, nil)
	f.maxDelay = time.Minute
	l, u := f.lease(t, w.url("a.test", "/page"))
	for i := range 2 {
		if i == 1 {
			// The verdict expires: the next lease fetches the file again.
			f.entry(Origin("http", w.authority("a.test"))).verdict.Store(nil)
			f.retry.TTL = time.Nanosecond
		}
		pol, res := f.Ensure(context.Background(), l, u)
		if pol != nil || !res.Fetched {
			t.Fatalf("lease %d: policy %v, result %+v; want robots.txt fetched", i, pol, res)
		}
		if i == 0 && (res.Drain != frontier.DrainStart || !res.SetCrawlDelay || res.CrawlDelay != 0) {
			t.Errorf("result %+v; want the host drained, with no Crawl-delay on its clock", res)
		}
	}
	c := f.Counts()
	if c.Fetches != 2 || c.HostsDown["crawl-delay"] != 1 || len(c.DownNamed) != 1 ||
		c.DownNamed[0].Err != "Crawl-delay 2m0s is longer than the crawl waits for a host (1m0s)" {
		t.Errorf("counts %+v; want two fetches, the host down once for its Crawl-delay", c)
	}
}
