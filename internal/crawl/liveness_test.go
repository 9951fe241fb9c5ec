package crawl

import (
	"context"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/memnet"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// livenessWorlds is how many random worlds TestLiveness crawls.
const livenessWorlds = 16

// TestLiveness: a crawl that ends moves or says why, and ends soon after
// its last useful request, whatever its hosts do. On random worlds with
// every failure kind of the synthetic web (robots.txt 5xx and 429 with an
// hour's Retry-After or none, robots.txt timeouts and redirects, pages
// answering 429 and 503 with and without Retry-After, hanging, silent,
// resetting and dripping hosts, slow hosts, hosts whose links turn up
// late, hosts an operator holds), crawled at the default flags:
//
//   - at every moment with nothing in flight and URLs queued, the frontier
//     names the host and the clock it waits for (or the held hosts), and
//     the progress line says it;
//   - the crawl ends within FailureWait, plus one request's longest time
//     and one gap, of the last request that got an answer (from the
//     server's log), however long a Retry-After asked for.
//
// The crawls run on fake time (testing/synctest) over an in-memory
// network: an hour's Retry-After costs nothing to wait for, so a crawl
// that waits for one fails the bound rather than the test's timeout.
func TestLiveness(t *testing.T) {
	t.Parallel() // on fake time: no other test's load moves what it measures
	for seed := range uint64(livenessWorlds) {
		t.Run(fmt.Sprint("world", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkLiveness(t, seed) })
		})
	}
}

// livenessWorld is a random world and crawl for checkLiveness.
type livenessWorld struct {
	web       synthweb.Config
	delay     time.Duration
	workers   int
	attempts  int           // robots.txt attempts (0: the default)
	hold      int           // an ordinary host held from the start, -1 for none
	releaseAt time.Duration // when it is released
	lateAt    time.Duration // when links to the failing hosts turn up, 0 for never
}

func randomWorld(seed uint64) livenessWorld {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	pick := func(n int) int { return r.IntN(n) }
	robotsKinds := []synthweb.RobotsKind{
		synthweb.RobotsRules, synthweb.RobotsCrawlDelay, synthweb.RobotsNotFound, synthweb.RobotsServerError,
		synthweb.RobotsTimeout, synthweb.RobotsRedirect, synthweb.RobotsRedirectLoop, synthweb.RobotsNone,
	}
	var kinds []synthweb.RobotsKind
	for range 4 + pick(5) {
		kinds = append(kinds, robotsKinds[pick(len(robotsKinds))])
	}
	hostile := []string{
		synthweb.HostileStorm429, synthweb.HostileStorm503, synthweb.HostileHang, synthweb.HostileSilent,
		synthweb.HostileReset, synthweb.HostileDripHeaders, synthweb.HostileDripBody, synthweb.HostileRedirectLoop,
		synthweb.HostileRedirectChain, synthweb.HostileLinger,
		synthweb.FailOutage, synthweb.FailStorm429Bare, synthweb.FailStorm503Bare, synthweb.FailFlaky,
		synthweb.FailRobots500, synthweb.FailRobots429,
	}
	r.Shuffle(len(hostile), func(i, j int) { hostile[i], hostile[j] = hostile[j], hostile[i] })
	w := livenessWorld{
		web: synthweb.Config{
			Seed: int64(seed), Hosts: 4 + pick(6), PagesPerHost: 12 + pick(8), RobotsKinds: kinds,
			MaxLatency: time.Duration(pick(4)) * 300 * time.Millisecond, CrawlDelay: time.Duration(1+pick(8)) * 250 * time.Millisecond,
			HostileKinds: hostile[:3+pick(6)],
		},
		delay:   time.Duration(2+pick(8)) * 200 * time.Millisecond,
		workers: 2 + pick(6),
		hold:    -1,
	}
	if pick(2) == 0 {
		w.attempts = 1
	}
	if pick(2) == 0 {
		w.hold = pick(w.web.Hosts)
		w.releaseAt = time.Duration(10+pick(600)) * time.Second
	}
	if pick(3) > 0 {
		w.lateAt = time.Duration(20+pick(180)) * time.Second
	}
	return w
}

// startFakeWeb starts web on an in-memory network, for a crawl on fake
// time (inside synctest.Test), and returns it with a crawl of it at the
// default flags but the delay: every seed, ordinary and hostile.
func startFakeWeb(t *testing.T, wcfg synthweb.Config, delay time.Duration) (*synthweb.Web, Config) {
	t.Helper()
	net := memnet.New()
	wcfg.Network = net
	web, err := synthweb.Start(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	cfg := bare(Config{
		Seeds: append(web.Seeds(), web.HostileSeeds()...), DataDir: t.TempDir(),
		Delay: delay, UserAgent: "weft/test (+https://example.org/weft-crawler)", MaxURLsPerHost: 100000,
	})
	cfg.Scope.MaxDepth = 20
	cfg.Fetch.Resolve = web.Resolve()
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Fetch.Dialer = net
	return web, cfg
}

func checkLiveness(t *testing.T, seed uint64) {
	w := randomWorld(seed)
	web, cfg := startFakeWeb(t, w.web, w.delay)
	cfg.Workers, cfg.RobotsAttempts = w.workers, w.attempts
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hosts := web.Hosts()
	start := time.Now()
	done := make(chan struct{})
	at := func(d time.Duration, f func()) {
		go func() {
			select {
			case <-time.After(d):
				f()
			case <-done:
			}
		}()
	}
	if w.hold >= 0 {
		if _, err := c.Hosts().Hold(hosts[w.hold].Authority, true); err != nil {
			t.Fatal(err)
		}
		at(w.releaseAt, func() { c.Hosts().Hold(hosts[w.hold].Authority, false) })
	}
	var failing []string
	for _, h := range hosts {
		if h.Hostile != "" || h.Robots == synthweb.RobotsServerError || h.Robots == synthweb.RobotsTimeout {
			failing = append(failing, "http://"+h.Authority+"/late/"+fmt.Sprint(seed))
		}
	}
	if w.lateAt > 0 {
		// Links to the failing hosts that turn up late, after their
		// robots.txt failed and any retry of it was due.
		at(w.lateAt, func() { c.AddSeeds(failing, nil, false) })
	}

	// The watcher looks at the crawl whenever it is idle, every fake half
	// second: all its goroutines blocked, nothing moving but the clock.
	var silent []string
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-done:
				return
			case <-time.After(500 * time.Millisecond):
			}
			synctest.Wait()
			select {
			case <-done:
				return
			default:
			}
			p, l := c.Progress(), c.Live()
			if p.InFlight > 0 || p.Queued == 0 || p.Paused {
				continue
			}
			wt := l.Frontier.Wait
			named := wt.Host != "" && wt.At.After(time.Now()) && wt.Why != 0 || wt.Held > 0 || wt.Parked > 0
			if !named || p.Waiting == "" {
				silent = append(silent, fmt.Sprintf("at %v: %d queued, nothing in flight, wait %+v, progress %q",
					time.Since(start), p.Queued, wt, p.Waiting))
			}
		}
	}()
	sum, err := c.Run(t.Context())
	close(done)
	<-watched
	end := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if len(silent) > 0 {
		t.Errorf("%d moments with nothing in flight and no word of what the crawl waits for; the first: %s", len(silent), silent[0])
	}

	// The last request that got an answer, by the server's log.
	var lastAnswer time.Time
	var answered int
	for _, r := range web.Log() {
		if r.Status > 0 && r.Status < 500 && r.Status != 429 && !r.Abandoned && !r.End.IsZero() {
			answered++
			if r.End.After(lastAnswer) {
				lastAnswer = r.End
			}
		}
	}
	bound := cfg.FailureWait
	if bound == 0 {
		bound = DefaultFailureWait
	}
	gap := max(w.delay, w.web.CrawlDelay)
	bound += 60*time.Second + gap + 5*time.Second // one request at the longest (fetch.DefaultTimeout), one gap
	t.Logf("world %+v: %s after %v, %d pages, %d answered requests, the last at %v; %d deferred on %d hosts",
		w, sum.StoppedBy, end.Sub(start), sum.Pages, answered, lastAnswer.Sub(start), sum.Deferred, sum.DeferredHostCount)
	// A held host is waited for, as long as it is held.
	from := lastAnswer
	if w.hold >= 0 {
		from = later(from, start.Add(w.releaseAt))
	}
	if tail := end.Sub(from); tail > bound {
		t.Errorf("the crawl ended %v after the last answered request (or the held host's release), more than %v", tail, bound)
	}
	if !slices.Contains([]string{"drained", "deferred"}, sum.StoppedBy) {
		t.Errorf("stopped by %q, want drained or deferred", sum.StoppedBy)
	}
	for _, d := range sum.DeferredHosts {
		if d.Cause == "" {
			t.Errorf("deferred host %s (%s) is not failing", d.Host, d.Why)
		}
	}
}

// TestUnreachableRobotsHoldsForTheRun: a robots.txt found unreachable at
// its last attempt (503 with an hour's Retry-After) keeps its host
// disallowed to the end of a crawl that ends, past its retry wait: links
// that turn up later are refused as robots at once, never queued behind
// the host's hour (the demo's stall), and the file is asked for once.
func TestUnreachableRobotsHoldsForTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web, cfg := startFakeWeb(t, synthweb.Config{Seed: 3, Hosts: 2, PagesPerHost: 12,
			RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound, synthweb.RobotsServerError}}, time.Second)
		cfg.RobotsAttempts = 1 // unreachable at the first failure; retried a minute later
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hosts := web.Hosts()
		// The healthy host is held for ten minutes, keeping the crawl
		// going; links to the other turn up after five.
		if _, err := c.Hosts().Hold(hosts[0].Authority, true); err != nil {
			t.Fatal(err)
		}
		late := "http://" + hosts[1].Authority + "/late"
		var verdicts []Verdict
		go func() {
			time.Sleep(5 * time.Minute)
			verdicts, _ = c.AddSeeds([]string{late}, nil, false)
			time.Sleep(5 * time.Minute)
			c.Hosts().Hold(hosts[0].Authority, false)
		}()
		sum, err := c.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(verdicts) != 1 || verdicts[0].Reason != judge.Unreachable {
			t.Errorf("the late link's verdict %+v, want refused as robots-unreachable", verdicts)
		}
		if sum.StoppedBy != "drained" || sum.Deferred != 0 {
			t.Errorf("stopped by %s with %d URLs deferred, want drained and none", sum.StoppedBy, sum.Deferred)
		}
		robots := 0
		for _, r := range web.Log() {
			if r.Addr == hosts[1].Addr {
				if r.Path != "/robots.txt" {
					t.Errorf("the unreachable host was asked for %s", r.Path)
				}
				robots++
			}
		}
		if robots != 1 {
			t.Errorf("its robots.txt asked for %d times, want once", robots)
		}
	})
}

// TestUnreachableRobotsHoldsWithItsClock: in a crawl that never ends, the
// verdict of a robots.txt that failed its last attempt lasts as long as
// the clock its answer set (an hour's Retry-After), not only its retry
// wait: links that come meanwhile are refused as robots; after the hour
// the file is asked for again.
func TestUnreachableRobotsHoldsWithItsClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web, cfg := startFakeWeb(t, synthweb.Config{Seed: 3, Hosts: 2, PagesPerHost: 12,
			RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound, synthweb.RobotsServerError}}, time.Second)
		cfg.RobotsAttempts, cfg.KeepAlive = 1, true
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hosts := web.Hosts()
		ctx, cancel := context.WithCancel(t.Context())
		var soon, later []Verdict
		go func() {
			time.Sleep(5 * time.Minute)
			soon, _ = c.AddSeeds([]string{"http://" + hosts[1].Authority + "/soon"}, nil, false)
			time.Sleep(56 * time.Minute)
			later, _ = c.AddSeeds([]string{"http://" + hosts[1].Authority + "/later"}, nil, false)
			time.Sleep(time.Minute)
			cancel()
		}()
		if _, err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if len(soon) != 1 || soon[0].Reason != judge.Unreachable {
			t.Errorf("a link five minutes after the 503: %+v, want refused as robots-unreachable", soon)
		}
		if len(later) != 1 || later[0].Reason != "" {
			t.Errorf("a link after the hour: %+v, want queued (the file to be asked for again)", later)
		}
		var robots []time.Duration
		for _, r := range web.Log() {
			if r.Addr == hosts[1].Addr && r.Path == "/robots.txt" {
				robots = append(robots, r.Start.Sub(web.Log()[0].Start))
			}
		}
		if len(robots) != 2 || robots[1] < time.Hour {
			t.Errorf("robots.txt asked for at %v, want once at the start and once after the hour", robots)
		}
	})
}

// TestGivenUpHostRefusesLateLinks: a host given up after too many
// failures stays given up for the crawl, and its later links are refused
// when found (gave-up), not queued to be dropped when leased.
func TestGivenUpHostRefusesLateLinks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web, cfg := startFakeWeb(t, synthweb.Config{Seed: 5, Hosts: 1, PagesPerHost: 12,
			RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}, HostileKinds: []string{synthweb.FailStorm503Bare}}, time.Second)
		cfg.Politeness.GiveUpAfter = 3
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hosts := web.Hosts()
		c.Hosts().Hold(hosts[0].Authority, true) // keeps the crawl going
		var late []Verdict
		go func() {
			time.Sleep(10 * time.Minute)
			late, _ = c.AddSeeds([]string{"http://" + hosts[1].Authority + "/late"}, nil, false)
			c.Hosts().Hold(hosts[0].Authority, false)
		}()
		sum, err := c.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if sum.GaveUp != 1 {
			t.Fatalf("%d hosts given up, want the storm", sum.GaveUp)
		}
		if len(late) != 1 || late[0].Reason != judge.GaveUp {
			t.Errorf("a link to the given-up host: %+v, want refused as %s", late, judge.GaveUp)
		}
	})
}

// TestOneTimeoutDoesNotEndItsHost: a site whose sitemap.xml, asked for
// right after its home page, hangs past the header timeout, is crawled
// whole at the default flags. The timeout holds the host for the latency
// factor times the request's time (75 s), which must come before the
// crawl stops waiting for failing hosts (FailureWait after its last
// answer); with a failure wait of a minute, the crawl ended with the home
// page alone. So is a site one of whose pages trickles its body past the
// request's time limit (fetch.DefaultTimeout), which holds the host five
// minutes, longer than the failure wait: the crawl ended with 5 pages of
// 13 before the frontier waited for a host's one failure after answers
// (frontier's waitedFor). A host that hangs on every page is still given
// up, within the bound TestLiveness checks, and so is one that trickles
// every page, which answered no more pages than it failed. The sitemap is
// asked for once more, last; the page whose body was cut, not. On fake
// time.
func TestOneTimeoutDoesNotEndItsHost(t *testing.T) {
	for _, slow := range []string{"sitemap", "every-page", "a-page-trickles", "every-page-trickles"} {
		t.Run(slow, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkOneTimeout(t, slow) })
		})
	}
}

func checkOneTimeout(t *testing.T, slow string) {
	n := memnet.New()
	ln, err := n.Listen("tcp", "127.0.4.9:80")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lastAnswer time.Time
	links := []string{}
	for i := range 12 {
		links = append(links, fmt.Sprintf("/p%d", i))
	}
	trickles := strings.HasSuffix(slow, "trickles")
	srv := &http.Server{ErrorLog: log.New(io.Discard, "", 0), Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		hang := r.URL.Path != "/" && r.URL.Path != "/robots.txt" && r.URL.Path != "/sitemap.xml" && strings.HasPrefix(slow, "every-page") ||
			r.URL.Path == "/sitemap.xml" && slow == "sitemap" || r.URL.Path == "/p3" && slow == "a-page-trickles"
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(rw, r)
		case hang && trickles:
			// A byte every 10 s, within the silence timeout, until the
			// request's time limit cuts it.
			rw.Header().Set("Content-Type", "text/html")
			for {
				rw.Write([]byte(" "))
				rw.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(10 * time.Second):
				}
			}
		case hang:
			<-r.Context().Done() // hangs until the crawler gives up on it
			return
		case r.URL.Path == "/":
			page(rw, links...)
		case r.URL.Path == "/sitemap.xml":
			http.NotFound(rw, r)
		default:
			page(rw)
		}
		mu.Lock()
		lastAnswer = time.Now()
		mu.Unlock()
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	cfg := bare(Config{Seeds: []string{"http://slow.test/"}, DataDir: t.TempDir(), Delay: time.Second,
		UserAgent: "weft/test (+https://example.org/weft-crawler)"})
	cfg.Fetch.Resolve = map[string]string{"slow.test": "127.0.4.9"}
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Fetch.Dialer = n
	_, sum := runCrawler(t, cfg)
	end := time.Now()
	switch slow {
	case "sitemap":
		if sum.StoppedBy != "drained" || sum.Pages != 13 || sum.Errors["timeout"] == 0 {
			t.Errorf("stopped by %s with %d pages, errors %v; want drained, the home page and its 12 links, the sitemap timed out",
				sum.StoppedBy, sum.Pages, sum.Errors)
		}
		if sum.Retried != 1 {
			t.Errorf("%d URLs tried again; want the sitemap", sum.Retried)
		}
		return
	case "a-page-trickles":
		if sum.StoppedBy != "drained" || sum.Pages != 13 || sum.Truncated != 1 || sum.Retried != 0 {
			t.Errorf("stopped by %s with %d pages, %d truncated, %d tried again; want drained, the home page and its 12 links, one cut, none tried again",
				sum.StoppedBy, sum.Pages, sum.Truncated, sum.Retried)
		}
		return
	}
	mu.Lock()
	defer mu.Unlock()
	bound := DefaultFailureWait + fetch.DefaultTimeout + cfg.Delay
	if sum.StoppedBy != "deferred" || sum.Pages < 1 || sum.Pages > 2 {
		t.Errorf("stopped by %s with %d pages, errors %v; want deferred after the second failure, with the home page", sum.StoppedBy, sum.Pages, sum.Errors)
	}
	if tail := end.Sub(lastAnswer); tail > bound {
		t.Errorf("the crawl ended %v after its last answer, more than %v", tail, bound)
	}
}
