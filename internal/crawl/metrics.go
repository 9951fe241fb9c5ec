package crawl

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"

	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/live"
	"github.com/weft-crawler/weft/internal/store"
)

// histogram counts durations in fixed buckets, lock-free.
type histogram struct {
	counts [len(histBounds) + 1]atomic.Int64 // the last counts the overflow
	sum    atomic.Int64                      // nanoseconds
}

// histBounds are the buckets' upper bounds, in seconds: fetches take
// milliseconds to minutes, URLs wait in queues seconds to days.
var histBounds = [...]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 6 * 3600, 86400}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i, _ := slices.BinarySearch(histBounds[:], s)
	h.counts[i].Add(1)
	h.sum.Add(int64(d))
}

func (h *histogram) snapshot() live.Histogram {
	out := live.Histogram{Bounds: histBounds[:], Counts: make([]uint64, len(histBounds))}
	var n uint64
	for i := range histBounds {
		n += uint64(h.counts[i].Load())
		out.Counts[i] = n
	}
	out.Count = n + uint64(h.counts[len(histBounds)].Load())
	out.Sum = time.Duration(h.sum.Load()).Seconds()
	return out
}

// errorKinds are the kinds Summary.Errors counts, fetch.Kind's names:
// known in advance, so that a metric can count each from the start, at 0.
func errorKinds() []string {
	// Each Kind past the last is named as KindUnknown is: the list stops
	// there, whatever kinds fetch adds.
	unknown := fetch.KindUnknown.String()
	out := []string{unknown}
	for k := fetch.KindUnknown + 1; k.String() != unknown; k++ {
		out = append(out, k.String())
	}
	return out
}

// statusClasses are the classes Summary.ByStatus counts responses in.
func statusClasses() []string { return []string{"1xx", "2xx", "3xx", "4xx", "5xx", "other"} }

// topHostErrors is how many hosts Metrics names: the label cardinality of
// the per-host metrics is bounded.
const topHostErrors = 20

// Metrics returns the crawl's measurements now, from any goroutine: at
// most topHostErrors hosts in each list.
func (c *Crawler) Metrics() live.Metrics {
	s := c.seen.Stats()
	m := live.Metrics{FetchDuration: c.stats.fetchTime.snapshot(), QueueDelay: c.stats.queueDelay.snapshot(), SeenCacheHits: s.CacheHits,
		BloomFill: c.seen.FillRatio(), StatusClasses: statusClasses(), ErrorKinds: errorKinds()}
	if t := c.stats.lastHigh.Load(); t != 0 {
		m.LastHighPriority = time.Unix(0, t)
	}
	m.DNSHits, m.DNSMisses = c.fetcher.DNSStats()
	c.stats.hosts.Each(func(host string, v store.HostState) { // the hosts in memory, the most recent
		if v.Throttled+v.ServerErrors > 0 {
			m.HostErrors = append(m.HostErrors, live.HostErrors{Host: host, Throttled: v.Throttled, ServerErrors: v.ServerErrors})
		}
	})
	slices.SortFunc(m.HostErrors, func(a, b live.HostErrors) int {
		return cmp.Or(cmp.Compare(b.Throttled+b.ServerErrors, a.Throttled+a.ServerErrors), cmp.Compare(a.Host, b.Host))
	})
	m.HostErrors = m.HostErrors[:min(len(m.HostErrors), topHostErrors)]
	m.LinksCut, m.LinksCutHosts = c.stats.topLinksCut(topHostErrors)
	return m
}
