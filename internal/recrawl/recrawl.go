// Package recrawl decides when a page is fetched again: it learns each
// URL's rate of change from its own visits and turns that rate, and the
// page's importance, into a next-visit time and a priority.
//
// A crawler sees a page only when it visits, so it can tell that a page
// changed between two visits, never how many times. The naive rate,
// changes seen over time elapsed, undercounts a page that changes more
// often than it is visited, and says zero for one never seen to change.
// Cho and Garcia-Molina ("Estimating frequency of change", ACM TOIT 2003)
// give the estimator used here, for visits at a regular interval I, n
// visits of which X saw a change:
//
//	r = -ln((n - X + 0.5) / (n + 0.5)) / I
//
// which stays finite when every visit saw a change and is nearly unbiased
// for a Poisson process well past one change per visit. Visits here are
// not regular, so I is the mean interval; the counts decay by a factor per
// visit, so a page whose habits change is learnt again; and a prior rate
// counts as one visit more (see Rate).
package recrawl

import (
	"hash/fnv"
	"math"
	"time"
)

// History is what a URL's visits taught: decayed counts of visits and of
// visits that found a change, and the time they spanned.
type History struct {
	Visits  float64   // intervals observed (visits after the first), decayed
	Changes float64   // of which found the page changed, decayed
	Span    float64   // seconds those intervals add up to, decayed
	Last    time.Time // the last visit; zero before the first
}

// Decay is the weight an interval keeps per later visit: the estimate
// forgets a behaviour in about 1/(1-Decay) = 50 visits. (0.9 and 0.95
// learnt less well in the simulation of sim_test.go.)
const Decay = 0.98

// Observe records a visit at t that found the page changed (or not: a 304,
// or the same payload digest) since the previous visit.
func (h *History) Observe(t time.Time, changed bool) {
	if !h.Last.IsZero() && t.After(h.Last) {
		h.Visits = h.Visits*Decay + 1
		h.Span = h.Span*Decay + t.Sub(h.Last).Seconds()
		h.Changes *= Decay
		if changed {
			h.Changes++
		}
	}
	if t.After(h.Last) {
		h.Last = t
	}
}

// Rate returns the estimated changes per second. The prior rate counts as
// one visit more, which saw a change with the chance the prior gives: so
// a page not yet seen to change gets a small rate that falls with each
// unchanged visit, rather than zero after one (which would never be
// visited again), and a new page the prior itself.
func (h History) Rate(prior float64) float64 {
	if h.Visits <= 0 || h.Span <= 0 {
		return prior
	}
	interval := h.Span / h.Visits
	n := h.Visits + 1
	x := min(h.Changes, h.Visits) - math.Expm1(-prior*interval)
	return -math.Log((n-x+0.5)/(n+0.5)) / interval
}

// Policy turns a history and an importance into a schedule.
type Policy struct {
	// Min and Max clamp the interval between two visits of a URL; zero
	// means 10 minutes and 90 days.
	Min, Max time.Duration
	// Prior is the change rate assumed before a URL has two visits (per
	// second); zero means once a day.
	Prior float64
	// Target is the chance that the page has changed at which it is due:
	// zero means 0.5, a visit about every 0.7/rate.
	Target float64
}

func (p Policy) withDefaults() Policy {
	if p.Min <= 0 {
		p.Min = 10 * time.Minute
	}
	if p.Max <= 0 {
		p.Max = 90 * 24 * time.Hour
	}
	if p.Prior <= 0 {
		p.Prior = 1.0 / 86400
	}
	if p.Target <= 0 || p.Target >= 1 {
		p.Target = 0.5
	}

	return p
}

// Interval is the wait after a visit before the URL is due again: the
// time for the chance of a change to reach Target, shortened for
// important pages (by the square root of importance, so a page ten times
// as important is visited about three times as often), clamped to [Min,
// Max]. importance is 1 for an ordinary page (see Importance).
func (p Policy) Interval(h History, importance float64) time.Duration {
	p = p.withDefaults()
	rate := h.Rate(p.Prior)
	if rate <= 0 {
		return p.Max
	}
	sec := -math.Log(1-p.Target) / rate / math.Sqrt(max(importance, 1e-3))
	d := time.Duration(min(sec, p.Max.Seconds()) * float64(time.Second))
	return min(max(d, p.Min), p.Max)
}

// Next is when a URL visited last at h.Last is due again. The interval is
// spread by up to a tenth, by a hash of the URL, so that the URLs of a
// host found together do not all come due at the same instant.
func (p Policy) Next(url string, h History, importance float64) time.Time {
	d := p.Interval(h, importance)
	f := fnv.New64a()
	f.Write([]byte(url))
	spread := float64(f.Sum64()%1000) / 10000 // [0, 0.1)
	return h.Last.Add(d + time.Duration(float64(d)*spread))
}

// Score is the value of visiting now, the index of the optimal refresh
// policy: due URLs are fetched in falling score order. For a page that
// changes as a Poisson process at rate r, refreshed every T, the share of
// time its copy is stale is S(T) = 1 - (1 - e^(-rT))/(rT). Spending a
// budget of visits to minimise the importance-weighted sum of S, each
// page's best T is where importance × T² × S'(T) equals the same constant
// for every page (the budget's Lagrange multiplier), so visiting, at each
// step, the page whose
//
//	importance × ((1 - e^(-r·age))/r - age·e^(-r·age))
//
// is highest visits every page near its best period. The index is small
// for a page that changes far faster than it can be visited (a visit buys
// it at most 1/r of freshness) and for one that hardly changes, and grows
// with importance: a popular page that changes weekly outranks an obscure
// one that changes hourly once it has gone long enough unvisited.
func (p Policy) Score(h History, importance float64, now time.Time) float64 {
	p = p.withDefaults()
	if h.Last.IsZero() {
		return math.Inf(1) // never fetched: all of it is news
	}
	rate := h.Rate(p.Prior)
	if rate <= 0 {
		return 0
	}
	age := max(now.Sub(h.Last).Seconds(), 0)
	return importance * (-math.Expm1(-rate*age)/rate - age*math.Exp(-rate*age))
}

// Signals are what a crawl knows of a page's importance.
type Signals struct {
	InLinks  int     // distinct pages seen linking to it
	Seed     bool    // listed as a seed
	Priority float64 // its sitemap <priority>, -1 if none
	// LastMod is its sitemap <lastmod>, zero if none; one newer than the
	// last visit also pulls the visit forward (the crawler's business).
	LastMod time.Time
}

// Importance is
//
//	(1 + log2(1 + in-links)) × (2 if a seed) × (0.5 + sitemap priority)
//
// with a sitemap priority of 0.5 when none is given: 1 for an ordinary
// page with no in-links, 2 with one, 4 with seven; a seed counts double;
// a sitemap's priority 1.0 adds half, 0.0 halves. Logarithmic in in-links
// because links are a biased, cheap stand-in for popularity (seed 000):
// the thousandth link says less than the first.
func Importance(s Signals) float64 {
	w := 1 + math.Log2(1+float64(max(s.InLinks, 0)))
	if s.Seed {
		w *= 2
	}
	prio := s.Priority
	if prio < 0 || prio > 1 {
		prio = 0.5
	}
	return w * (0.5 + prio)
}
