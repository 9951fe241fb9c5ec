// Package importance estimates how much a URL is worth fetching soon, from
// the links to it that the crawl has met so far, while the URL waits in
// the queue.
//
// It is OPIC, Abiteboul, Preda and Cobena's on-line page importance
// computation (WWW 2003), in fixed memory: every page fetched hands out
// cash to the pages it links to, and a page's estimate is the cash it has
// been given. A fetched page hands out one Unit of its own (PageRank's
// teleport share, so that every page counts) plus all the cash its own
// in-links gave it (so that a link from an important page is worth more
// than one from a page nobody links to), split over its distinct links.
// A link to another host weighs CrossHost times a link within the host:
// a site's navigation links every page of it, and says less about a page
// than another site's choice to link to it. Unlike OPIC, a page keeps its
// cash once fetched (the counts cannot be taken back from a sketch); a
// page is fetched once a crawl, so it hands its cash out once.
//
// The cash of every URL is kept in a count-min sketch of sums (package
// sketch): bounded by configuration whatever the crawl meets, at the
// price of estimates that may run high when many URLs share counters.
//
// A URL is queued with a Rank: its cash plus two weak priors, one from
// its depth (a link nearer a seed, by a little) and one from what a
// sitemap says of it (its <priority> and a recent <lastmod>); each is
// worth about one in-link. When a URL already queued is credited so much
// more that its estimate crosses a power of two (Credit's promote), the
// crawl queues it again at the new rank: the frontier serves the copy
// that ranks higher first, and the crawl drops the other when it is
// leased after the page was fetched.
//
// An operator's boost (package policy) multiplies the rank a URL is
// queued with (Boost): it moves the URL among its host's, and to the high
// front queue if it reaches HighRank, but never changes when the host is
// asked. Explain breaks a URL's rank into these parts, for the operator.
package importance

import (
	"math"
	"math/bits"
	"sync"
	"time"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/sketch"
)

// Unit is the cash a fetched page hands out of its own.
const Unit = 256

// CrossHost is how many times a link to another host weighs more than a
// link within the page's host.
const CrossHost = 4

// maxHandout bounds what one page hands out, so that a cycle of pages
// cannot run the sums up to saturation.
const maxHandout = 1 << 24 // well under sketch.MaxSum

// promoteFrom is the least estimate at which a URL already queued is
// queued again: about eight in-links from other hosts' pages of a
// hundred links, or one link from a page of four.
const promoteFrom = Unit / 4

// HighRank is the rank from which a URL goes to the high-priority front
// queue, where it is taken into its host's queue before the rest: the
// cash of about thirty in-links from other hosts' ordinary pages.
const HighRank = Unit

// DefaultBytes is the sketch's size when none is given: 16 MiB, about
// right for a few million URLs.
const DefaultBytes = 16 << 20

// Estimator keeps the cash of every URL. It is safe for concurrent use.
type Estimator struct {
	cash *sketch.Sums

	mu      sync.Mutex
	fetched *bloom.BloomFilter // the URLs fetched (Credit, Fetched)
}

// New returns an Estimator for about urls URLs whose sketch takes about
// bytes (zero: DefaultBytes). Its Bloom filter of the pages fetched takes
// 10 bits a URL (1 % false positives at urls, more past it).
func New(bytes int, urls uint) *Estimator {
	if bytes <= 0 {
		bytes = DefaultBytes
	}
	return &Estimator{cash: sketch.NewSums(bytes), fetched: bloom.NewWithEstimates(max(urls, 1<<16), 0.01)}
}

// Cash is what the links met so far gave the URL of key.
func (e *Estimator) Cash(k seen.Key) uint32 { return e.cash.Sum(k) }

// Handout is what the fetched page of key hands out over its links.
func (e *Estimator) Handout(page seen.Key) uint32 {
	return min(Unit+e.cash.Sum(page), maxHandout)
}

// Votes are a fetched page's distinct links, each of a LinkKind; Credit
// gives each its share of the page's cash. A Votes is reused from page to
// page (Reset): a page has about a hundred links.
type Votes struct {
	m                    map[seen.Key]vote
	same, cross, variant int
}

type vote struct {
	kind    LinkKind
	rank    uint32 // the linked URL's estimate once credited
	promote bool
}

// LinkKind is what a link is to the page it is on, which weighs its vote.
type LinkKind uint8

const (
	// SameHost: a link to another page of the page's host: one share.
	SameHost LinkKind = iota
	// OtherHost: a link to another host: CrossHost shares.
	OtherHost
	// Variant: a link to a variant of the page itself, the same path
	// with a query that sets a parameter to a word (a facet's filter, a
	// sort order, another search): a quarter of a share. A faceted
	// search's every page links its dozens of variants, each of them
	// linked from all the others, so that they gathered more cash than
	// the products and next pages a listing leads to, and were fetched
	// first, combination after combination, while a variant that only
	// sets numbers (the next page, an item's id) is a page like any other.
	Variant
)

// variantShares is how many of a Variant's votes weigh one of SameHost's.
const variantShares = 4

// KindOf returns what a link to link is on the page of page.
func KindOf(page, link canon.URL) LinkKind {
	switch {
	case link.Authority != page.Authority:
		return OtherHost
	case link.Query != "" && link.Path == page.Path && link.Scheme == page.Scheme && setsWord(page.Query, link.Query):
		return Variant
	}
	return SameHost
}

// setsWord reports whether query q has a parameter (name=value) that the
// page's query pq has not, whose value is not a number.
func setsWord(pq, q string) bool {
	for name, value := range canon.Params(q) {
		if was, in := canon.ParamValue(pq, name); !canon.IsNumber(value) && (!in || was != value) {
			return true
		}
	}
	return false
}

// NewVotes returns an empty Votes.
func NewVotes() *Votes { return &Votes{m: map[seen.Key]vote{}} }

// Add counts a link of kind to the URL of key, once however often the
// page names it.
func (v *Votes) Add(k seen.Key, kind LinkKind) {
	if _, ok := v.m[k]; ok {
		return
	}
	v.m[k] = vote{kind: kind}
	switch kind {
	case OtherHost:
		v.cross++
	case Variant:
		v.variant++
	default:
		v.same++
	}
}

// Len is the number of distinct links counted.
func (v *Votes) Len() int { return len(v.m) }

// Keys calls fn with the key of each distinct link.
func (v *Votes) Keys(fn func(seen.Key)) {
	for k := range v.m {
		fn(k)
	}
}

// Of returns the estimate the URL of key reached when the page's votes
// were credited, and whether it rose enough for the URL to be queued
// again if it is queued already; ok is false for a URL the page did not
// vote for.
func (v *Votes) Of(k seen.Key) (rank uint32, promote, ok bool) {
	if v == nil {
		return 0, false, false
	}
	x, ok := v.m[k]
	return x.rank, x.promote, ok
}

// Reset empties v for the next page; a map grown past keep entries is
// let go (a map does not shrink).
func (v *Votes) Reset(keep int) {
	if len(v.m) > keep {
		v.m = map[seen.Key]vote{}
	} else {
		clear(v.m)
	}
	v.same, v.cross, v.variant = 0, 0, 0
}

// Credit hands out the cash of the fetched page of key over its votes:
// each link to its own host gets one share, each link to another host
// CrossHost shares, each link to a variant of the page a quarter (at
// least 1 each; LinkKind). A link is promoted when its
// estimate crosses a power of two from promoteFrom on, unless it is to a
// URL fetched already (as far as a Bloom filter of the URLs Credit or
// Fetched was given knows): most of a site's links are to its navigation,
// fetched first, and each promotion costs its caller a look into the
// store.
func (e *Estimator) Credit(page seen.Key, v *Votes) {
	e.Fetched(page)
	// In quarter shares: a page without variants splits its cash as if
	// there were no quarters (4h/4w rounds down as h/w does).
	quarters := variantShares*(v.same+CrossHost*v.cross) + v.variant
	if quarters == 0 {
		return
	}
	handout := e.Handout(page)
	share := max(variantShares*handout/uint32(quarters), 1)
	for k, x := range v.m {
		s := share
		switch x.kind {
		case OtherHost:
			s *= CrossHost
		case Variant:
			s = max(handout/uint32(quarters), 1)
		}
		before, after := e.cash.Add(k, s)
		x.rank = after
		x.promote = after >= promoteFrom && bits.Len32(after) > bits.Len32(before) && !e.wasFetched(k)
		v.m[k] = x
	}
}

// Fetched says the URL of key was fetched, whatever came of it: one that
// hands out no cash (a redirect, an error, a page that is not HTML, one
// read before) is not worth queuing again either. Credit says so of its
// page itself.
func (e *Estimator) Fetched(k seen.Key) {
	e.mu.Lock()
	e.fetched.Add(k[:])
	e.mu.Unlock()
}

// wasFetched reports whether the URL of key was fetched (Credit,
// Fetched), but for the Bloom filter's false positives.
func (e *Estimator) wasFetched(k seen.Key) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fetched.Test(k[:])
}

// Rank is the rank a URL is queued with: its cash, and a prior that
// favours, by about one in-link, a link nearer a seed.
func Rank(cash uint32, depth int) uint32 {
	return sat(cash, DepthPrior(depth))
}

// DepthPrior is the part of a URL's rank its depth gives it: about one
// in-link at one hop from a seed, halved with each hop to the fourth.
func DepthPrior(depth int) uint32 {
	return depthPrior >> min(max(depth-1, 0), 3)
}

// Boost is rank r times an operator's boost factor f, rounded, and held
// at the largest rank rather than wrapped; a factor of 1, or one that is
// not a positive number, leaves r as it is.
func Boost(r uint32, f float64) uint32 {
	if f == 1 || !(f > 0) || r == 0 {
		return r
	}
	x := math.Round(float64(r) * f)
	if x >= math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(x)
}

// Estimate is what a URL's rank is made of: the cash its in-links gave
// it, its depth prior, its sitemap prior (Listed), and the operator's
// boost factor, which multiplies their sum into Rank.
type Estimate struct {
	Rank                 uint32
	Cash, Depth, Sitemap uint32
	Boost                float64
}

// Explain is the Estimate of a URL with that cash, depth, sitemap prior
// and boost: the rank it is queued with when it is found now.
func Explain(cash uint32, depth int, sitemap uint32, boost float64) Estimate {
	d := DepthPrior(depth)
	return Estimate{Rank: Boost(sat(sat(cash, d), sitemap), boost), Cash: cash, Depth: d, Sitemap: sitemap, Boost: boost}
}

// depthPrior is the depth prior of a link one hop from a seed: about one
// in-link's share from a page of a hundred links to its own host.
const depthPrior = 8

// Listed is the prior of a page a sitemap lists, from what it says of
// it: up to four in-links for a <priority> of 1 (two for the default 0.5,
// or none given), and four more for a <lastmod> within the last week.
func Listed(priority float64, lastMod, now time.Time) uint32 {
	if priority < 0 || priority > 1 {
		priority = 0.5
	}
	r := uint32(priority * 4 * depthPrior)
	if !lastMod.IsZero() && !lastMod.After(now.Add(time.Hour)) && now.Sub(lastMod) < 7*24*time.Hour {
		r += 4 * depthPrior
	}
	return r
}

// ListedIf is Listed for a page a sitemap lists (in), else 0.
func ListedIf(in bool, priority float64, lastMod, now time.Time) uint32 {
	if !in {
		return 0
	}
	return Listed(priority, lastMod, now)
}

// Priority is the front queue of a link of rank r: high from HighRank,
// else p.
func Priority(r uint32, p frontier.Priority) frontier.Priority {
	if r >= HighRank && p < frontier.High {
		return frontier.High
	}
	return p
}

// sat adds without wrapping.
func sat(a, b uint32) uint32 {
	s, carry := bits.Add32(a, b, 0)
	if carry != 0 {
		return ^uint32(0)
	}
	return s
}
