// Package history keeps a running crawl's recent past in memory, bounded:
// samples of its counters and gauges at a fine interval for the last hour
// (10 s by default) and downsampled to a coarse one for the last day
// (5 min), so that an operator's charts have data from the moment they
// open, whenever that is. It also keeps, for the hosts fetched most
// recently, their last fetches and parks (Hosts).
package history

import (
	"maps"
	"sync"
	"time"
)

// Point is the crawl's counters and gauges at one instant. Counters
// (Pages, Bytes, Errors, Status, Throttled, Unavailable, Latency) only
// grow; a sample is the difference of two points.
type Point struct {
	At          time.Time
	Pages       int64
	Bytes       int64
	Errors      map[string]int64 // requests without a response, by kind
	Status      map[string]int64 // responses by status class ("2xx", ...)
	Throttled   int64            // 429 answers
	Unavailable int64            // 503 answers
	Latency     Histogram        // fetch durations

	Queued, InFlight             int
	Ready, Waiting, Parked, Held int // hosts by state
	ActiveHosts                  int
}

// Histogram is a cumulative histogram of durations: Counts[i] is the
// observations at or under Bounds[i] seconds; Count is all of them (those
// over the last bound too).
type Histogram struct {
	Bounds []float64
	Counts []uint64
	Count  uint64
}

// Sample is what happened in one interval: counters as differences over
// it, gauges as they stood at its end, and the fetch latency's
// percentiles from the histogram's difference.
type Sample struct {
	Start       time.Time        `json:"start"`
	Seconds     float64          `json:"seconds"`
	Pages       int64            `json:"pages"`
	Bytes       int64            `json:"bytes"`
	Errors      map[string]int64 `json:"errors"`
	Status      map[string]int64 `json:"status"`
	Throttled   int64            `json:"throttled"`
	Unavailable int64            `json:"unavailable"`
	Queued      int              `json:"queued"`
	InFlight    int              `json:"in_flight"`
	ActiveHosts int              `json:"active_hosts"`
	Ready       int              `json:"hosts_ready"`
	Waiting     int              `json:"hosts_waiting"`
	Parked      int              `json:"hosts_parked"`
	Held        int              `json:"hosts_held"`
	// P50 and P95 are the fetch latency's median and 95th percentile in
	// seconds, nil when no fetch ended in the interval.
	P50 *float64 `json:"p50_seconds"`
	P95 *float64 `json:"p95_seconds"`

	buckets []uint64 // fetches per latency bucket (not cumulative), the last over every bound
	bounds  []float64
}

// Config sizes a Ring. The zero value is the default: 10 s samples for an
// hour, downsampled to 5 min for a day.
type Config struct {
	Fine       time.Duration // zero means 10 s
	FineKeep   int           // fine samples kept; zero means an hour's worth
	CoarseEach int           // fine samples per coarse one; zero means 30
	CoarseKeep int           // coarse samples kept; zero means a day's worth
}

func (c *Config) defaults() {
	if c.Fine <= 0 {
		c.Fine = 10 * time.Second
	}
	if c.FineKeep <= 0 {
		c.FineKeep = max(1, int(time.Hour/c.Fine))
	}
	if c.CoarseEach <= 0 {
		c.CoarseEach = 30
	}
	if c.CoarseKeep <= 0 {
		c.CoarseKeep = max(1, int(24*time.Hour/(c.Fine*time.Duration(c.CoarseEach))))
	}
}

// Ring is the bounded history: it takes a Point every Config.Fine (Add)
// and keeps the samples between them. It is safe for concurrent use.
type Ring struct {
	cfg Config

	mu       sync.Mutex
	last     Point
	haveLast bool
	fine     ring
	coarse   ring
	acc      Sample // the coarse sample being built
	accN     int    // fine samples in acc
}

// New returns an empty ring.
func New(cfg Config) *Ring {
	cfg.defaults()
	return &Ring{cfg: cfg, fine: ring{max: cfg.FineKeep}, coarse: ring{max: cfg.CoarseKeep}}
}

// Fine is the interval of the fine samples, CoarseInterval that of the
// coarse ones.
func (r *Ring) Fine() time.Duration { return r.cfg.Fine }

// CoarseInterval is the interval of the coarse samples.
func (r *Ring) CoarseInterval() time.Duration { return r.cfg.Fine * time.Duration(r.cfg.CoarseEach) }

// Add records the point p: the first is the baseline, each later one
// closes a fine sample since the one before, and every CoarseEach fine
// samples make a coarse one.
func (r *Ring) Add(p Point) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.haveLast {
		r.last, r.haveLast = p, true
		return
	}
	s := between(r.last, p)
	r.last = p
	r.fine.push(s)
	if r.accN == 0 {
		r.acc = s.clone()
	} else {
		r.acc.merge(s)
	}
	r.accN++
	if r.accN == r.cfg.CoarseEach {
		r.coarse.push(r.acc)
		r.accN = 0
	}
}

// Current is the sample from the last point added to p, not recorded: the
// interval in progress. ok is false before the first point.
func (r *Ring) Current(p Point) (s Sample, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.haveLast {
		return Sample{}, false
	}
	return between(r.last, p), true
}

// Samples returns the fine samples, oldest first, and the coarse ones.
func (r *Ring) Samples() (fine, coarse []Sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fine.all(), r.coarse.all()
}

// between is the sample from a to b.
func between(a, b Point) Sample {
	s := Sample{
		Start: a.At, Seconds: b.At.Sub(a.At).Seconds(),
		Pages: delta(a.Pages, b.Pages), Bytes: delta(a.Bytes, b.Bytes),
		Errors: deltas(a.Errors, b.Errors), Status: deltas(a.Status, b.Status),
		Throttled: delta(a.Throttled, b.Throttled), Unavailable: delta(a.Unavailable, b.Unavailable),
		Queued: b.Queued, InFlight: b.InFlight, ActiveHosts: b.ActiveHosts,
		Ready: b.Ready, Waiting: b.Waiting, Parked: b.Parked, Held: b.Held,
		bounds: b.Latency.Bounds,
	}
	s.buckets = bucketDeltas(a.Latency, b.Latency)
	s.percentiles()
	return s
}

// delta is b-a, or b if the counter went back (a new crawl).
func delta(a, b int64) int64 {
	if b < a {
		return b
	}
	return b - a
}

func deltas(a, b map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range b {
		if d := delta(a[k], v); d != 0 {
			out[k] = d
		}
	}
	return out
}

// bucketDeltas turns two cumulative histograms into the fetches of each
// bucket between them; the last bucket holds those over every bound.
func bucketDeltas(a, b Histogram) []uint64 {
	n := len(b.Bounds)
	if n == 0 || len(b.Counts) != n {
		return nil
	}
	reset := len(a.Counts) != n || b.Count < a.Count
	at := func(h Histogram, i int) uint64 { // non-cumulative count of bucket i
		if i == n {
			return h.Count - h.Counts[n-1]
		}
		if i == 0 {
			return h.Counts[0]
		}
		return h.Counts[i] - h.Counts[i-1]
	}
	out := make([]uint64, n+1)
	for i := range out {
		out[i] = at(b, i)
		if !reset {
			if x := at(a, i); x <= out[i] {
				out[i] -= x
			} else {
				out[i] = 0
			}
		}
	}
	return out
}

// percentiles sets P50 and P95 from s's buckets.
func (s *Sample) percentiles() {
	s.P50, s.P95 = Quantile(s.bounds, s.buckets, 0.5), Quantile(s.bounds, s.buckets, 0.95)
}

// Quantile is the q-quantile (0 < q < 1) of fetches counted per bucket
// (buckets[i] at or under bounds[i] and over bounds[i-1]; the last bucket,
// over every bound), interpolated linearly within its bucket as
// Prometheus's histogram_quantile does; one in the last bucket is the last
// bound. Nil when there are none.
func Quantile(bounds []float64, buckets []uint64, q float64) *float64 {
	var total uint64
	for _, n := range buckets {
		total += n
	}
	if total == 0 || len(bounds) == 0 || len(buckets) != len(bounds)+1 {
		return nil
	}
	rank := q * float64(total)
	var below uint64
	for i, n := range buckets {
		if n == 0 || float64(below+n) < rank {
			below += n
			continue
		}
		if i == len(bounds) {
			v := bounds[len(bounds)-1]
			return &v
		}
		lo := 0.0
		if i > 0 {
			lo = bounds[i-1]
		}
		v := lo + (bounds[i]-lo)*(rank-float64(below))/float64(n)
		return &v
	}
	v := bounds[len(bounds)-1]
	return &v
}

func (s Sample) clone() Sample {
	s.Errors, s.Status = maps.Clone(s.Errors), maps.Clone(s.Status)
	s.buckets = append([]uint64(nil), s.buckets...)
	return s
}

// merge adds the later sample t to s: counters and latency buckets add
// up, gauges are t's (the end of the merged interval), and the
// percentiles are those of the merged buckets, not an average of
// percentiles.
func (s *Sample) merge(t Sample) {
	s.Seconds = t.Start.Sub(s.Start).Seconds() + t.Seconds
	s.Pages += t.Pages
	s.Bytes += t.Bytes
	for k, v := range t.Errors {
		s.Errors[k] += v
	}
	for k, v := range t.Status {
		s.Status[k] += v
	}
	s.Throttled += t.Throttled
	s.Unavailable += t.Unavailable
	s.Queued, s.InFlight, s.ActiveHosts = t.Queued, t.InFlight, t.ActiveHosts
	s.Ready, s.Waiting, s.Parked, s.Held = t.Ready, t.Waiting, t.Parked, t.Held
	if len(s.buckets) != len(t.buckets) {
		s.buckets, s.bounds = append([]uint64(nil), t.buckets...), t.bounds // the bounds changed: keep the later
	} else {
		for i, n := range t.buckets {
			s.buckets[i] += n
		}
	}
	s.percentiles()
}

// ring is a bounded FIFO of samples.
type ring struct {
	max   int
	items []Sample
	next  int // where the next goes once full
}

func (r *ring) push(s Sample) {
	if len(r.items) < r.max {
		r.items = append(r.items, s)
		return
	}
	r.items[r.next] = s
	r.next = (r.next + 1) % r.max
}

func (r *ring) all() []Sample {
	out := make([]Sample, 0, len(r.items))
	out = append(out, r.items[r.next:]...)
	return append(out, r.items[:r.next]...)
}
