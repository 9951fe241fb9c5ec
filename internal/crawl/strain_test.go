package crawl

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// TestServerStrainIsHeeded crawls four hosts: one answers 429 with
// Retry-After, one has a 503 storm, one always fails, one is healthy. From
// the servers' log: every Retry-After was waited out, the storm host was
// asked ever less often and then recovered, the failing host was parked and
// then given up, and the healthy host kept its rate meanwhile.
func TestServerStrainIsHeeded(t *testing.T) {
	const delay = 50 * time.Millisecond
	var throttled, stormed atomic.Int32
	pages := func(rw http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(rw, r)
			return true
		}
		return false
	}
	links := []string{"/p1", "/p2", "/p3", "/p4", "/p5", "/p6"}
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"throttle.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if pages(rw, r) {
				return
			}
			if throttled.Add(1) <= 2 {
				rw.Header().Set("Retry-After", "1")
				http.Error(rw, "slow down", http.StatusTooManyRequests)
				return
			}
			page(rw, links...)
		},
		"storm.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if pages(rw, r) {
				return
			}
			if stormed.Add(1) <= 3 {
				http.Error(rw, "busy", http.StatusServiceUnavailable)
				return
			}
			page(rw, links...)
		},
		"fail.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if pages(rw, r) {
				return
			}
			http.Error(rw, "broken", http.StatusInternalServerError)
		},
		"ok.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if pages(rw, r) {
				return
			}
			page(rw, links...)
		},
	})
	seeds := []string{mw.url("throttle.test", "/"), mw.url("storm.test", "/"), mw.url("ok.test", "/")}
	for i := range 8 {
		seeds = append(seeds, mw.url("fail.test", fmt.Sprintf("/f%d", i)))
	}
	cfg := mw.config(t, delay, seeds...)
	// The latency rule is off: it holds a host for 5x its last fetch's
	// time, which on a loaded machine is tens to hundreds of milliseconds
	// for these tiny pages (the crawler's own measure, scheduling
	// included), and so stretches the gaps this test bounds from above
	// (the storm's after it ends, the healthy host's) by the machine's
	// load, not by the strain it is about. frontier's tests cover the rule.
	cfg.Politeness = frontier.Politeness{LatencyFactor: -1, MinBackoff: 100 * time.Millisecond, ParkAfter: 2, ParkFor: 400 * time.Millisecond, GiveUpAfter: 4}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if sum.StoppedBy != "drained" {
		t.Fatalf("crawl %s", sum.StoppedBy)
	}
	mw.checkPolite(t, delay)

	// 429 with Retry-After: 1 twice: the next request waited a second.
	reqs := mw.requests("throttle.test")
	n429 := 0
	for i := 1; i < len(reqs); i++ {
		if reqs[i-1].path == "/robots.txt" || n429 >= 2 {
			continue
		}
		n429++
		if gap := reqs[i].start.Sub(reqs[i-1].end); gap < time.Second {
			t.Errorf("throttle.test: request %d came %v after a 429 with Retry-After: 1", i, gap)
		}
	}
	if got := len(reqs); got != 1+2+7 {
		t.Errorf("throttle.test: %d requests, want robots.txt, two 429s and 7 pages", got)
	}

	// 503 storm: the gaps after the three 503s double (100, 200, 400 ms of
	// backoff), then shrink back once pages come.
	reqs = mw.requests("storm.test")
	var gaps []time.Duration
	for i := 2; i < len(reqs); i++ {
		gaps = append(gaps, reqs[i].start.Sub(reqs[i-1].end))
	}
	for i, least := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		if i < len(gaps) && gaps[i] < least {
			t.Errorf("storm.test: gap after 503 number %d is %v, want >= %v", i+1, gaps[i], least)
		}
	}
	if len(gaps) < 6 || gaps[len(gaps)-1] >= 200*time.Millisecond {
		t.Errorf("storm.test: gaps %v; the backoff should have shrunk back after the storm", gaps)
	}

	// Always 500: parked after two failures in a row, given up after four;
	// the other four seeds are dropped without a request, and so are the
	// second tries the four failures queued (each a 500).
	reqs = mw.requests("fail.test")
	if len(reqs) != 1+4 {
		t.Errorf("fail.test: %d requests %v, want robots.txt and 4 pages", len(reqs), mw.paths("fail.test"))
	} else if gap := reqs[3].start.Sub(reqs[2].end); gap < 400*time.Millisecond {
		t.Errorf("fail.test: %v between the second and third failures, want the 400ms park", gap)
	}
	if sum.GaveUp != 1 || !slices.Contains(sum.GaveUpHosts, mw.auth["fail.test"]) || sum.Rejected[judge.GaveUp] != 8 || sum.Retried != 4 {
		t.Errorf("summary: %d hosts given up %v, %d URLs dropped, %d retried; want fail.test, 8 and 4",
			sum.GaveUp, sum.GaveUpHosts, sum.Rejected[judge.GaveUp], sum.Retried)
	}
	// The crawl drained: the store's queue count, kept through every
	// retry, drop and park, is back at zero.
	if n := c.Live().Stored; n == nil || *n != 0 {
		t.Errorf("queue count after the drain: %v, want 0", n)
	}
	// Its page in the operator API has its robots.txt and four failed
	// fetches, and the park.
	if a, ok := c.Hosts().Activity(mw.auth["fail.test"]); !ok || a.Fetched != 5 || a.Errors != 4 || len(a.Last) != 5 || len(a.Parks) < 1 ||
		a.Last[0].Status != 500 || a.Last[4].Outcome != "robots" || !a.Parks[0].Until.After(a.Parks[0].At) {
		t.Errorf("fail.test's activity: %+v (kept %v); want its robots.txt and 4 failed fetches, its park", a, ok)
	}
	if sum.Throttled != 2 || sum.Unavailable != 3 || sum.Parks < 1 {
		t.Errorf("summary: %d 429s, %d 503s, %d parks; want 2, 3 and at least 1", sum.Throttled, sum.Unavailable, sum.Parks)
	}

	// The healthy host was not slowed by the others.
	reqs = mw.requests("ok.test")
	if len(reqs) != 1+7 {
		t.Errorf("ok.test: %d requests, want 8", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].start.Sub(reqs[i-1].end); gap > 20*delay {
			t.Errorf("ok.test: a gap of %v; the strained hosts slowed it", gap)
		}
	}
}

// TestSharedServerGap serves fifty host names from one address: with per-IP
// politeness, requests to that server start at least the IP gap apart,
// though each host alone would allow more.
func TestSharedServerGap(t *testing.T) {
	const ipGap, hosts = 40 * time.Millisecond, 50
	ln, err := net.Listen("tcp", "127.0.4.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var starts []time.Time
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			http.NotFound(rw, r)
			return
		}
		page(rw)
	})}
	var wg sync.WaitGroup
	wg.Go(func() { srv.Serve(ln) })
	defer func() { srv.Close(); wg.Wait() }()
	port := ln.Addr().(*net.TCPAddr).Port
	var seeds []string
	resolve := map[string]string{}
	for i := range hosts {
		name := fmt.Sprintf("site%d.shared.test", i)
		resolve[name] = "127.0.4.1"
		seeds = append(seeds, fmt.Sprintf("http://%s:%d/", name, port))
	}
	cfg := bare(Config{Seeds: seeds, DataDir: t.TempDir(), Workers: 8, Delay: 10 * time.Millisecond, IPGap: ipGap,
		UserAgent: "weft/test (+https://example.org/weft-crawler)", NoSitemaps: true})
	cfg.Fetch.Resolve = resolve
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(t.Context())
	if err != nil || sum.StoppedBy != "drained" {
		t.Fatalf("crawl %s: %v", sum.StoppedBy, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(starts) != 2*hosts {
		t.Fatalf("%d requests, want robots.txt and a page for each of %d hosts", len(starts), hosts)
	}
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < ipGap {
			t.Errorf("requests %d and %d to the shared server started %v apart, want >= %v", i-1, i, gap, ipGap)
		}
	}
}

// TestStrainWaitsForTheServer crawls a host that sends headers and the
// start of a body and then nothing, and whose handler goes on for a while
// after weft's silence timeout has closed the connection (synthweb's
// linger host). From the server's log: no request to it started before
// the previous handler had really ended plus the delay, though weft's own
// fetch ended long before that, and the crawl went on to every page.
func TestStrainWaitsForTheServer(t *testing.T) {
	const (
		delay   = 50 * time.Millisecond
		silence = 300 * time.Millisecond
		linger  = time.Second // well under (5-1) x silence
	)
	web := startWeb(t, synthweb.Config{Seed: 5, Hosts: 1, PagesPerHost: 3, HostileKinds: []string{synthweb.HostileLinger},
		LingerFor: linger, HangLimit: 10 * time.Second, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	cfg := testConfig(t, web, 4, delay)
	cfg.Seeds = web.HostileSeeds()
	cfg.Fetch.IdleTimeout = silence
	sum := runCrawl(t, cfg)
	if err := web.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	var reqs []synthweb.Request
	host := hostileHost(t, web, synthweb.HostileLinger)
	for _, r := range web.Log() {
		if r.Addr == host.Addr {
			reqs = append(reqs, r)
		}
	}
	var paths []string
	for i, r := range reqs {
		paths = append(paths, r.Path)
		if r.Abandoned && i+1 < len(reqs) {
			if rest := reqs[i+1].Start.Sub(r.End); rest < delay {
				t.Errorf("%s started %v after the handler of %s ended (it ran %v); want at least %v", reqs[i+1].Path, rest, r.Path, r.End.Sub(r.Start), delay)
			}
		}
	}
	if fmt.Sprint(paths) != "[/robots.txt / /work/1 /work/2]" {
		t.Errorf("the linger host was asked for %v", paths)
	}
	if sum.Strained != 2 {
		t.Errorf("summary: %d requests counted as strain, want 2 (/work/1 and /work/2)", sum.Strained)
	}
	if n := slices.IndexFunc(reqs, func(r synthweb.Request) bool { return r.Abandoned }); n < 0 {
		t.Errorf("no request was abandoned by weft: %+v", reqs)
	}
	for _, s := range synthweb.Audit(web, delay).Breaches() {
		t.Errorf("politeness: %s", s)
	}
}
