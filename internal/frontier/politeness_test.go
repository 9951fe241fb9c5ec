package frontier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// gapsAfter runs one host through results, one per lease, and returns the
// time between the end of each request and the start of the next.
func gapsAfter(t *testing.T, cfg Config, results []Result) []time.Duration {
	t.Helper()
	var gaps []time.Duration
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, cfg)
		f.Add(items("a.test", len(results)+1, Normal)...)
		ctx := t.Context()
		go f.Run(ctx)
		var end time.Time
		for i := range len(results) + 1 {
			l, err := f.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				gaps = append(gaps, time.Since(end))
			}
			time.Sleep(100 * time.Millisecond) // the request
			end = time.Now()
			r := Result{Fetched: true}
			if i < len(results) {
				r = results[i]
			}
			f.Complete(l, r)
		}
	})
	return gaps
}

func repeat(r Result, n int) []Result {
	out := make([]Result, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func TestRetryAfterIsHonouredAndCapped(t *testing.T) {
	cfg := Config{Delay: time.Second, Politeness: Politeness{MaxRetryAfter: time.Minute}}
	got := gapsAfter(t, cfg, []Result{
		{Fetched: true, Signal: Throttled, RetryAfter: 30 * time.Second},
		{Fetched: true, Signal: Throttled, RetryAfter: 2 * time.Hour}, // capped
		{Fetched: true, Signal: Unavailable, RetryAfter: 5 * time.Second},
		{Fetched: true},
	})
	want := []time.Duration{30 * time.Second, time.Minute, 5 * time.Second, time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("gaps %v, want %v", got, want)
	}
}

func TestBackoffDoublesToCeilingAndShrinksBack(t *testing.T) {
	cfg := Config{Delay: time.Second, Politeness: Politeness{MaxBackoff: 8 * time.Second, ParkAfter: 100}}
	throttled := repeat(Result{Fetched: true, Signal: Throttled}, 5)
	ok := repeat(Result{Fetched: true}, 5)
	got := gapsAfter(t, cfg, append(throttled, ok...))
	want := []time.Duration{
		1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, // 429s
		4 * time.Second, 2 * time.Second, 1 * time.Second, 1 * time.Second, 1 * time.Second, // successes
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("gaps %v, want %v", got, want)
	}
}

func TestSlowResponsesWidenTheGap(t *testing.T) {
	cfg := Config{Delay: time.Second, Politeness: Politeness{LatencyFactor: 5}}
	got := gapsAfter(t, cfg, []Result{
		{Fetched: true, Took: 100 * time.Millisecond},
		{Fetched: true, Took: 400 * time.Millisecond},
		{Fetched: true, Took: 2 * time.Second},
		{Fetched: true, Took: 100 * time.Millisecond},
	})
	want := []time.Duration{time.Second, 2 * time.Second, 10 * time.Second, time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("gaps %v, want %v", got, want)
	}
}

func TestFailureStreakParksForLongerEachTime(t *testing.T) {
	cfg := Config{Delay: time.Second, Politeness: Politeness{ParkAfter: 3, ParkFor: time.Minute, GiveUpAfter: -1}}
	failed := Result{Fetched: true, Signal: Failed}
	got := gapsAfter(t, cfg, append(repeat(failed, 6), Result{Fetched: true}, failed, failed, failed))
	want := []time.Duration{
		time.Second, time.Second, time.Minute, // the third failure parks it
		time.Second, time.Second, 2 * time.Minute, // the next streak parks it twice as long
		time.Second,                               // a success
		time.Second, time.Second, 4 * time.Minute, // parks are counted in all, not per streak
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("gaps %v, want %v", got, want)
	}
}

// A Hold waits beyond the gap, with or without a request, and never
// shortens a longer wait the clock already has.
func TestHoldAddsToTheWait(t *testing.T) {
	cfg := Config{Delay: time.Second, Politeness: Politeness{MaxRetryAfter: time.Hour}}
	got := gapsAfter(t, cfg, []Result{
		{Fetched: true, Hold: 30 * time.Second},
		{Fetched: true, Signal: Throttled, RetryAfter: 2 * time.Minute, Hold: 30 * time.Second},
		{Fetched: true, Signal: Unavailable, RetryAfter: 5 * time.Second, Hold: 40 * time.Second}, // the hold is longer
		{Fetched: true, Hold: 10 * time.Millisecond},                                              // less than the gap
	})
	want := []time.Duration{30 * time.Second, 2 * time.Minute, 40 * time.Second, time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("gaps %v, want %v", got, want)
	}
	f := newFrontier(t, Config{Delay: time.Second})
	now := time.Unix(1000, 0)
	c := f.Advance(Clock{}, Result{Hold: time.Minute}, now)
	if !c.NextAt.Equal(now.Add(time.Minute)) || c.Errors != 0 {
		t.Errorf("a hold with no request: %+v, want NextAt %v and nothing else", c, now.Add(time.Minute))
	}
	c = f.Advance(c, Result{Hold: time.Second}, now)
	if !c.NextAt.Equal(now.Add(time.Minute)) {
		t.Errorf("a shorter hold moved NextAt back to %v", c.NextAt)
	}
}

func TestAdvanceSignals(t *testing.T) {
	f := newFrontier(t, Config{Delay: time.Second, Politeness: Politeness{ParkAfter: 2, GiveUpAfter: 3}})
	now := time.Unix(1000, 0)
	c := Clock{}
	c = f.Advance(c, Result{Fetched: true, Signal: Throttled}, now)
	if c.Streak != 0 || c.Errors != 0 || c.Backoff != time.Second {
		t.Errorf("after a 429: %+v; a 429 is no failure, and backs off", c)
	}
	c = f.Advance(c, Result{Fetched: true, Signal: Unavailable}, now)
	if c.Streak != 1 || c.Errors != 1 || c.Backoff != 2*time.Second {
		t.Errorf("after a 503: %+v; a 503 both fails and backs off", c)
	}
	c = f.Advance(c, Result{SetCrawlDelay: true, CrawlDelay: 7 * time.Second}, now)
	if c.Streak != 1 || c.CrawlDelay != 7*time.Second {
		t.Errorf("after a result with no request: %+v; only the Crawl-delay may change", c)
	}
	c = f.Advance(c, Result{Fetched: true, Signal: Failed}, now)
	if c.Parks != 1 || c.Streak != 0 || c.GaveUp {
		t.Errorf("after two failures in a row: %+v, want parked once", c)
	}
	c = f.Advance(c, Result{Fetched: true, Signal: Failed}, now)
	if !c.GaveUp || c.Errors != 3 {
		t.Errorf("after three failures in all: %+v, want given up", c)
	}
}

// TestAnswersTakeBackFailures: a host is given up once its failures
// outnumber its answers by GiveUpAfter, not after GiveUpAfter failures
// in all: one whose broken pages are one in three of its requests is
// crawled on, one failing two requests in three is given up.
func TestAnswersTakeBackFailures(t *testing.T) {
	f := newFrontier(t, Config{Delay: time.Second, Politeness: Politeness{ParkAfter: -1, GiveUpAfter: 3}})
	now := time.Unix(1000, 0)
	c := Clock{}
	for i := range 300 {
		r := Result{Fetched: true}
		if i%3 == 0 {
			r.Signal = Failed
		}
		if c = f.Advance(c, r, now); c.GaveUp || c.Errors > 1 {
			t.Fatalf("after %d requests, one in three failed: %+v; want crawled on", i+1, c)
		}
	}
	n := 0
	for ; !c.GaveUp && n < 9; n++ {
		r := Result{Fetched: true}
		if n%3 != 2 {
			r.Signal = Failed
		}
		c = f.Advance(c, r, now)
	}
	if !c.GaveUp || n != 5 { // failed, failed, answered, failed, failed: three more failures than answers
		t.Errorf("after %d more requests, two in three failed: %+v; want given up at the fifth", n, c)
	}
}

// TestGivenUpHostDropsItsURLsAndSparesOthers fails one host until it is
// given up: its remaining URLs come back at once in ModeGiveUp, while the
// other host keeps its ordinary rate.
func TestGivenUpHostDropsItsURLsAndSparesOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second, Politeness: Politeness{ParkAfter: -1, GiveUpAfter: 3}})
		f.Add(items("bad.test", 10, Normal)...)
		f.Add(items("good.test", 10, Normal)...)
		var mu sync.Mutex
		requests := map[string]int{}
		dropped := map[string]int{}
		start := time.Now()
		log := runWorkers(t, f, 4, 10*time.Millisecond, func(l Lease) Result {
			mu.Lock()
			defer mu.Unlock()
			if l.Mode == ModeGiveUp {
				dropped[l.Host]++
				return Result{}
			}
			requests[l.Host]++
			if l.Host == "bad.test" {
				return Result{Fetched: true, Signal: Failed}
			}
			return Result{Fetched: true}
		})
		if requests["bad.test"] != 3 || dropped["bad.test"] != 7 {
			t.Errorf("bad.test: %d requests and %d URLs dropped, want 3 and 7", requests["bad.test"], dropped["bad.test"])
		}
		if requests["good.test"] != 10 || dropped["good.test"] != 0 {
			t.Errorf("good.test: %d requests, %d dropped; want all 10 fetched", requests["good.test"], dropped["good.test"])
		}
		checkGaps(t, log, 0)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("crawl took %v: the failing host held up the other", d)
		}
	})
}

// TestIPGroupSharesAGap puts ten hosts on one server: every host is asked
// for its group first (no request), and then requests to the group's hosts
// start at least IPGap apart, though each host alone could go at once.
func TestIPGroupSharesAGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{IPGap: 500 * time.Millisecond})
		for i := range 10 {
			f.Add(items(fmt.Sprintf("h%d.shared.test", i), 3, Normal)...)
		}
		f.Add(items("alone.test", 3, Normal)...)
		var mu sync.Mutex
		var starts []time.Time
		asked := map[string]int{}
		runWorkers(t, f, 8, 0, func(l Lease) Result {
			mu.Lock()
			defer mu.Unlock()
			if l.Mode == ModeFindGroup {
				asked[l.Host]++
				g := "10.0.0.1"
				if l.Host == "alone.test" {
					g = "10.0.0.2"
				}
				return Result{Retry: true, SetGroup: true, Group: g}
			}
			if l.Host != "alone.test" {
				starts = append(starts, time.Now())
			}
			return Result{Fetched: true}
		})
		if len(asked) != 11 {
			t.Errorf("asked the group of %d hosts, want 11", len(asked))
		}
		for h, n := range asked {
			if n != 1 {
				t.Errorf("asked the group of %s %d times", h, n)
			}
		}
		if len(starts) != 30 {
			t.Fatalf("%d requests to the shared server, want 30", len(starts))
		}
		for i := 1; i < len(starts); i++ {
			if d := starts[i].Sub(starts[i-1]); d < 500*time.Millisecond {
				t.Errorf("requests %d and %d to the shared server %v apart, want >= 500ms", i-1, i, d)
			}
		}
	})
}

// TestNothingSentGivesTheGroupGapBack: two hosts on one server. Half of
// each host's URLs are dropped without a request (as a copy found stale
// or a URL robots.txt forbids is): such a lease gives back the gap its
// start took, so the drops follow each other at once, while the requests
// that are sent still start IPGap apart.
func TestNothingSentGivesTheGroupGapBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const gap = 500 * time.Millisecond
		f := newFrontier(t, Config{IPGap: gap})
		f.Add(items("a.shared.test", 10, Normal)...)
		f.Add(items("b.shared.test", 10, Normal)...)
		var mu sync.Mutex
		var sent, dropped []time.Time
		start := time.Now()
		runWorkers(t, f, 2, 0, func(l Lease) Result {
			if l.Mode == ModeFindGroup {
				return Result{Retry: true, SetGroup: true, Group: "10.0.0.1"}
			}
			mu.Lock()
			defer mu.Unlock()
			if n := l.URL[len(l.URL)-1] - '0'; n%2 == 1 {
				dropped = append(dropped, time.Now())
				return Result{}
			}
			sent = append(sent, time.Now())
			return Result{Fetched: true}
		})
		if len(sent) != 10 || len(dropped) != 10 {
			t.Fatalf("%d requests and %d drops, want 10 of each", len(sent), len(dropped))
		}
		for i := 1; i < len(sent); i++ {
			if d := sent[i].Sub(sent[i-1]); d < gap {
				t.Errorf("requests %d and %d to the server %v apart, want >= %v", i-1, i, d, gap)
			}
		}
		// Ten requests IPGap apart take nine gaps; a drop that held the
		// server for a gap would add one each.
		if d := sent[len(sent)-1].Sub(start); d > 9*gap {
			t.Errorf("the last request started %v in, want the 9 gaps before it (%v): the drops held the server", d, 9*gap)
		}
	})
}

// TestUnparkBeforeParkIsKept delivers a host's Unpark before the Complete
// that parks it, as happens when the robots.txt hop it waits for is done on
// another host before its own lease comes back: it must not stay parked.
func TestUnparkBeforeParkIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{})
		f.Add(items("a.test", 2, Normal)...)
		ctx := t.Context()
		runErr := make(chan error, 1)
		go func() { runErr <- f.Run(ctx) }()
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.Unpark("a.test")
		synctest.Wait()
		f.Complete(l, Result{Fetched: true, Retry: true, Park: true})
		for range 3 { // the retried URL and the other one
			l, err := f.Next(ctx)
			if errors.Is(err, ErrDrained) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			f.Complete(l, Result{Fetched: true})
		}
		if err := <-runErr; err != nil {
			t.Fatalf("Run: %v (a host stayed parked)", err)
		}
	})
}

func TestDurableOnlyWhenARestartWouldNotAssumeIt(t *testing.T) {
	f := newFrontier(t, Config{Delay: time.Second, Politeness: Politeness{LatencyFactor: 10}})
	now := time.Unix(1000, 0)
	base := Clock{NextAt: now.Add(-time.Minute)}
	for _, c := range []struct {
		name string
		r    Result
		want bool
	}{
		{"an ordinary fetch", Result{Fetched: true, Took: 10 * time.Millisecond}, false},
		{"no request", Result{}, false},
		{"a new Crawl-delay", Result{Fetched: true, SetCrawlDelay: true, CrawlDelay: 3 * time.Second}, true},
		{"a 429", Result{Fetched: true, Signal: Throttled}, true},
		{"a Retry-After", Result{Fetched: true, Signal: Unavailable, RetryAfter: time.Hour}, true},
		{"a failure", Result{Fetched: true, Signal: Failed}, true},
		{"a slow response", Result{Fetched: true, Took: time.Second}, true},
	} {
		after := f.Advance(base, c.r, now)
		if got := f.Durable(base, after, now); got != c.want {
			t.Errorf("%s: Durable = %v, want %v (clock %+v)", c.name, got, c.want, after)
		}
	}
}

// A host that answers nothing but 429 is given up after GiveUpAfter of
// them in a row spanning at least MaxBackoff; any other answer starts the
// count again, and a 429 never parks the host or counts as a failure.
func TestThrottleStormGivesUp(t *testing.T) {
	f := newFrontier(t, Config{Delay: time.Second, Politeness: Politeness{GiveUpAfter: 4, ParkAfter: 2, MaxBackoff: time.Minute}})
	now := time.Now()
	var c Clock
	throttled := Result{Fetched: true, Signal: Throttled}
	for range 3 {
		c = f.Advance(c, throttled, now)
	}
	c = f.Advance(c, Result{Fetched: true}, now)
	for i := range 3 {
		c = f.Advance(c, throttled, now.Add(time.Duration(i)*time.Hour))
		if c.GaveUp || c.Parks != 0 || c.Errors != 0 {
			t.Fatalf("after %d 429s in a row: %+v, want no park, no failure, not given up", i+1, c)
		}
	}
	// A burst: the fourth comes within MaxBackoff of the first.
	burst := f.Advance(Clock{Throttles: 3, ThrottledSince: now}, throttled, now.Add(30*time.Second))
	if burst.GaveUp {
		t.Fatalf("four 429s within a minute gave the host up: %+v", burst)
	}
	if c = f.Advance(c, throttled, now.Add(3*time.Hour)); !c.GaveUp || c.Throttles != 4 {
		t.Fatalf("after 4 429s in a row over 3 hours: %+v, want given up", c)
	}
}

// A strained request (a timeout, a reset, a body cut off) holds its host
// for the latency factor times its elapsed time, whatever Delay says, and
// a run of them doubles that wait up to MaxBackoff; answers halve it back.
func TestStrainWaitsForTheLatencyFactorAndDoubles(t *testing.T) {
	cfg := Config{Delay: 100 * time.Millisecond, Politeness: Politeness{MaxBackoff: 5 * time.Minute, ParkAfter: -1, GiveUpAfter: -1}}
	cut := Result{Fetched: true, Signal: Strained, Took: 15 * time.Second}
	got := gapsAfter(t, cfg, append(repeat(cut, 4), repeat(Result{Fetched: true, Took: time.Millisecond}, 3)...))
	want := []time.Duration{
		75 * time.Second, 150 * time.Second, 300 * time.Second, 300 * time.Second, // 5 x 15 s, doubled, capped
		150 * time.Second, 75 * time.Second, 37500 * time.Millisecond, // answers halve it
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("gaps %v, want %v", got, want)
	}
	// MaxBackoff caps the doubling, not the latency rule.
	cfg.Politeness.MaxBackoff = 30 * time.Second
	if got := gapsAfter(t, cfg, repeat(cut, 2)); fmt.Sprint(got) != fmt.Sprint([]time.Duration{75 * time.Second, 75 * time.Second}) {
		t.Fatalf("MaxBackoff 30s: gaps %v, want 75s twice", got)
	}
	// With the latency rule off, a strain still backs off, from MinBackoff.
	cfg.Politeness.LatencyFactor = -1
	got = gapsAfter(t, cfg, repeat(Result{Fetched: true, Signal: Strained, Took: 15 * time.Second}, 2))
	if want := []time.Duration{time.Second, 2 * time.Second}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("latency rule off: gaps %v, want %v", got, want)
	}
	f := newFrontier(t, Config{Delay: time.Second, Politeness: Politeness{ParkAfter: 2}})
	c := f.Advance(Clock{}, Result{Fetched: true, Signal: Strained, Took: time.Second}, time.Unix(1000, 0))
	if c.Streak != 1 || c.Errors != 1 {
		t.Errorf("after a strain: %+v; a strain is a failure too", c)
	}
}

// TestStrainHoldsTheServerGroup strains one of two hosts on one server:
// the other host, though its own clock has run out, waits with it.
func TestStrainHoldsTheServerGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: 100 * time.Millisecond, IPGap: 10 * time.Millisecond})
		f.Add(items("a.shared.test", 2, Normal)...)
		f.Add(items("b.shared.test", 2, Normal)...)
		var mu sync.Mutex
		var strained bool
		var strainedAt time.Time
		var after []time.Duration
		runWorkers(t, f, 2, 0, func(l Lease) Result {
			if l.Mode == ModeFindGroup {
				return Result{Retry: true, SetGroup: true, Group: "10.0.0.1"}
			}
			mu.Lock()
			first := !strained
			strained = true
			if !first {
				after = append(after, time.Since(strainedAt))
			}
			mu.Unlock()
			if !first {
				return Result{Fetched: true}
			}
			time.Sleep(2 * time.Second) // the request the server could not finish
			mu.Lock()
			strainedAt = time.Now()
			mu.Unlock()
			return Result{Fetched: true, Signal: Strained, Took: 2 * time.Second}
		})
		if len(after) != 3 {
			t.Fatalf("%d requests after the strain, want 3", len(after))
		}
		if after[0] < 10*time.Second {
			t.Errorf("the next request to the strained server came %v after the strain, want >= 10s (5 x 2s)", after[0])
		}
	})
}

// TestOneHangingHostDoesNotHoldItsServer: of two sites on one server, one
// hangs on every request (a robots.txt or a page that never answers) while
// the other answers at once. After each request cut by strain the server is
// left alone for as long as it may still be working on it (5 x 15 s), but
// the answering site is not held for the hanging one's doubling backoff:
// once, it waited 75 s, 150 s, 300 s... behind it. A server that strains on
// every host's requests is held longer with each strain in a row, as one
// host would be.
func TestOneHangingHostDoesNotHoldItsServer(t *testing.T) {
	type request struct {
		host       string
		start, end time.Time
		strained   bool
	}
	run := func(t *testing.T, hangs func(host string) bool) (reqs []request, began time.Time) {
		f := newFrontier(t, Config{Delay: 100 * time.Millisecond, IPGap: 10 * time.Millisecond, Politeness: Politeness{ParkAfter: -1}})
		f.Add(items("hangs.shared.test", 5, Normal)...)
		f.Add(items("answers.shared.test", 30, Normal)...)
		var mu sync.Mutex
		began = time.Now()
		runWorkers(t, f, 2, 0, func(l Lease) Result {
			switch l.Mode {
			case ModeFindGroup:
				return Result{Retry: true, SetGroup: true, Group: "10.0.0.1"}
			case ModeGiveUp:
				return Result{} // no request
			}
			r := request{host: l.Host, start: time.Now(), strained: hangs(l.Host)}
			if r.strained {
				time.Sleep(15 * time.Second) // cut by the silence timeout
			}
			r.end = time.Now()
			mu.Lock()
			reqs = append(reqs, r)
			mu.Unlock()
			if r.strained {
				return Result{Fetched: true, Signal: Strained, Took: 15 * time.Second, Cause: "timeout"}
			}
			return Result{Fetched: true}
		})
		// The server's view: after a request cut by strain, nothing
		// starts within 75 s of its end.
		for _, s := range reqs {
			for _, r := range reqs {
				if s.strained && !r.start.Before(s.end) && r.start.Sub(s.end) < 75*time.Second {
					t.Errorf("%s asked %v after the strain of %s's request; want >= 75 s", r.host, r.start.Sub(s.end), s.host)
				}
			}
		}
		return reqs, began
	}
	t.Run("one host hangs", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			reqs, began := run(t, func(host string) bool { return host == "hangs.shared.test" })
			var last time.Time
			answered := 0
			for _, r := range reqs {
				if r.host == "answers.shared.test" {
					answered++
					last = later(last, r.end)
				}
			}
			// The hanging site's backoff doubles (75 s, 150 s, 300 s)
			// while the server's hold after each strain stays 75 s: the
			// answering site's pages go in its second backoff, about
			// 3 minutes in. Held for the whole backoff, they took 30.
			if answered != 30 || last.Sub(began) > 5*time.Minute {
				t.Errorf("the answering site's %d pages were done %v in; want 30 within 5 minutes", answered, last.Sub(began))
			}
		})
	})
	t.Run("the server hangs", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			reqs, _ := run(t, func(string) bool { return true })
			slices.SortFunc(reqs, func(a, b request) int { return a.start.Compare(b.start) })
			for i := 1; i < len(reqs) && i <= 3; i++ {
				want := 75 * time.Second << (i - 1)
				if got := reqs[i].start.Sub(reqs[i-1].end); got < want {
					t.Errorf("strain %d in a row on the server: next request %v after it, want >= %v", i, got, want)
				}
			}
		})
	})
}

// TestLostMovesOnlyTheClock: a lease lost (its fetcher never said what
// became of it) arms the host's clock as a request would, and moves
// nothing else: a host backing off after 429s keeps its backoff and its
// run of them, one that was failing is still named failing, and a lost
// lease is no failure (once, an expired lease counted as an answer, which
// halved the backoff, or as a failure, which gave a host up).
func TestLostMovesOnlyTheClock(t *testing.T) {
	f := newFrontier(t, Config{Delay: time.Second, Politeness: Politeness{GiveUpAfter: 2}})
	now := time.Unix(1000, 0)
	c := f.Advance(Clock{}, Result{Fetched: true, Signal: Throttled}, now)
	c = f.Advance(c, Result{Fetched: true, Signal: Throttled}, now.Add(time.Second))
	c = f.Advance(c, Result{Fetched: true, Signal: Failed, Cause: "500"}, now.Add(3*time.Second))
	before := c
	for i := range 3 {
		at := now.Add(time.Duration(10+i) * time.Minute)
		c = f.Advance(c, Result{Fetched: true, Retry: true, Signal: Lost}, at)
		if !c.NextAt.Equal(at.Add(before.Backoff)) || c.Why != WhyBackoff {
			t.Fatalf("after a lost lease at %v: next at %v (%v), want its backoff %v later", at, c.NextAt, c.Why, before.Backoff)
		}
	}
	c.NextAt, c.Why = before.NextAt, before.Why
	if c != before {
		t.Errorf("three lost leases moved the clock %+v to %+v; want only its next time", before, c)
	}
	if OK.Worse(Lost) != Lost || Lost.Worse(Failed) != Failed {
		t.Errorf("a lost lease ranks %v against an answer, %v against a failure", OK.Worse(Lost), Lost.Worse(Failed))
	}
}

// TestStrainWaitIsNamed: a host whose own clock allows it, held by its
// server's backoff after another host's request to it was cut by strain,
// waits for that backoff, and the wait says so (not "delay", the gap).
func TestStrainWaitIsNamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: 100 * time.Millisecond, IPGap: 10 * time.Millisecond})
		f.Add(items("a.shared.test", 1, Normal)...)
		f.Add(items("b.shared.test", 3, Normal)...)
		ctx, cancel := context.WithCancel(t.Context())
		runErr := make(chan error, 1)
		go func() { runErr <- f.Run(ctx) }()
		for strained := false; !strained; {
			l, err := f.Next(ctx)
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			switch {
			case l.Mode == ModeFindGroup:
				f.Complete(l, Result{Retry: true, SetGroup: true, Group: "10.0.0.1"})
			case l.Host == "a.shared.test":
				time.Sleep(15 * time.Second) // the request the server could not finish
				f.Complete(l, Result{Fetched: true, Signal: Strained, Took: 15 * time.Second})
				strained = true
			default:
				f.Complete(l, Result{Fetched: true})
			}
		}
		synctest.Wait()
		w := f.Stats().Wait
		cancel()
		<-runErr
		if w.Host != "b.shared.test" || w.Why != WhyBackoff || w.At.Sub(time.Now()) < time.Minute {
			t.Errorf("waiting %+v; want b.shared.test, about 75 s away, for its server's backoff", w)
		}
	})
}

// TestSignalWorse orders signals by how much they move a clock.
func TestSignalWorse(t *testing.T) {
	order := []Signal{OK, Lost, Failed, Throttled, Unavailable, Strained}
	for i, a := range order {
		for j, b := range order {
			want := order[max(i, j)]
			if got := a.Worse(b); got != want {
				t.Errorf("%s.Worse(%s) = %s, want %s", a, b, got, want)
			}
		}
	}
}
