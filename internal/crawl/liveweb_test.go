package crawl

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/synthweb"
)

// Helpers to measure a continuous crawl of a synthetic web's live pages
// (synthweb.Config.LivePages) from the server's log: which fetches each
// page had, how stale its copy was, what a uniform recrawler with as many
// requests would have had, and what the best schedule at that budget
// would have.

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

// livePages returns the canonical URLs of the web's live pages.
func livePages(web *synthweb.Web) []string {
	var out []string
	for _, p := range web.AllPages() {
		if p.Role == "live" {
			out = append(out, p.URL)
		}
	}
	return out
}

// liveStaleness is the average over the live pages of the share of
// [from, end] during which the copy last fetched was out of date: from
// the page's first change after a fetch (or after from, before the first
// fetch, counted stale whole) to the next fetch or end.
func liveStaleness(web *synthweb.Web, fetched map[string][]time.Time, from, end time.Time) float64 {
	pages := livePages(web)
	var sum float64
	for _, u := range pages {
		sum += liveStaleness1(web, fetched[u], u, from, end)
	}
	return sum / float64(len(pages))
}

// liveStaleness1 is liveStaleness of the one page url, fetched at visits.
func liveStaleness1(web *synthweb.Web, visits []time.Time, url string, from, end time.Time) float64 {
	changes, _, _ := web.LiveChanges(url, end)
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

// liveRequests counts fetched's requests by host name (without the port:
// another web's differs).
func liveRequests(fetched map[string][]time.Time) map[string]int {
	perHost := map[string]int{}
	for u, v := range fetched {
		perHost[hostName(u)] += len(v)
	}
	return perHost
}

// hostName is the host of an http URL, without its port.
func hostName(url string) string {
	rest, _ := strings.CutPrefix(url, "http://")
	a, _, _ := strings.Cut(rest, "/")
	name, _, _ := strings.Cut(a, ":")
	return name
}

// uniformVisits is a uniform recrawler's schedule: perHost[h] requests
// to host h (by name, without the port) spread evenly over [start, end),
// the host's live pages in turn. A conditional request at t is answered
// with the page as it is at t, so that its staleness, measured like
// weft's from the web's true change times, is what the server's log of
// such a recrawler would show, without running it for as long again.
func uniformVisits(web *synthweb.Web, perHost map[string]int, start, end time.Time) map[string][]time.Time {
	visits := map[string][]time.Time{}
	byHost := map[string][]string{}
	for _, u := range livePages(web) {
		byHost[hostName(u)] = append(byHost[hostName(u)], u)
	}
	for name, pages := range byHost {
		n := perHost[name]
		if n == 0 {
			continue
		}
		slices.SortFunc(pages, func(a, b string) int { return liveNumber(a) - liveNumber(b) })
		gap := end.Sub(start) / time.Duration(n)
		for i := range n {
			u := pages[i%len(pages)]
			visits[u] = append(visits[u], start.Add(time.Duration(i)*gap))
		}
	}
	return visits
}

// uniformAt is a uniform recrawler given the very request slots weft had:
// each host's live pages in turn, one at each time weft requested one of
// them. A recrawler in weft's place gets the slots the host's clock gives
// (politeness: the delay, and the latency factor, which stretches the gap
// after a slow fetch on a loaded machine), not an even spread, so this is
// the comparison of the schedules alone, at an equal request count.
func uniformAt(web *synthweb.Web, fetched map[string][]time.Time) map[string][]time.Time {
	slots := map[string][]time.Time{}
	for u, v := range fetched {
		slots[hostName(u)] = append(slots[hostName(u)], v...)
	}
	byHost := map[string][]string{}
	for _, u := range livePages(web) {
		byHost[hostName(u)] = append(byHost[hostName(u)], u)
	}
	visits := map[string][]time.Time{}
	for name, pages := range byHost {
		slices.SortFunc(pages, func(a, b string) int { return liveNumber(a) - liveNumber(b) })
		ts := slots[name]
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
		for i, t := range ts {
			u := pages[i%len(pages)]
			visits[u] = append(visits[u], t)
		}
	}
	return visits
}

// liveNumber is k of a live page's URL, .../live/k.
func liveNumber(url string) int {
	_, k, _ := strings.Cut(url, "/live/")
	n, _ := strconv.Atoi(k)
	return n
}

// optimalRates is the best schedule for pages that change as Poisson
// processes of the given mean intervals, given budget fetches a second
// in all: each page's fetches a second (Cho and Garcia-Molina,
// "Synchronizing a database to improve freshness", SIGMOD 2000). Visited
// every T, a page of rate r is stale S(T) = 1 - (1 - e^(-rT))/(rT) of
// the time; the sum of S is least, for a fixed sum of the visit rates
// f = 1/T, where every page has the same dS/df, which is
// -(1 - (1 + rT)e^(-rT))/r: a page whose 1/r is under that slope is best
// not visited at all (it changes too often for a visit to buy much).
// The slope is found by bisection. A page that never changes has rate 0.
func optimalRates(intervals []time.Duration, budget float64) []float64 {
	rates := make([]float64, len(intervals))
	for i, d := range intervals {
		if d > 0 {
			rates[i] = 1 / d.Seconds()
		}
	}
	at := func(mu float64, f []float64) float64 {
		var sum float64
		for i, r := range rates {
			f[i] = optimalRate(r, mu)
			sum += f[i]
		}
		return sum
	}
	f := make([]float64, len(rates))
	lo, hi := 1e-15, 1e15 // the slope: a larger one spends less
	for range 200 {
		mu := math.Sqrt(lo * hi)
		if at(mu, f) > budget {
			lo = mu
		} else {
			hi = mu
		}
	}
	at(hi, f)
	return f
}

// optimalRate is the visit rate at which a page of change rate r has
// slope mu: the f = r/x where 1 - (1 + x)e^(-x) = mu × r.
func optimalRate(r, mu float64) float64 {
	t := mu * r
	if r <= 0 || t >= 1 {
		return 0
	}
	lo, hi := 0.0, 1e6
	for range 100 {
		x := (lo + hi) / 2
		if -math.Expm1(-x)-x*math.Exp(-x) >= t {
			hi = x
		} else {
			lo = x
		}
	}
	return r / hi
}

// periodicStaleness is S(T) of a page of change interval d visited f
// times a second, evenly.
func periodicStaleness(d time.Duration, f float64) float64 {
	if d <= 0 {
		return 0
	}
	if f <= 0 {
		return 1
	}
	x := 1 / (d.Seconds() * f)
	return 1 + math.Expm1(-x)/x
}
