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
//
// A page whose answers carry a Last-Modified date that keeps faith with
// its content (a date that moves when, and only when, the page changes)
// says more: when it last changed, so how long it has gone unchanged.
// Its rate is then the maximum-likelihood estimate for a Poisson process
// observed that way (Cho and Garcia-Molina's section on last-modified
// dates): the changes dated, over the seconds the page is known to have
// gone without one (its age at each change seen, the whole interval of a
// visit that found none). The first visit alone tells a page that
// changed a second ago from one unchanged for a year, which visits alone
// take dozens of visits to tell (see ObserveModified).
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
	// Unchanged counts the visits in a row, up to the last, that found
	// no change: past BackoffAfter of them the page backs off (Policy).
	// A visit that got an error counts among them (ObserveError).
	Unchanged int
	// Errors counts the visits in a row, up to the last, that got no
	// page: an error status, or no answer at all (ObserveError). Gone
	// says the last of them was a 404 or 410. They back the URL off
	// faster than unchanged visits do (Policy.ErrorBackoff).
	Errors int
	Gone   bool
	// Dating is what the page's Last-Modified dates taught.
	Dating
}

// Dating is what a page's Last-Modified dates taught (ObserveModified):
// decayed counts, like History's, of the changes they dated and of the
// seconds the page is known to have gone without a change.
type Dating struct {
	Dated    float64   // changes dated, the one before the first visit included; decayed
	Exposed  float64   // seconds known to be without a change; decayed
	Modified time.Time // the last Last-Modified seen; zero before the first
	// Undated says the page's Last-Modified proved not to date its
	// changes (it moved with the page unchanged, or stood still while the
	// page changed, or lay in the future): its visits alone count.
	Undated bool
}

// ModifiedSkew is how far into the future, by the server's own clock, a
// Last-Modified may lie before it is taken for a broken date rather than
// a clock a second or so apart.
const ModifiedSkew = time.Minute

// dated reports whether the rate comes from the dates (Rate).
func (d Dating) dated() bool { return !d.Undated && d.Dated > 0 }

// ObserveModified records a visit at t, as Observe does, whose answer
// carried the Last-Modified date modified (for a 304 that names none,
// pass the one before; zero for an answer without one) and the server's
// Date (date; zero means t): the page's age
// is read on the server's clock, date minus modified, so that the two
// machines' clocks need not agree. The first dated visit counts the
// change that made the page as it is and the age it has had since; a
// later one that found a change counts it and its age (at most the
// interval: it happened since the last visit), one that found none the
// whole interval. A date that moves while the page stays the same, or
// stays while the page changes, or lies more than ModifiedSkew ahead of
// the server's clock, or is missing from an answer of a page that had
// one, marks the page Undated for good: a date that does
// not follow the content (a page stamped with the time it was served, or
// a template's date) would count changes that never were or hide those
// that were.
func (h *History) ObserveModified(t time.Time, changed bool, modified, date time.Time) {
	prev := *h
	h.Observe(t, changed)
	if h.Undated {
		return
	}
	if modified.IsZero() {
		// An answer without the date a dated page's answers had: its
		// dates can no longer be followed.
		h.Undated = !prev.Modified.IsZero()
		return
	}
	if date.IsZero() {
		date = t
	}
	age := date.Sub(modified)
	if age < -ModifiedSkew {
		h.Undated = true
		return
	}
	secs := max(age.Seconds(), 0)
	switch {
	case prev.Modified.IsZero() || prev.Last.IsZero():
		h.Dated, h.Exposed, h.Modified = 1, secs, modified
	case !t.After(prev.Last):
		// Not a new interval (a visit out of order): nothing to date.
	case changed != modified.After(prev.Modified) || !changed && !modified.Equal(prev.Modified):
		h.Undated = true
	case changed:
		h.Dated = h.Dated*Decay + 1
		h.Exposed = h.Exposed*Decay + min(secs, t.Sub(prev.Last).Seconds())
		h.Modified = modified
	default:
		h.Dated *= Decay
		h.Exposed = h.Exposed*Decay + t.Sub(prev.Last).Seconds()
	}
}

// Decay is the weight an interval keeps per later visit: the estimate
// forgets a behaviour in about 1/(1-Decay) = 50 visits. (0.9 and 0.95
// learnt less well in the simulation of sim_test.go.)
const Decay = 0.98

// Observe records a visit at t that got the page and found it changed (or
// not: a 304, or the same payload digest) since the previous visit, or
// that was answered without it but not with an error (a redirect). It
// ends a run of errors.
func (h *History) Observe(t time.Time, changed bool) {
	if h.Last.IsZero() || t.After(h.Last) {
		h.Errors, h.Gone = 0, false
	}
	h.observe(t, changed)
}

// ObserveError records a visit at t that got no page: an error status
// (gone: a 404 or 410, which says the page is not there) or no answer at
// all. It says nothing of how the page changes, and it is counted as a
// visit that found the page as it was (an unchanged visit, dated like one
// when the page's Last-Modified dates it), so that a URL that keeps
// failing is never due sooner than one that keeps not changing; and as
// one more error in a row, which backs it off faster still
// (Policy.ErrorBackoff).
func (h *History) ObserveError(t time.Time, gone bool) {
	prev := *h
	h.observe(t, false)
	if !prev.Last.IsZero() && !t.After(prev.Last) {
		return // not a new visit (out of order): nothing to count
	}
	h.Errors, h.Gone = min(prev.Errors+1, math.MaxInt32), gone
	if h.dated() && !prev.Last.IsZero() {
		// As ObserveModified counts a dated visit that found no change.
		h.Dated *= Decay
		h.Exposed = h.Exposed*Decay + t.Sub(prev.Last).Seconds()
	}
}

func (h *History) observe(t time.Time, changed bool) {
	if !h.Last.IsZero() && t.After(h.Last) {
		h.Visits = h.Visits*Decay + 1
		h.Span = h.Span*Decay + t.Sub(h.Last).Seconds()
		h.Changes *= Decay
		if changed {
			h.Changes++
			h.Unchanged = 0
		} else if h.Unchanged < math.MaxInt32 {
			h.Unchanged++
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
//
// A page whose Last-Modified dates its changes (Dating) needs no prior:
// its rate is the changes dated over the seconds known without one, the
// maximum-likelihood estimate, with half a second added to those seconds
// (a date's resolution is a second, and a page seen the instant it
// changed is not infinitely fast).
func (h History) Rate(prior float64) float64 {
	if h.dated() {
		return h.Dated / (h.Exposed + 0.5)
	}
	prior = max(prior, 0)
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
	// Uniform turns learning off, for comparison: every URL is due once
	// Min has passed, and the one unvisited longest goes first, so a busy
	// crawl visits its pages in turn.
	Uniform bool
	// Floor is the least Score a visit must promise (seconds of freshness,
	// importance-weighted) for the URL to be due, however idle the crawl;
	// zero means a tenth of Min. It keeps spare capacity from refetching
	// pages that hardly change every Min: politeness to hosts the crawl
	// has nothing better to ask of.
	Floor float64
	// NoBackoff turns the back-off off (see Backoff), for comparison.
	NoBackoff bool
}

// The back-off of a page that keeps not changing (and whose rate its
// Last-Modified dates do not give: those tell it at once): from the
// BackoffAfter-th visit in a row that found no change, the interval before
// the next visit is at least Min × BackoffFactor^(n - BackoffAfter + 1)
// after n such visits, whatever the estimator says, until a visit finds a
// change. It applies only while the page's decayed count of changes seen
// is under BackoffChanges (never seen to change, or not for about 35
// visits), where the rate comes from the prior more than from the page,
// and it is capped at BackoffCap times the estimator's own interval, so
// that a run of luck cannot starve a page. The estimator alone forgets
// its prior only as fast as visits accumulate (its rate falls as one over
// their number). Measured in sim_test.go, a larger cap or no change
// condition costs more staleness than it saves: a page that changes weekly
// and is visited hourly routinely goes tens of visits without a change.
const (
	BackoffAfter   = 5
	BackoffFactor  = 1.5
	BackoffChanges = 0.5
	BackoffCap     = 1.5
)

// Backoff is the least interval after h's last visit that the back-off
// allows (zero when it does not apply): the geometric one, but at most
// BackoffCap times the interval the estimator alone gives, so that a page
// whose rate is learnt is not starved by a long run of luck.
func (p Policy) Backoff(h History, importance float64) time.Duration {
	p = p.WithDefaults()
	d := p.geometric(h)
	if d == 0 {
		return 0
	}
	if est := p.interval(h, importance); float64(d) > BackoffCap*float64(est) {
		d = time.Duration(BackoffCap * float64(est))
	}
	return min(d, p.Max)
}

// The back-off of a URL whose visits keep getting no page (History.Errors):
// after n errors in a row the interval before the next visit is at least
// Min × GoneFactor^n when the last said the page is gone (404, 410), and
// Min × ErrorFactor^n after any other (a 5xx, no answer), up to Max. It
// starts at the first error, and it is not capped by the estimator's
// interval as the unchanged back-off is: that interval was learnt from the
// page's content, which an error does not show, and a page that answers
// again is a page like any other from its next visit on. A transient
// error is tried again soon (twice Min after the first), a page that has
// gone only a few times soon: after five 404s in a row it waits 1,024
// times Min (a week at the default ten minutes), after seven Max (90
// days); after five 5xxs, 32 times Min (over five hours).
const (
	ErrorFactor = 2
	GoneFactor  = 4
)

// ErrorBackoff is the least interval after h's last visit that h's errors
// in a row allow: zero when the last visit got the page.
func (p Policy) ErrorBackoff(h History) time.Duration {
	p = p.WithDefaults()
	return p.errorBackoff(h)
}

// errorBackoff is ErrorBackoff: p has its defaults.
func (p Policy) errorBackoff(h History) time.Duration {
	if h.Errors <= 0 {
		return 0
	}
	f := float64(ErrorFactor)
	if h.Gone {
		f = GoneFactor
	}
	if s := p.Min.Seconds() * math.Pow(f, float64(h.Errors)); s < p.Max.Seconds() {
		return time.Duration(s * float64(time.Second))
	}
	return p.Max
}

// geometric is the back-off before its cap: p has its defaults.
func (p Policy) geometric(h History) time.Duration {
	if p.NoBackoff || p.Uniform || h.Unchanged < BackoffAfter || h.Changes >= BackoffChanges || h.dated() {
		return 0
	}
	f := math.Pow(BackoffFactor, float64(h.Unchanged-BackoffAfter+1))
	if s := p.Min.Seconds() * f; s < p.Max.Seconds() {
		return time.Duration(s * float64(time.Second))
	}
	return p.Max
}

// WithDefaults returns p with its zero (or invalid) fields set to the
// defaults.
func (p Policy) WithDefaults() Policy {
	if p.Min <= 0 {
		p.Min = 10 * time.Minute
	}
	if p.Max < p.Min {
		p.Max = max(90*24*time.Hour, p.Min)
	}
	if !(p.Prior > 0) || math.IsInf(p.Prior, 0) { // NaN too
		p.Prior = 1.0 / 86400
	}
	if !(p.Floor > 0) || math.IsInf(p.Floor, 0) {
		p.Floor = p.Min.Seconds() / 10
	}
	return p
}

// Due reports whether a URL may be fetched again at now: Min (and the
// Backoff, and the ErrorBackoff) has passed since its last visit and its
// Score reaches the Floor, or Max has passed.
// The crawl fetches the due URLs it has room for, highest Score first.
func (p Policy) Due(h History, importance float64, now time.Time) bool {
	p = p.WithDefaults()
	age := now.Sub(h.Last)
	if h.Last.IsZero() || age >= p.Max {
		return true
	}
	if age < p.errorBackoff(h) {
		return false
	}
	if p.Uniform {
		return age >= p.Min
	}
	if age < p.Min || p.Score(h, importance, now) < p.Floor {
		return false
	}
	if age >= p.geometric(h) { // zero when the back-off does not apply
		return true
	}
	// The geometric back-off holds the page unless its cap, BackoffCap
	// times the estimator's interval, has passed. Score rises with age, so
	// that interval is at most age/BackoffCap exactly when the Score at
	// that age reaches the Floor: one Score, not interval's bisection.
	return p.intervalAtMost(h, importance, time.Duration(float64(age)/BackoffCap))
}

// intervalAtMost reports whether interval(h, importance) <= d, as interval
// would find it up to its bisection's precision, for a Due that has gone
// past its other tests: p has its defaults and is not Uniform, d is below
// Max, and the Score reaches the Floor at some age, so the interval is
// the age at which it does, at least Min.
func (p Policy) intervalAtMost(h History, importance float64, d time.Duration) bool {
	return d >= p.Min && scoreAt(h.Rate(p.Prior), importance, d.Seconds()) >= p.Floor
}

// Next is when a URL last visited at h.Last becomes Due: the age at which
// its Score reaches the Floor, at least the Backoff and the ErrorBackoff,
// clamped to [Min, Max]. It is spread by up to a tenth (never past Max),
// by a hash of the URL, so that the URLs of a host found together do not
// come due at the same instant.
func (p Policy) Next(url string, h History, importance float64) time.Time {
	p = p.WithDefaults()
	d := max(p.interval(h, importance), p.Backoff(h, importance), p.errorBackoff(h))
	f := fnv.New64a()
	f.Write([]byte(url))
	spread := float64(f.Sum64()%1000) / 10000 // [0, 0.1)
	return h.Last.Add(min(d+time.Duration(float64(d)*spread), p.Max))
}

// interval is the age at which h's Score reaches the Floor, clamped to
// [Min, Max]: p has its defaults.
func (p Policy) interval(h History, importance float64) time.Duration {
	rate := h.Rate(p.Prior)
	d := p.Max
	if p.Uniform {
		d = p.Min
	}
	// Score rises with age towards importance/rate: solve Score = Floor
	// by bisection when it is reachable.
	if !p.Uniform && rate > 0 && importance/rate > p.Floor {
		lo, hi := 0.0, p.Max.Seconds()
		for range 60 {
			mid := (lo + hi) / 2
			if scoreAt(rate, importance, mid) >= p.Floor {
				hi = mid
			} else {
				lo = mid
			}
		}
		d = time.Duration(hi * float64(time.Second))
	}
	return min(max(d, p.Min), p.Max)
}

// Score is the value of visiting now, the index of the optimal refresh
// policy: of the URLs Due, the crawl fetches as many as its hosts' clocks
// allow, in falling score order. For a page that
// changes as a Poisson process at rate r, refreshed every T, the share of
// time its copy is stale is S(T) = 1 - (1 - e^(-rT))/(rT). Spending a
// budget of visits to minimise the importance-weighted sum of S, each
// page's best T is where importance × T² × S'(T) equals the same constant
// for every page (the budget's Lagrange multiplier), so visiting, at each
// step, the page whose
//
//	importance × ((1 - e^(-r·age))/r - age·e^(-r·age))
//
// is highest visits every page near its best period: the constant is
// whatever score the last URL the budget reaches has, so the budget is
// spent whole without the constant being known. The index is small
// for a page that changes far faster than it can be visited (a visit buys
// it at most 1/r of freshness) and for one that hardly changes, and grows
// with importance: a popular page that changes weekly outranks an obscure
// one that changes hourly once it has gone long enough unvisited.
func (p Policy) Score(h History, importance float64, now time.Time) float64 {
	p = p.WithDefaults()
	if h.Last.IsZero() {
		return math.Inf(1) // never fetched: all of it is news
	}
	if p.Uniform {
		return max(now.Sub(h.Last).Seconds(), 0)
	}
	rate := h.Rate(p.Prior)
	if rate <= 0 {
		return 0
	}
	return scoreAt(rate, importance, max(now.Sub(h.Last).Seconds(), 0))
}

func scoreAt(rate, importance, age float64) float64 {
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
// because links are a biased, cheap stand-in for popularity:
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
