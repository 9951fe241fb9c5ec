package crawl

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// liveWorld is a live web of issue 19's shape: hosts hosts of perHost
// live pages whose mean change intervals are log-uniform from 2 s to 10
// days (drawn, seed 19: the same for every run), crawled for run at the
// default prior, floor, max and back-off, staleness counted from warm on.
// Its other pages are small (4-6 KiB, 10-12 links), so that the crawl's
// budget goes to the live pages more than to the machine.
type liveWorld struct {
	hosts, perHost int
	run, warm      time.Duration
}

// liveDelay is the hosts' politeness delay: 25 requests a second a host,
// so that politeness, not the machine, sets the budget (at 10 ms on two
// hosts the machine bounded the crawl, and a loaded one gave 0.76x where
// an idle one gave 1.9x).
const liveDelay = 40 * time.Millisecond

// intervals are the pages' mean change intervals: page k of host h has
// intervals()[h×perHost+k] (synthweb.Config).
func (w liveWorld) intervals() []time.Duration {
	r := rand.New(rand.NewPCG(19, 7))
	iv := make([]time.Duration, w.hosts*w.perHost)
	lo, hi := math.Log(2), math.Log(10*86400)
	for i := range iv {
		iv[i] = time.Duration(math.Exp(lo+r.Float64()*(hi-lo)) * float64(time.Second))
	}
	return iv
}

func (w liveWorld) start(t testing.TB) *synthweb.Web {
	web, err := synthweb.Start(synthweb.Config{
		Seed: 19, Hosts: w.hosts, PagesPerHost: 12, MinPageBytes: 4 << 10, MaxPageBytes: 6 << 10, MinLinks: 10, MaxLinks: 12,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}, LivePages: w.perHost, LiveIntervals: w.intervals(),
		NoSitemap: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return web
}

// TestServeStalenessDefaults is issue 19's measure, from the server's
// log: the continuous mode at its default prior (a day), floor and
// back-off, with --recrawl-min and --recrawl-scan scaled down, over 100
// pages (four hosts of 25) whose change intervals span 2 s to 10 days
// log-uniformly, for 40 s; then a uniform recrawler given the very
// request slots weft had to each host's live pages (uniformAt: the slots
// politeness gave, which the latency factor stretches on a loaded
// machine), the pages in turn, over the same web's change times. It also
// logs uniform spread evenly in time (uniformVisits) and the best
// schedule at that budget in the steady state (optimalRates, Cho and
// Garcia-Molina); set WEFT_LIVE_CLASSES=1 to log them by change interval.
//
// The web was running before the crawl (synthweb's live pages were last
// modified before it started) and its answers carry Last-Modified, as a
// static site's do: the schedule reads each page's age from it
// (recrawl.History.ObserveModified), which tells in a visit or two what
// visits alone take dozens to tell. Measured 2026-12-02 beside three
// other engineers' test runs (load 8 to 20): 2.05x to 2.59x less stale
// than uniform where the crawl had 1,900 to 3,400 requests (the optimum
// at those budgets 2.5x to 2.7x, which weft comes within 10 % of); with
// the dates ignored, 1.26x at a budget where the optimum was 2.70x.
//
// The budget decides what any schedule can reach, and a starved machine
// shrinks it: under -race at load 13 the crawl once made 652 requests in
// 40 s, at which the best schedule itself is 1.9x less stale than
// uniform. So the test asserts 2x wherever the budget the crawl had lets
// the best schedule reach 2.4x, and 1.1x everywhere (which the host
// prior's absence fails by far: 0.43x). BenchmarkServeStalenessDefaults
// measures it over 200 s.
//
// The scan runs every 100 ms, two and a half of a host's gaps: the
// defaults' is ten (10 s at a 1 s delay). At every 20 ms (half a gap)
// the scans were most of the crawl's CPU, since nearly every page is due
// at this Min and each scan weighs them all; a machine that gave the test
// a quarter of a core then cut the crawl to 1,076 requests and weft to
// 1.42x less stale than uniform where the best schedule was 2.86x (CI
// failed once at 2,105 requests, 1.87x against 2.80x). At 100 ms the same
// quarter core gave 2,194 requests and 2.16x against 2.66x, and the test
// alone under -race 11 s of CPU, not 16 to 18 s. A host may now have 7
// recrawls queued or in flight, not 3 (perHostRecrawls: two scans' worth
// of its clock); the defaults allow 22. The 0.43x without the host prior
// was measured at 20 ms.
func TestServeStalenessDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("a 40-second crawl")
	}
	// 40 s of waiting on politeness, beside another test: a loaded machine
	// shrinks the budget, which the bounds below allow for.
	t.Parallel()
	r := runLive(t, liveWorld{hosts: 4, perHost: 25, run: 40 * time.Second, warm: 10 * time.Second})
	if r.uniform < 1.1*r.weft {
		t.Errorf("weft's pages stale %.4f of the time, uniform's %.4f: not 1.1x less", r.weft, r.uniform)
	}
	if best := r.uniform / r.optimum; best < 2.4 {
		t.Logf("the crawl had %d requests, at which the best schedule is only %.2fx less stale than uniform: too few to hold it to 2x", r.requests, best)
		return
	}
	if r.uniform < 2*r.weft {
		t.Errorf("weft's pages stale %.4f of the time, uniform's %.4f: not 2x less (the best schedule at that budget: %.4f)", r.weft, r.uniform, r.optimum)
	}
}

// liveResult is what a run of runLive measured: the average staleness of
// the live pages under weft's schedule, a uniform one with as many
// requests to each host, and the best one at that budget (in the steady
// state, from the pages' true change intervals: the ceiling); and the
// requests weft made, to the live pages and in all.
type liveResult struct {
	weft, uniform, optimum float64
	even                   float64 // uniform with the requests spread evenly in time
	live, requests         int
}

// runLive crawls the live web at the default prior, floor, max and
// back-off for w.run and measures it from the server's log.
func runLive(t testing.TB, w liveWorld) liveResult {
	web := w.start(t)
	defer web.Close()
	start := time.Now()
	cfg := testConfig(t, web, 4, liveDelay)
	cfg.Recrawl = &recrawl.Policy{Min: 2 * time.Millisecond} // the default prior, floor and max
	cfg.RecrawlScan = 100 * time.Millisecond                 // see TestServeStalenessDefaults
	cfg.NearDupThreshold = -1
	ctx, cancel := context.WithTimeout(t.Context(), w.run)
	defer cancel()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	end := start.Add(w.run)
	from := start.Add(w.warm)
	fetched := liveFetches(web, end)
	perHost := liveRequests(fetched)
	uni := uniformAt(web, fetched)
	even := liveStaleness(web, uniformVisits(web, perHost, start, end), from, end)
	r := liveResult{weft: liveStaleness(web, fetched, from, end), uniform: liveStaleness(web, uni, from, end), even: even, requests: len(web.Log())}
	for _, n := range perHost {
		r.live += n
	}
	opt := liveOptimum(web, perHost, w.run, end)
	for _, u := range livePages(web) {
		_, iv, _ := web.LiveChanges(u, end)
		r.optimum += periodicStaleness(iv, opt[u])
	}
	r.optimum /= float64(len(opt))
	if os.Getenv("WEFT_LIVE_CLASSES") != "" {
		logClasses(t, web, fetched, uni, opt, w.run, from, end)
		for _, h := range web.Hosts() {
			t.Logf("host %s prior %+v: every %.1fs", h.Authority, c.sched.Prior(h.Authority), 1/c.sched.Prior(h.Authority).Rate(1.0/86400))
		}
	}
	t.Logf("weft: %d requests (%d to live pages), staleness %.4f; uniform in the same slots %.4f (%.2fx), spread evenly %.4f (%.2fx); optimum at that budget %.4f (%.2fx)",
		r.requests, r.live, r.weft, r.uniform, r.uniform/r.weft, r.even, r.even/r.weft, r.optimum, r.uniform/r.optimum)
	return r
}

// liveOptimum is the best schedule's fetches a second of each live page
// (optimalRates), each host's budget the requests perHost says it had in
// run.
func liveOptimum(web *synthweb.Web, perHost map[string]int, run time.Duration, end time.Time) map[string]float64 {
	byHost := map[string][]string{}
	for _, u := range livePages(web) {
		byHost[hostName(u)] = append(byHost[hostName(u)], u)
	}
	opt := map[string]float64{}
	for name, pages := range byHost {
		iv := make([]time.Duration, len(pages))
		for i, u := range pages {
			_, iv[i], _ = web.LiveChanges(u, end)
		}
		for i, f := range optimalRates(iv, float64(perHost[name])/run.Seconds()) {
			opt[pages[i]] = f
		}
	}
	return opt
}

// logClasses logs, by change interval in decades, the fetches and
// staleness of weft's schedule, the uniform one and the best one.
func logClasses(t testing.TB, web *synthweb.Web, fetched, uni map[string][]time.Time, opt map[string]float64, run time.Duration, from, end time.Time) {
	type class struct {
		pages                       int
		fetches, ufetches, ofetches float64
		stale, ustale, ostale       float64
	}
	by := map[int]*class{}
	n := 0
	for _, u := range livePages(web) {
		n++
		_, iv, _ := web.LiveChanges(u, end)
		d := int(math.Floor(math.Log10(iv.Seconds())))
		if by[d] == nil {
			by[d] = &class{}
		}
		c := by[d]
		c.pages++
		c.fetches += float64(len(fetched[u]))
		c.ufetches += float64(len(uni[u]))
		c.ofetches += opt[u] * run.Seconds()
		c.stale += liveStaleness1(web, fetched[u], u, from, end)
		c.ustale += liveStaleness1(web, uni[u], u, from, end)
		c.ostale += periodicStaleness(iv, opt[u])
	}
	for d := -1; d <= 6; d++ {
		if c := by[d]; c != nil {
			k := float64(c.pages)
			t.Logf("  change interval 1e%d s, %d pages: fetches each weft %.1f uniform %.1f best %.1f; staleness each weft %.4f uniform %.4f best %.4f; of the average weft %.4f best %.4f",
				d, c.pages, c.fetches/k, c.ufetches/k, c.ofetches/k, c.stale/k, c.ustale/k, c.ostale/k, c.stale/float64(n), c.ostale/float64(n))
		}
	}
}

// BenchmarkServeStalenessDefaults is TestServeStalenessDefaults long
// enough for the schedule to learn from visits alone: 200 intervals on
// four hosts of 50 live pages, for 200 s, staleness counted from 50 s on.
// It reports the staleness of weft, of uniform in weft's slots and spread
// evenly, and the ratios, with the steady-state optimum's. Run with
//
//	go test ./internal/crawl -run '^$' -bench ServeStalenessDefaults -benchtime 1x
func BenchmarkServeStalenessDefaults(b *testing.B) {
	var r liveResult
	for b.Loop() {
		r = runLive(b, liveWorld{hosts: 4, perHost: 50, run: 200 * time.Second, warm: 50 * time.Second})
	}
	b.ReportMetric(r.weft, "stale-weft")
	b.ReportMetric(r.uniform, "stale-uniform")
	b.ReportMetric(float64(r.live), "live-requests")
	b.ReportMetric(r.uniform/r.weft, "uniform/weft")
	b.ReportMetric(r.even/r.weft, "even/weft")
	b.ReportMetric(r.uniform/r.optimum, "uniform/optimum")
}
