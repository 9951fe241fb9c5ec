package recrawl

import "math"

// HostPrior is an empirical-Bayes prior for the pages of one host (or any
// group of pages thought alike): the visits of all its pages pooled, with
// the same decayed counts as a History. A page not yet visited twice
// starts from the rate its host's pages have shown rather than from a
// fixed guess (Policy.Prior, --recrawl-prior), which is kept for a host
// with no history: a fixed once-a-day prior starves a page of a fast host
// that happened not to change between its first visits, and visits the
// pages of a static host too often. It is 24 bytes; the crawler keeps a
// bounded cache of them and stores them.
type HostPrior struct {
	Visits, Changes, Span float64 // pooled intervals, those that saw a change, and their seconds; decayed
}

// HostDecay is the weight a pooled interval keeps per later interval of
// the host: the prior follows about the last 1/(1-HostDecay) = 1,000
// visits of the host's pages.
const HostDecay = 0.999

// Observe pools one interval of a page of the host: seconds long, and
// whether it found the page changed.
func (p *HostPrior) Observe(seconds float64, changed bool) {
	if !(seconds > 0) || math.IsInf(seconds, 0) {
		return
	}
	p.Visits = p.Visits*HostDecay + 1
	p.Span = p.Span*HostDecay + seconds
	p.Changes *= HostDecay
	if changed {
		p.Changes++
	}
}

// ObserveVisit pools the interval a visit at h's new state closed: prev is
// the page's history before the visit, next after it.
func (p *HostPrior) ObserveVisit(prev, next History) {
	if prev.Last.IsZero() || !next.Last.After(prev.Last) {
		return
	}
	p.Observe(next.Last.Sub(prev.Last).Seconds(), next.Unchanged == 0)
}

// HostEvidence is the pooled intervals a host's prior needs before it is
// believed: until then its pages start from the configured prior. A few
// unchanged first intervals say little of a host, and believed at once
// they would push its other pages' first revisits far out.
const HostEvidence = 20

// Rate is the host's change rate per second, by the estimator of History
// over the pooled counts, with fallback (the configured prior) counted as
// one interval more; fallback itself until the host has HostEvidence
// intervals pooled.
func (p HostPrior) Rate(fallback float64) float64 {
	if p.Visits < HostEvidence {
		return fallback
	}
	return History{Visits: p.Visits, Changes: p.Changes, Span: p.Span}.Rate(fallback)
}
