package frontier

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// worker leases until the frontier drains or stops, answering each lease
// with answer(lease) after took; it returns the leases it was given.
func worker(ctx context.Context, f *Frontier, took time.Duration, answer func(Lease) Result) []Lease {
	var got []Lease
	for {
		l, err := f.Next(ctx)
		if err != nil {
			return got
		}
		got = append(got, l)
		time.Sleep(took) // the request
		f.Complete(l, answer(l))
	}
}

// runWithWorker runs f with one worker and returns how long Run took, its
// error, the leases and the final stats.
func runWithWorker(t *testing.T, f *Frontier, answer func(Lease) Result) (time.Duration, error, []Lease, Stats) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- f.Run(t.Context()) }()
	leases := worker(t.Context(), f, 100*time.Millisecond, answer)
	err := <-done
	return time.Since(start), err, leases, f.Stats()
}

func TestOneShotGivesUpALongRetryAfterAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second, FailureWait: time.Minute})
		f.Add(items("ok.test", 3, Normal)...)
		f.Add(items("busy.test", 3, Normal)...)
		took, err, leases, st := runWithWorker(t, f, func(l Lease) Result {
			if l.Host == "busy.test" {
				return Result{Fetched: true, Signal: Unavailable, RetryAfter: time.Hour, Retry: true, Cause: "robots.txt 503"}
			}
			return Result{Fetched: true}
		})
		if err != nil {
			t.Fatal(err)
		}
		// ok.test's three requests a second apart; busy.test asked once:
		// its hour is past the minute the crawl waits after an answer.
		if took > 5*time.Second {
			t.Errorf("Run took %v: it waited for a Retry-After of an hour", took)
		}
		busy := 0
		for _, l := range leases {
			if l.Host == "busy.test" {
				busy++
			}
		}
		if busy != 1 {
			t.Errorf("busy.test asked %d times, want 1", busy)
		}
		if len(st.Left) != 1 || st.Left[0].Name != "busy.test" {
			t.Fatalf("hosts left %+v, want busy.test", st.Left)
		}
		c := st.Left[0].Clock
		if c.Why != WhyRetryAfter || c.Cause != "robots.txt 503" || c.NextAt.Sub(time.Now()) < 50*time.Minute {
			t.Errorf("busy.test's clock %+v: want Retry-After, robots.txt 503, about an hour away", c)
		}
		if st.Queued != 3 {
			t.Errorf("%d URLs left queued, want busy.test's 3", st.Queued)
		}
	})
}

func TestOneShotRetriesShortBackoffsWithinTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A host that answers 503 without Retry-After: backoff 1, 2, 4,
		// 8, 16, 32 s; the crawl waits a minute after its last answer
		// (ok.test's page at 0.1 s), so it asks at 0, 1, 3, 7, 15, 31 s
		// and gives up before 63 s.
		f := newFrontier(t, Config{Delay: time.Second, FailureWait: time.Minute, Politeness: Politeness{ParkAfter: -1}})
		f.Add(items("ok.test", 1, Normal)...)
		f.Add(items("down.test", 1, Normal)...)
		took, err, leases, st := runWithWorker(t, f, func(l Lease) Result {
			if l.Host == "down.test" {
				return Result{Fetched: true, Signal: Unavailable, Retry: true}
			}
			return Result{Fetched: true}
		})
		if err != nil {
			t.Fatal(err)
		}
		down := 0
		for _, l := range leases {
			if l.Host == "down.test" {
				down++
			}
		}
		if down != 6 {
			t.Errorf("down.test asked %d times, want 6 (backoffs up to 32 s within the minute)", down)
		}
		if took < 31*time.Second || took > 61*time.Second {
			t.Errorf("Run took %v, want the last retry at 31 s and an end within the minute after the last answer", took)
		}
		if len(st.Left) != 1 || st.Left[0].Clock.Why != WhyBackoff || st.Left[0].Clock.Cause != "unavailable" {
			t.Errorf("left %+v, want down.test on its backoff after 503s", st.Left)
		}
	})
}

func TestOneShotWaitsForPolitenessAndHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A Crawl-delay of ten minutes is the host's own gap, not a
		// failure: every URL is fetched.
		f := newFrontier(t, Config{Delay: time.Second, FailureWait: time.Minute})
		f.Add(items("slow.test", 3, Normal)...)
		took, err, leases, st := runWithWorker(t, f, func(Lease) Result {
			return Result{Fetched: true, SetCrawlDelay: true, CrawlDelay: 10 * time.Minute}
		})
		if err != nil || len(leases) != 3 || len(st.Left) != 0 || took < 20*time.Minute {
			t.Errorf("Crawl-delay: %d leases in %v, left %v, err %v; want all 3 in 20 min", len(leases), took, st.Left, err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// An operator's hold keeps the crawl waiting, failures or not.
		f := newFrontier(t, Config{Delay: time.Second, FailureWait: time.Minute})
		f.Add(items("held.test", 1, Normal)...)
		f.Add(items("down.test", 1, Normal)...)
		f.Hold("held.test", true)
		go func() {
			time.Sleep(2 * time.Hour)
			f.Hold("held.test", false)
		}()
		took, err, leases, _ := runWithWorker(t, f, func(l Lease) Result {
			if l.Host == "down.test" {
				return Result{Fetched: true, Signal: Unavailable, RetryAfter: time.Hour, Retry: true}
			}
			return Result{Fetched: true}
		})
		if err != nil {
			t.Fatal(err)
		}
		if took < 2*time.Hour || len(leases) < 2 || leases[len(leases)-1].Host != "held.test" && leases[len(leases)-2].Host != "held.test" {
			t.Errorf("took %v, leases %d: the held host was not waited for", took, len(leases))
		}
	})
}

func TestKeepAliveAndZeroWaitWaitForEveryClock(t *testing.T) {
	for _, cfg := range []Config{{Delay: time.Second}, {Delay: time.Second, FailureWait: time.Minute, KeepAlive: true}} {
		synctest.Test(t, func(t *testing.T) {
			f := newFrontier(t, cfg)
			f.Add(items("busy.test", 2, Normal)...)
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Hour)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- f.Run(ctx) }()
			n := 0
			for {
				l, err := f.Next(ctx)
				if err != nil {
					break
				}
				n++
				r := Result{Fetched: true}
				if n == 1 {
					r = Result{Fetched: true, Signal: Throttled, RetryAfter: time.Hour, Retry: true}
				}
				f.Complete(l, r)
			}
			err := <-done
			if n != 3 {
				t.Errorf("%+v: %d leases, want 3 (the hour waited for)", cfg, n)
			}
			if cfg.KeepAlive && !errors.Is(err, context.DeadlineExceeded) || !cfg.KeepAlive && err != nil {
				t.Errorf("%+v: Run returned %v", cfg, err)
			}
		})
	}
}

func TestWaitNamesTheHostAndItsClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second, FailureWait: time.Minute})
		f.Add(items("a.test", 2, Normal)...)
		f.Add(items("held.test", 1, Normal)...)
		f.Hold("held.test", true)
		go f.Run(t.Context())
		l, err := f.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if w := f.Stats().Wait; w.Host != "" {
			t.Errorf("lease out: wait %+v, want none named", w)
		}
		f.Complete(l, Result{Fetched: true, Signal: Throttled, RetryAfter: 30 * time.Second, Retry: true, Cause: "429"})
		synctest.Wait()
		w := f.Stats().Wait
		if w.Host != "a.test" || w.Why != WhyRetryAfter || w.Cause != "429" || w.At.Sub(time.Now()) != 30*time.Second || w.Held != 1 {
			t.Errorf("wait %+v: want a.test, Retry-After, 429, in 30 s, one held host", w)
		}
		if w.Failures {
			t.Errorf("a held host waits: not a wait on failures alone")
		}
		f.Hold("held.test", false)
		l, err = f.Next(t.Context())
		if err != nil || l.Host != "held.test" {
			t.Fatalf("lease %v %v, want held.test", l.Host, err)
		}
		f.Complete(l, Result{Fetched: true})
		synctest.Wait()
		w = f.Stats().Wait
		if !w.Failures || w.Host != "a.test" || !w.GiveUpAt.Equal(time.Now().Add(time.Minute)) {
			t.Errorf("wait %+v: want a wait on failures alone, given up a minute after the last answer", w)
		}
	})
}

// A host that answers pages and then fails once, its request cut after a
// minute (a body trickled to the time limit: a hold of five minutes, past
// the failure wait), is waited for, and the rest of its pages fetched; the
// wait is named, until the host's clock. A second failure without a page
// answered between ends it, whether the first was a strain or a 429
// (which resets the clock's error streak), and whether the second was a
// page's or its sitemap's; so does a host that answered no more pages
// than it failed.
func TestOneShotWaitsOutOneFailureOfAHostThatAnswers(t *testing.T) {
	strain := Result{Fetched: true, Signal: Strained, Took: time.Minute, Cause: "body cut (time)"}
	for _, c := range []struct {
		name   string
		fail   map[int]Result // by lease number
		leased int
		left   bool
	}{
		{"one strain", map[int]Result{3: strain}, 7, false},
		{"two in a row", map[int]Result{3: strain, 4: strain}, 5, true},
		{"a 429, then a strain", map[int]Result{3: {Fetched: true, Signal: Throttled, Retry: true}, 4: strain}, 5, true},
		{"answered no more than it failed", map[int]Result{0: strain}, 1, true},
		{"a strain, then its sitemap's 429", map[int]Result{5: strain, 6: {Fetched: true, Signal: Throttled, Retry: true}}, 7, true},
		// A lease lost before the strain (its fetcher never said) is no
		// request without an answer: the strain is still the only one.
		{"a lost lease, then a strain", map[int]Result{2: {Fetched: true, Signal: Lost, Retry: true}, 3: strain}, 8, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFrontier(t, Config{Delay: time.Second, FailureWait: time.Minute, Politeness: Politeness{ParkAfter: -1}})
				f.Add(items("slow.test", 6, Normal)...)
				f.Add(Item{URL: "http://slow.test/sitemap.xml", Host: "slow.test", Priority: Low, Sitemap: true})
				n := 0
				named := make(chan Wait, 1) // the wait a second after the strain that is waited out
				took, err, leases, st := runWithWorker(t, f, func(l Lease) Result {
					defer func() { n++ }()
					if r, ok := c.fail[n]; ok {
						if c.name == "one strain" {
							go func() {
								time.Sleep(time.Second)
								named <- f.Stats().Wait
							}()
						}
						return r
					}
					return Result{Fetched: true}
				})
				if err != nil {
					t.Fatal(err)
				}
				if len(leases) != c.leased || (len(st.Left) > 0) != c.left {
					t.Errorf("%d leases, hosts left %+v after %v; want %d leases, a host left: %v", len(leases), st.Left, took, c.leased, c.left)
				}
				if c.name == "one strain" {
					if took < 5*time.Minute {
						t.Errorf("Run took %v: it did not wait out the strain's five minutes", took)
					}
					if w := <-named; !w.Failures || w.Host != "slow.test" || !w.GiveUpAt.Equal(w.At) {
						t.Errorf("the wait after the strain %+v: want failing hosts only, given up at slow.test's clock", w)
					}
				}
			})
		})
	}
}
