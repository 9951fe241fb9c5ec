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

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fetchLog records what fake workers did, in the frontier's fake time.
type fetchLog struct {
	mu      sync.Mutex
	starts  map[string][]time.Time
	ends    map[string][]time.Time
	order   []string
	busy    map[string]bool
	overlap []string
}

func newFetchLog() *fetchLog {
	return &fetchLog{starts: map[string][]time.Time{}, ends: map[string][]time.Time{}, busy: map[string]bool{}}
}

func (l *fetchLog) begin(it Item) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.busy[it.Host] {
		l.overlap = append(l.overlap, it.URL)
	}
	l.busy[it.Host] = true
	l.starts[it.Host] = append(l.starts[it.Host], time.Now())
	l.order = append(l.order, it.URL)
}

func (l *fetchLog) end(it Item) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.busy[it.Host] = false
	l.ends[it.Host] = append(l.ends[it.Host], time.Now())
}

// runWorkers runs n fake workers until the frontier drains. Each "fetch"
// takes fetchTime of fake time; result decides the completion.
func runWorkers(t *testing.T, f *Frontier, n int, fetchTime time.Duration, result func(Lease) Result) *fetchLog {
	t.Helper()
	log := newFetchLog()
	ctx := t.Context()
	runErr := make(chan error, 1)
	go func() { runErr <- f.Run(ctx) }()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				l, err := f.Next(ctx)
				if err != nil {
					if !errors.Is(err, ErrDrained) {
						t.Errorf("Next: %v", err)
					}
					return
				}
				log.begin(l.Item)
				time.Sleep(fetchTime) // the fake fetch; synctest makes it instant
				log.end(l.Item)
				f.Complete(l, result(l))
			}
		})
	}
	wg.Wait()
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	return log
}

func fetched(Lease) Result { return Result{Fetched: true} }

func items(host string, n int, p Priority) []Item {
	out := make([]Item, n)
	for i := range out {
		out[i] = Item{URL: fmt.Sprintf("http://%s/%d", host, i), Host: host, Priority: p}
	}
	return out
}

// nextLease asks for the next lease in the background.
func nextLease(ctx context.Context, f *Frontier) <-chan Lease {
	got := make(chan Lease, 1)
	go func() {
		if l, err := f.Next(ctx); err == nil {
			got <- l
		}
	}()
	return got
}

// noLeaseWithin lets d pass in the bubble and fails if got delivered a
// lease meanwhile (format names its URL).
func noLeaseWithin(t *testing.T, got <-chan Lease, d time.Duration, format string) {
	t.Helper()
	time.Sleep(d)
	synctest.Wait()
	select {
	case l := <-got:
		t.Fatalf(format, l.URL)
	default:
	}
}

func newFrontier(t *testing.T, cfg Config) *Frontier {
	t.Helper()
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// checkGaps fails if two requests to a host overlap or if a request starts
// less than gap after the previous one ended.
func checkGaps(t *testing.T, log *fetchLog, gap time.Duration) {
	t.Helper()
	if len(log.overlap) > 0 {
		t.Errorf("overlapping requests: %v", log.overlap)
	}
	for host, starts := range log.starts {
		ends := log.ends[host]
		for i := 1; i < len(starts); i++ {
			if d := starts[i].Sub(ends[i-1]); d < gap {
				t.Errorf("host %s: request %d started %v after the previous ended; want >= %v", host, i, d, gap)
			}
		}
	}
}

func TestOneInFlightPerHostAndDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second})
		f.Add(items("a.test", 10, Normal)...)
		f.Add(items("b.test", 10, Normal)...)
		start := time.Now()
		log := runWorkers(t, f, 16, 100*time.Millisecond, fetched)
		checkGaps(t, log, time.Second)
		if got := len(log.order); got != 20 {
			t.Fatalf("fetched %d URLs, want 20", got)
		}
		// Two hosts crawled in parallel: 10 fetches of 100ms with 9 gaps of
		// 1s each, not 20 fetches in sequence.
		if d := time.Since(start); d != 10*100*time.Millisecond+9*time.Second {
			t.Errorf("crawl took %v of fake time, want 9.1s+0.9s", d)
		}
	})
}

func TestCrawlDelayRaisesGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second})
		f.Add(items("slow.test", 4, Normal)...)
		f.Add(items("fast.test", 4, Normal)...)
		log := runWorkers(t, f, 4, 0, func(l Lease) Result {
			if l.Host == "slow.test" {
				return Result{Fetched: true, SetCrawlDelay: true, CrawlDelay: 5 * time.Second}
			}
			// A Crawl-delay below --delay does not lower the gap.
			return Result{Fetched: true, SetCrawlDelay: true, CrawlDelay: 100 * time.Millisecond}
		})
		s := log.starts["slow.test"]
		for i := 1; i < len(s); i++ {
			if d := s[i].Sub(s[i-1]); d != 5*time.Second {
				t.Errorf("slow.test gap %d = %v, want 5s", i, d)
			}
		}
		fs := log.starts["fast.test"]
		for i := 1; i < len(fs); i++ {
			if d := fs[i].Sub(fs[i-1]); d != time.Second {
				t.Errorf("fast.test gap %d = %v, want 1s", i, d)
			}
		}
	})
}

func TestNextWaitsForTheHostClockWithoutPolling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: 10 * time.Second})
		f.Add(items("a.test", 2, Normal)...)
		ctx := t.Context()
		go f.Run(ctx)
		start := time.Now()
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.Complete(l, Result{Fetched: true})
		got := make(chan time.Time, 1)
		go func() {
			l2, err := f.Next(ctx)
			if err != nil {
				t.Errorf("Next: %v", err)
				return
			}
			got <- time.Now()
			f.Complete(l2, Result{Fetched: true})
		}()
		// Every goroutine is durably blocked: the dispatcher on its timer,
		// the worker on the lease channel. Nothing runs in between, which a
		// polling loop would.
		synctest.Wait()
		select {
		case <-got:
			t.Fatalf("second lease released at once")
		default:
		}
		if d := (<-got).Sub(start); d != 10*time.Second {
			t.Fatalf("second lease after %v, want exactly 10s", d)
		}
	})
}

func TestCrawlDelayIsKeptUntilSetAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second})
		f.Add(items("a.test", 4, Normal)...)
		n := 0
		log := runWorkers(t, f, 2, 0, func(Lease) Result {
			n++
			if n == 1 { // robots.txt said Crawl-delay: 3
				return Result{Fetched: true, SetCrawlDelay: true, CrawlDelay: 3 * time.Second}
			}
			return Result{Fetched: true} // knows nothing of robots.txt
		})
		s := log.starts["a.test"]
		for i := 1; i < len(s); i++ {
			if d := s[i].Sub(s[i-1]); d != 3*time.Second {
				t.Errorf("gap %d = %v, want the remembered 3s", i, d)
			}
		}
	})
}

func TestParkHoldsHostUntilUnpark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second})
		f.Add(items("a.test", 2, Normal)...)
		ctx := t.Context()
		runErr := make(chan error, 1)
		go func() { runErr <- f.Run(ctx) }()
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.Complete(l, Result{Fetched: true, Retry: true, Park: true})
		got := make(chan Lease, 1)
		go func() {
			l, err := f.Next(ctx)
			if err == nil {
				got <- l
			}
		}()
		time.Sleep(time.Hour) // far past the delay: only Unpark may release it
		synctest.Wait()
		select {
		case l := <-got:
			t.Fatalf("parked host leased %s", l.URL)
		default:
		}
		if s := f.Stats(); s.ParkedHosts != 1 || s.Queued != 2 {
			t.Fatalf("stats %+v, want 1 parked host with 2 URLs", s)
		}
		f.Unpark("a.test")
		l = <-got
		if l.URL != "http://a.test/0" {
			t.Fatalf("after unpark leased %s, want the retried URL first", l.URL)
		}
		f.Complete(l, Result{Fetched: true})
		l, _ = f.Next(ctx)
		f.Complete(l, Result{Fetched: true})
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
	})
}

func TestNotFetchedDoesNotArmClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Hour})
		f.Add(items("a.test", 5, Normal)...)
		start := time.Now()
		log := runWorkers(t, f, 2, 0, func(Lease) Result { return Result{} })
		if len(log.order) != 5 {
			t.Fatalf("leased %d, want 5", len(log.order))
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("URLs dropped without a request took %v; the clock must not be armed", d)
		}
	})
}

func TestRetryRequeuesAtHeadAfterDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second})
		f.Add(items("a.test", 3, Normal)...)
		first := true
		log := runWorkers(t, f, 2, 0, func(l Lease) Result {
			if first { // "robots.txt was fetched instead"
				first = false
				return Result{Fetched: true, Retry: true}
			}
			return Result{Fetched: true}
		})
		want := []string{"http://a.test/0", "http://a.test/0", "http://a.test/1", "http://a.test/2"}
		if fmt.Sprint(log.order) != fmt.Sprint(want) {
			t.Fatalf("order %v, want %v", log.order, want)
		}
		checkGaps(t, log, time.Second)
	})
}

// A URL put aside (Result.Later) is leased again only once nothing else
// is queued or in flight, on its host or any other, and a frontier that
// drains leases it before it drains; the pages among the URLs queued are
// counted apart (Stats.Pages), and the URLs aside are still queued.
func TestLaterWaitsUntilNothingElseIsQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second})
		sitemap := Item{URL: "http://a.test/map.xml", Host: "a.test", Priority: High, Sitemap: true}
		f.Add(append([]Item{sitemap}, append(items("a.test", 3, Normal), items("b.test", 3, Normal)...)...)...)
		var mid []Stats
		put := 0
		log := runWorkers(t, f, 2, 0, func(l Lease) Result {
			if l.Sitemap && put == 0 {
				put++
				return Result{Retry: true, Later: true}
			}
			if l.URL == "http://b.test/2" {
				mid = append(mid, f.Stats())
			}
			return Result{Fetched: true}
		})
		if n := len(log.order); n != 8 || log.order[7] != sitemap.URL || slices.Index(log.order, sitemap.URL) > 1 {
			t.Fatalf("order %v; want the sitemap among the first two, put aside, and leased again last of the eight leases", log.order)
		}
		if len(mid) != 1 || mid[0].Aside != 1 || mid[0].Queued < 1 || mid[0].Pages != mid[0].Queued-1 {
			t.Errorf("stats while b.test/2 was out: %+v; want the sitemap aside, queued, and not among the pages", mid)
		}
	})
}

// Past Config.FrontBuffer URLs aside, one more put aside is leased again
// at once, as one brought back is (Lease.Last): none is lost for the run.
func TestLaterPastTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second, FrontBuffer: 1})
		f.Add(Item{URL: "http://a.test/1.xml", Host: "a.test", Sitemap: true}, Item{URL: "http://b.test/2.xml", Host: "b.test", Sitemap: true})
		var leases []string
		log := runWorkers(t, f, 1, 0, func(l Lease) Result {
			leases = append(leases, fmt.Sprint(l.URL, " ", l.Last))
			if !l.Last {
				return Result{Retry: true, Later: true}
			}
			return Result{Fetched: true}
		})
		want := []string{"http://a.test/1.xml false", "http://b.test/2.xml false", "http://b.test/2.xml true", "http://a.test/1.xml true"}
		if !slices.Equal(leases, want) || len(log.order) != 4 {
			t.Errorf("leases %v; want %v: the first aside, the second past the bound leased again at once, then the first brought back", leases, want)
		}
	})
}

// TestWeightedPickDoesNotStarve serves 300 high and 300 low URLs, one back
// queue at a time: the low queue is neither starved nor served as often
// as the high one. The pick is a random draw at each refill, and how many
// refills a run makes depends on the scheduling of its goroutines, so the
// bounds are set about 3.5 standard deviations out, not on one draw.
func TestWeightedPickDoesNotStarve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One back queue at a time, so the front queues' pick decides the
		// order completely.
		f := newFrontier(t, Config{MaxActiveHosts: 1, Seed: 7})
		for i := range 300 {
			f.Add(Item{URL: fmt.Sprintf("http://h%d.test/", i), Host: fmt.Sprintf("h%d.test", i), Priority: High})
		}
		for i := range 300 {
			f.Add(Item{URL: fmt.Sprintf("http://l%d.test/", i), Host: fmt.Sprintf("l%d.test", i), Priority: Low})
		}
		log := runWorkers(t, f, 1, 0, fetched)
		const early = 340
		firstLow, lowsEarly := -1, 0
		for i, u := range log.order {
			if u[7] == 'l' {
				if firstLow < 0 {
					firstLow = i
				}
				if i < early {
					lowsEarly++
				}
			}
		}
		// Strict priority would serve all 300 high URLs first. With weights
		// 1:16 about one pick in 17 goes to the low queue: the first low
		// one comes after 16 on average (P(>150) = 1e-4), and about 20 of
		// the first 340 are low (sd 4.3); equal weights would make it 170.
		if firstLow < 0 || firstLow > 150 {
			t.Errorf("first low-priority URL served at position %d; the low queue starves", firstLow)
		}
		if lowsEarly < 5 || lowsEarly > 60 {
			t.Errorf("%d of the first %d leases were low priority, want about 20 (1 in 17)", lowsEarly, early)
		}
	})
}

func TestActiveHostsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{MaxActiveHosts: 3, Delay: time.Second})
		for i := range 10 {
			f.Add(items(fmt.Sprintf("h%d.test", i), 3, Normal)...)
		}
		ctx := t.Context()
		runErr := make(chan error, 1)
		go func() { runErr <- f.Run(ctx) }()
		maxActive, inflight := 0, 0
		for {
			s := f.Stats()
			maxActive = max(maxActive, s.ActiveHosts)
			l, err := f.Next(ctx)
			if errors.Is(err, ErrDrained) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			inflight++
			f.Complete(l, Result{Fetched: true})
		}
		if maxActive > 3 {
			t.Errorf("active hosts reached %d, bound is 3", maxActive)
		}
		if inflight != 30 {
			t.Errorf("leased %d, want 30", inflight)
		}
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
	})
}

func TestCompleteTwiceIsHarmless(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second})
		f.Add(items("a.test", 2, Normal)...)
		ctx := t.Context()
		go f.Run(ctx)
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.Complete(l, Result{Fetched: true})
		f.Complete(l, Result{Fetched: true, Retry: true})
		synctest.Wait()
		if s := f.Stats(); s.Queued != 1 || s.InFlight != 0 {
			t.Fatalf("after a double completion: %+v, want 1 queued, 0 in flight", s)
		}
		l, err = f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.Complete(l, Result{Fetched: true})
		if _, err := f.Next(ctx); !errors.Is(err, ErrDrained) {
			t.Fatalf("Next after the last completion: %v, want ErrDrained", err)
		}
	})
}

func TestLinksAddedBeforeCompletionKeepCrawlAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{})
		f.Add(Item{URL: "http://a.test/0", Host: "a.test"})
		n := 0
		log := runWorkers(t, f, 4, time.Millisecond, func(l Lease) Result {
			n++
			if n < 50 { // each page links to one new page on another host
				f.Add(Item{URL: fmt.Sprintf("http://h%d.test/", n), Host: fmt.Sprintf("h%d.test", n)})
			}
			return Result{Fetched: true}
		})
		if len(log.order) != 50 {
			t.Fatalf("crawled %d pages, want 50: the frontier drained early", len(log.order))
		}
	})
}

func TestStatsAndStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Minute})
		f.Add(items("a.test", 3, Normal)...)
		f.Add(items("b.test", 2, High)...)
		ctx, cancel := context.WithCancel(t.Context())
		runErr := make(chan error, 1)
		go func() { runErr <- f.Run(ctx) }()
		synctest.Wait()
		s := f.Stats()
		if s.Queued != 5 || s.ActiveHosts != 2 || s.ReadyHosts != 2 || s.KnownHosts != 2 {
			t.Fatalf("stats %+v", s)
		}
		l, _ := f.Next(ctx)
		if l.Host != "b.test" {
			t.Errorf("first lease for %s; the high-priority host should win the tie", l.Host)
		}
		f.Complete(l, Result{Fetched: true})
		synctest.Wait()
		s = f.Stats()
		if s.ReadyHosts != 1 || s.WaitingHost != 1 {
			t.Fatalf("after one fetch: %+v, want 1 ready and 1 waiting", s)
		}
		cancel()
		if err := <-runErr; !errors.Is(err, context.Canceled) {
			t.Fatalf("Run after cancel: %v", err)
		}
		if _, err := f.Next(t.Context()); !errors.Is(err, ErrStopped) {
			t.Fatalf("Next after Run returned: %v, want ErrStopped", err)
		}
		if s := f.Stats(); s.Queued != 4 || s.KnownHosts != 2 {
			t.Fatalf("Stats after stop: %+v, want what was left: 4 queued, 2 hosts", s)
		}
	})
}

func TestValidate(t *testing.T) {
	if _, err := New(Config{Delay: -1}); err == nil {
		t.Error("negative delay accepted")
	}
	if _, err := New(Config{Weights: [3]int{0, 1, 1}}); err == nil {
		t.Error("zero weight accepted")
	}
	if _, err := New(Config{MaxActiveHosts: -1}); err == nil {
		t.Error("negative MaxActiveHosts accepted")
	}
}

// BenchmarkLeaseComplete measures one URL's trip through the frontier with
// many hosts and no delay: Add, Next, Complete.
func BenchmarkLeaseComplete(b *testing.B) {
	f, _ := New(Config{KeepAlive: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	const hosts = 1000
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h := fmt.Sprintf("h%d.test", i%hosts)
		f.Add(Item{URL: "http://" + h + "/x", Host: h})
		l, err := f.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		f.Complete(l, Result{Fetched: true})
	}
	b.StopTimer()
	cancel()
	<-done
}
