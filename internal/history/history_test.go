package history

import (
	"fmt"
	"math"
	"testing"
	"time"

	"go.uber.org/goleak"
)

var bounds = []float64{0.1, 0.5, 1, 5}

// hist is a cumulative histogram of fetches counted per bucket (the last
// over every bound).
func hist(per ...uint64) Histogram {
	h := Histogram{Bounds: bounds, Counts: make([]uint64, len(bounds))}
	var n uint64
	for i, c := range per {
		n += c
		if i < len(bounds) {
			h.Counts[i] = n
		}
	}
	h.Count = n
	return h
}

func near(a *float64, want float64) bool { return a != nil && math.Abs(*a-want) < 1e-9 }

func TestQuantile(t *testing.T) {
	for _, c := range []struct {
		buckets []uint64
		q, want float64
	}{
		{[]uint64{10, 0, 0, 0, 0}, 0.5, 0.05},   // all under 0.1: half-way through the first bucket
		{[]uint64{0, 10, 0, 0, 0}, 0.5, 0.3},    // in (0.1, 0.5]
		{[]uint64{50, 0, 50, 0, 0}, 0.95, 0.95}, // 95th of 100: the 45th of 50 in (0.5, 1]
		{[]uint64{0, 0, 0, 0, 7}, 0.5, 5},       // over every bound: the last bound
	} {
		if got := Quantile(bounds, c.buckets, c.q); !near(got, c.want) {
			t.Errorf("Quantile(%v, %v) = %v, want %v", c.buckets, c.q, deref(got), c.want)
		}
	}
	if got := Quantile(bounds, []uint64{0, 0, 0, 0, 0}, 0.5); got != nil {
		t.Errorf("no fetches: %v, want nil", *got)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestRingSamples: a sample is the difference of two points, with the
// gauges of the later one and the percentiles of the fetches between them
// only.
func TestRingSamples(t *testing.T) {
	r := New(Config{})
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r.Add(Point{At: t0, Pages: 100, Bytes: 1000, Errors: map[string]int64{"timeout": 2}, Status: map[string]int64{"2xx": 90}, Latency: hist(100, 0, 0, 0, 0)})
	if _, ok := r.Current(Point{At: t0}); !ok {
		t.Fatal("no current sample after the first point")
	}
	r.Add(Point{At: t0.Add(10 * time.Second), Pages: 130, Bytes: 1500, Errors: map[string]int64{"timeout": 5, "dns": 1},
		Status: map[string]int64{"2xx": 110, "5xx": 3}, Throttled: 4, Queued: 77, Ready: 3, Waiting: 5, Parked: 1, Held: 2,
		Latency: hist(100, 0, 30, 0, 0)})
	fine, coarse := r.Samples()
	if len(fine) != 1 || len(coarse) != 0 {
		t.Fatalf("%d fine and %d coarse samples, want 1 and 0", len(fine), len(coarse))
	}
	s := fine[0]
	if s.Pages != 30 || s.Bytes != 500 || s.Errors["timeout"] != 3 || s.Errors["dns"] != 1 || s.Status["2xx"] != 20 || s.Status["5xx"] != 3 ||
		s.Throttled != 4 || s.Queued != 77 || s.Ready != 3 || s.Waiting != 5 || s.Parked != 1 || s.Held != 2 || s.Seconds != 10 || !s.Start.Equal(t0) {
		t.Errorf("sample %+v", s)
	}
	// The 30 fetches of the interval all took (0.5, 1]: the 100 fast ones
	// before it are not in its percentiles.
	if !near(s.P50, 0.75) || !near(s.P95, 0.975) {
		t.Errorf("p50 %v p95 %v, want 0.75 and 0.975", deref(s.P50), deref(s.P95))
	}
}

// TestRingDownsamples: every 30 fine samples make a coarse one whose
// counters are their sums, whose gauges are the last one's, and whose
// percentiles are those of all their fetches (not an average of theirs).
func TestRingDownsamples(t *testing.T) {
	r := New(Config{})
	if r.CoarseInterval() != 5*time.Minute {
		t.Fatalf("coarse interval %v", r.CoarseInterval())
	}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var pages int64
	var fast, slow uint64
	for i := range 61 {
		if i > 0 {
			pages += int64(i)
			if i == 30 {
				slow += 10 // one interval of 10 slow fetches among 29 of 10 fast ones
			} else {
				fast += 10
			}
		}
		r.Add(Point{At: t0.Add(time.Duration(i) * 10 * time.Second), Pages: pages, Queued: 1000 - i, Latency: hist(fast, 0, 0, slow, 0)})
	}
	fine, coarse := r.Samples()
	if len(fine) != 60 || len(coarse) != 2 {
		t.Fatalf("%d fine and %d coarse samples, want 60 and 2", len(fine), len(coarse))
	}
	c := coarse[0]
	if want := int64(30 * 31 / 2); c.Pages != want {
		t.Errorf("coarse pages %d, want %d", c.Pages, want)
	}
	if c.Seconds != 300 || !c.Start.Equal(t0) || c.Queued != 1000-30 {
		t.Errorf("coarse sample from %v for %v s, queued %d; want from %v for 300 s, queued %d", c.Start, c.Seconds, c.Queued, t0, 1000-30)
	}
	// 290 fetches under 0.1 s and 10 in (1, 5]: the median is fast, the
	// 95th percentile (rank 285) still fast; the 99th slow.
	if !near(c.P50, 0.1*150/290) || !near(c.P95, 0.1*285/290) {
		t.Errorf("coarse p50 %v p95 %v", deref(c.P50), deref(c.P95))
	}
	if p99 := Quantile(c.bounds, c.buckets, 0.99); !near(p99, 1+4*(297-290)/10.0) {
		t.Errorf("coarse p99 %v", deref(p99))
	}
	if fine[29].P95 == nil || *fine[29].P95 <= 1 {
		t.Errorf("the slow interval's own p95 %v, want over 1 s", deref(fine[29].P95))
	}
	if c2 := coarse[1]; !c2.Start.Equal(t0.Add(5*time.Minute)) || c2.Pages != int64(61*60/2-30*31/2) {
		t.Errorf("second coarse sample from %v, %d pages", c2.Start, c2.Pages)
	}
}

// TestRingBounds: the ring keeps an hour of fine samples and a day of
// coarse ones, the oldest dropped first, however long it runs.
func TestRingBounds(t *testing.T) {
	r := New(Config{})
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	const n = 2*24*360 + 1 // two days of points
	for i := range n {
		r.Add(Point{At: t0.Add(time.Duration(i) * 10 * time.Second), Pages: int64(i)})
	}
	fine, coarse := r.Samples()
	if len(fine) != 360 || len(coarse) != 288 {
		t.Fatalf("%d fine and %d coarse samples, want 360 and 288", len(fine), len(coarse))
	}
	end := t0.Add(time.Duration(n-1) * 10 * time.Second)
	if got := fine[len(fine)-1].Start.Add(10 * time.Second); !got.Equal(end) {
		t.Errorf("newest fine sample ends at %v, want %v", got, end)
	}
	if got := fine[0].Start; !got.Equal(end.Add(-time.Hour)) {
		t.Errorf("oldest fine sample starts at %v, want an hour before the end, %v", got, end.Add(-time.Hour))
	}
	if got := coarse[0].Start; !got.Equal(end.Add(-24 * time.Hour)) {
		t.Errorf("oldest coarse sample starts at %v, want a day before the end", got)
	}
	for i := 1; i < len(fine); i++ {
		if !fine[i].Start.After(fine[i-1].Start) {
			t.Fatalf("fine samples out of order at %d", i)
		}
	}
	for i := 1; i < len(coarse); i++ {
		if !coarse[i].Start.After(coarse[i-1].Start) {
			t.Fatalf("coarse samples out of order at %d", i)
		}
	}
}

// TestRingCounterReset: a counter that goes back (the crawl's counters
// started again) starts the sample from zero rather than going negative.
func TestRingCounterReset(t *testing.T) {
	r := New(Config{})
	t0 := time.Now()
	r.Add(Point{At: t0, Pages: 500, Latency: hist(50, 0, 0, 0, 0)})
	r.Add(Point{At: t0.Add(10 * time.Second), Pages: 7, Latency: hist(0, 7, 0, 0, 0)})
	fine, _ := r.Samples()
	if fine[0].Pages != 7 || !near(fine[0].P50, 0.1+0.4*3.5/7) {
		t.Errorf("after a reset: %d pages, p50 %v", fine[0].Pages, deref(fine[0].P50))
	}
}

func TestHostsBounded(t *testing.T) {
	h := NewHosts(HostsConfig{Hosts: 3, Fetches: 4, Parks: 2})
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		st := 200
		if i%5 == 4 {
			st = 503
		}
		h.Fetched("a.test", Fetch{Time: t0.Add(time.Duration(i) * time.Second), URL: fmt.Sprint("http://a.test/", i), Status: st})
	}
	h.Fetched("a.test", Fetch{Time: t0.Add(10 * time.Second), URL: "http://a.test/x", Outcome: "error:timeout"})
	for i := range 3 {
		h.Parked("a.test", t0.Add(time.Duration(i)*time.Minute), t0.Add(time.Duration(i)*time.Minute+30*time.Second))
	}
	a, ok := h.Of("a.test")
	if !ok || a.Fetched != 11 || a.Errors != 3 || !a.LastFetch.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("a.test: %+v", a)
	}
	if len(a.Last) != 4 || a.Last[0].URL != "http://a.test/x" || a.Last[3].URL != "http://a.test/7" {
		t.Errorf("last fetches, newest first: %+v", a.Last)
	}
	if math.Abs(a.PerMinute-60) > 1e-9 { // 4 fetches a second apart
		t.Errorf("%v a minute, want 60", a.PerMinute)
	}
	if len(a.Parks) != 2 || !a.Parks[0].At.Equal(t0.Add(2*time.Minute)) || !a.Parks[1].At.Equal(t0.Add(time.Minute)) {
		t.Errorf("parks, newest first: %+v", a.Parks)
	}
	for _, name := range []string{"b.test", "c.test", "d.test"} {
		h.Fetched(name, Fetch{Time: t0, Status: 200})
	}
	if h.Len() != 3 {
		t.Errorf("%d hosts kept, want 3", h.Len())
	}
	if _, ok := h.Of("a.test"); ok {
		t.Error("the least recently fetched host was not forgotten")
	}
	if a, ok := h.Of("d.test"); !ok || a.Fetched != 1 || a.Errors != 0 || a.PerMinute != 0 {
		t.Errorf("d.test: %+v", a)
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
