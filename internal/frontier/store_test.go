package frontier

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// diskStore is a Store in memory that behaves as the crawl's durable store
// does: the caller pushes items to the front queues (push), the frontier
// moves them to tails (Spill), and the worker deletes an item's entry when
// it is done with it (done). Reads count, so tests can see the batching.
type diskStore struct {
	mu     sync.Mutex
	seq    uint64
	front  [numQueues]map[uint64]Item
	tails  map[string]map[uint64]Item
	clocks map[string]Clock
	reads  int
	spills int
	failOn string // "front", "tail", "spill" or "clock": that call fails
}

func newDiskStore() *diskStore {
	d := &diskStore{tails: map[string]map[uint64]Item{}, clocks: map[string]Clock{}}
	for p := range d.front {
		d.front[p] = map[uint64]Item{}
	}
	return d
}

var errInjected = errors.New("injected store failure")

// push writes items to their front queues, as the crawl's batch does, and
// returns them with their positions, ready for Add.
func (d *diskStore) push(items ...Item) []Item {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := slices.Clone(items)
	for i := range out {
		d.seq++
		out[i].Seq = d.seq
		d.front[out[i].Priority][d.seq] = out[i]
	}
	return out
}

// done deletes the entry of a leased item, as the crawl's completion does.
func (d *diskStore) done(it Item) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if it.Tail {
		delete(d.tails[it.Host], it.Seq)
		if len(d.tails[it.Host]) == 0 {
			delete(d.tails, it.Host)
		}
		return
	}
	delete(d.front[it.Priority], it.Seq)
}

func (d *diskStore) size() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for p := range d.front {
		n += len(d.front[p])
	}
	for _, t := range d.tails {
		n += len(t)
	}
	return n
}

func after(m map[uint64]Item, after uint64, n int) []Item {
	var seqs []uint64
	for s := range m {
		if s > after {
			seqs = append(seqs, s)
		}
	}
	slices.Sort(seqs)
	var out []Item
	for _, s := range seqs[:min(n, len(seqs))] {
		out = append(out, m[s])
	}
	return out
}

func (d *diskStore) Front(p Priority, a uint64, n int) ([]Item, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failOn == "front" {
		return nil, errInjected
	}
	d.reads++
	return after(d.front[p], a, n), nil
}

func (d *diskStore) Tail(host string, a uint64, n int) ([]Item, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failOn == "tail" {
		return nil, errInjected
	}
	d.reads++
	out := after(d.tails[host], a, n)
	for i := range out {
		out[i].Tail = true
	}
	return out, nil
}

func (d *diskStore) Spill(items []Item, seqs []uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failOn == "spill" {
		return errInjected
	}
	d.spills++
	for i, it := range items {
		from := d.front[it.Priority]
		if it.Tail {
			from = d.tails[it.Host]
		}
		if _, ok := from[it.Seq]; !ok {
			return fmt.Errorf("spill of %s: no entry at %d (tail %v)", it.URL, it.Seq, it.Tail)
		}
		delete(from, it.Seq)
		it.Seq, it.Tail = seqs[i], true
		if d.tails[it.Host] == nil {
			d.tails[it.Host] = map[uint64]Item{}
		}
		d.tails[it.Host][seqs[i]] = it
	}
	return nil
}

func (d *diskStore) TailHosts(fn func(string, uint64) bool) error {
	d.mu.Lock()
	hosts := slices.Sorted(maps.Keys(d.tails))
	last := map[string]uint64{}
	for _, h := range hosts {
		last[h] = slices.Max(slices.Collect(maps.Keys(d.tails[h])))
	}
	d.mu.Unlock()
	for _, h := range hosts {
		if !fn(h, last[h]) {
			break
		}
	}
	return nil
}

func (d *diskStore) Clock(host string) (Clock, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failOn == "clock" {
		return Clock{}, false, errInjected
	}
	c, ok := d.clocks[host]
	return c, ok, nil
}

// drainStore runs n workers over f until it drains (or stop returns true
// after a lease, which ends the run as a crash would: leases out are neither
// completed nor deleted). Each worker deletes its item's entry before it
// completes the lease, as the crawl does. It returns the URLs leased, in
// order, and the largest Stats.InMemory seen.
func drainStore(t *testing.T, f *Frontier, d *diskStore, n int, fetchTime time.Duration, stop func(leased int) bool) (order []string, peak int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- f.Run(ctx) }()
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		stopped bool
	)
	for range n {
		wg.Go(func() {
			for {
				l, err := f.Next(ctx)
				if err != nil {
					return
				}
				mu.Lock()
				order = append(order, l.URL)
				if stop != nil && stop(len(order)) {
					stopped = true
					cancel()
				}
				mu.Unlock()
				time.Sleep(fetchTime)
				if ctx.Err() != nil {
					return // crashed with this lease out
				}
				d.done(l.Item)
				f.Complete(l, Result{Fetched: true})
				if s := f.Stats(); true {
					mu.Lock()
					peak = max(peak, s.InMemory)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	err := <-runErr
	if !stopped && err != nil {
		t.Fatalf("Run: %v", err)
	}
	return order, peak
}

// TestStoreBoundsMemoryAndLosesNothing queues far more URLs than the
// frontier may hold, over more hosts than it may serve at once, and checks
// that each is leased exactly once, in order within its host, with the
// memory held never above its bound.
func TestStoreBoundsMemoryAndLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDiskStore()
		cfg := Config{Store: d, MaxActiveHosts: 3, FrontBuffer: 8, HeadSize: 2, FirstSeq: 1}
		f := newFrontier(t, cfg)
		const hosts, perHost = 10, 20
		for h := range hosts {
			// Each host's URLs in a row, as a page's links mostly are, so
			// heads fill and URLs go to tails.
			for i := range perHost {
				f.Add(d.push(Item{URL: fmt.Sprintf("http://h%d.test/%03d", h, i), Host: fmt.Sprintf("h%d.test", h), Priority: Normal})...)
			}
		}
		order, peak := drainStore(t, f, d, 4, time.Millisecond, nil)
		if len(order) != hosts*perHost {
			t.Fatalf("leased %d URLs, want %d", len(order), hosts*perHost)
		}
		seen := map[string]bool{}
		last := map[string]string{}
		for _, u := range order {
			if seen[u] {
				t.Fatalf("%s leased twice", u)
			}
			seen[u] = true
			host := u[7:11]
			if u < last[host] {
				t.Errorf("%s leased after %s: a host's URLs out of order", u, last[host])
			}
			last[host] = u
		}
		// Three front queues of 8, three heads of 2 (a retried or robots
		// item may push one head over by one).
		if bound := 3*8 + 3*(2+1); peak > bound {
			t.Errorf("memory held %d URLs, bound %d", peak, bound)
		}
		if d.spills == 0 {
			t.Error("no URL went to a host's tail on disk; the test does not test spilling")
		}
		if n := d.size(); n != 0 {
			t.Errorf("%d entries left on disk after the drain", n)
		}
	})
}

// TestStoreRestartQueuesAgain crashes a run with leases out and URLs in
// front queues and tails, and checks that a new frontier over the same
// store leases every URL not done, the ones that were out included, and
// nothing that was done.
func TestStoreRestartQueuesAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDiskStore()
		cfg := Config{Store: d, MaxActiveHosts: 2, FrontBuffer: 4, HeadSize: 2, FirstSeq: 1}
		f := newFrontier(t, cfg)
		var all []string
		for h := range 5 { // a host's URLs in a row: heads fill, tails form
			for i := range 12 {
				it := Item{URL: fmt.Sprintf("http://h%d.test/%03d", h, i), Host: fmt.Sprintf("h%d.test", h), Priority: Priority(h % 3)}
				all = append(all, it.URL)
				f.Add(d.push(it)...)
			}
		}
		first, _ := drainStore(t, f, d, 3, time.Millisecond, func(n int) bool { return n == 25 })
		if len(d.tails) == 0 {
			t.Fatal("no tails on disk at the crash; the test does not test them")
		}
		cfg.FirstSeq = d.seq + 1
		f2 := newFrontier(t, cfg)
		second, _ := drainStore(t, f2, d, 3, time.Millisecond, nil)
		// The leases out at the crash were not done: they come again.
		count := map[string]int{}
		for _, u := range append(first, second...) {
			count[u]++
		}
		twice := 0
		for _, u := range all {
			switch count[u] {
			case 0:
				t.Errorf("%s never leased: lost in the crash", u)
			case 1:
			case 2:
				twice++
			default:
				t.Errorf("%s leased %d times", u, count[u])
			}
		}
		if twice > 3 {
			t.Errorf("%d URLs leased twice; at most the 3 leases out at the crash may be", twice)
		}
		if s := f2.Stats(); s.Queued != 0 {
			t.Errorf("after the drain Stats.Queued = %d", s.Queued)
		}
		if n := d.size(); n != 0 {
			t.Errorf("%d entries left on disk", n)
		}
	})
}

// TestStoreResumeHoldsStoredClock checks that a host's clock comes back
// from the store when it becomes active, and that after a restart every
// host waits a whole gap from the restart.
func TestStoreResumeHoldsStoredClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDiskStore()
		start := time.Now()
		d.clocks["late.test"] = Clock{NextAt: start.Add(time.Minute), CrawlDelay: 5 * time.Second}
		d.clocks["past.test"] = Clock{NextAt: start.Add(-time.Hour), CrawlDelay: 3 * time.Second}
		f := newFrontier(t, Config{Store: d, Delay: time.Second, Resumed: start, FirstSeq: 1})
		f.Add(d.push(items("late.test", 2, Normal)...)...)
		f.Add(d.push(items("past.test", 2, Normal)...)...)
		f.Add(d.push(items("new.test", 1, Normal)...)...)
		log := map[string][]time.Time{}
		var mu sync.Mutex
		ctx := t.Context()
		go f.Run(ctx)
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				for {
					l, err := f.Next(ctx)
					if err != nil {
						return
					}
					mu.Lock()
					log[l.Host] = append(log[l.Host], time.Now())
					mu.Unlock()
					d.done(l.Item)
					f.Complete(l, Result{Fetched: true})
				}
			})
		}
		wg.Wait()
		want := map[string][]time.Duration{
			"late.test": {time.Minute, time.Minute + 5*time.Second}, // stored clock, then stored Crawl-delay
			"past.test": {3 * time.Second, 6 * time.Second},         // a gap (its Crawl-delay) from the restart
			"new.test":  {time.Second},                              // no stored clock: still a gap from the restart
		}
		for host, ds := range want {
			for i, dd := range ds {
				if i >= len(log[host]) {
					t.Errorf("%s: %d leases, want %d", host, len(log[host]), len(ds))
					break
				}
				if got := log[host][i].Sub(start); got != dd {
					t.Errorf("%s lease %d at %v, want %v", host, i, got, dd)
				}
			}
		}
	})
}

// TestStoreLateAddIsNotLeasedTwice reads URLs from disk before their Add
// arrives, as happens when a batch commits just before the frontier reads
// its front queue, and checks each is still leased once.
func TestStoreLateAddIsNotLeasedTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDiskStore()
		f := newFrontier(t, Config{Store: d, FrontBuffer: 4, FirstSeq: 1})
		var late []Item
		for i := range 10 {
			late = append(late, d.push(Item{URL: fmt.Sprintf("http://h%d.test/", i), Host: fmt.Sprintf("h%d.test", i)})...)
		}
		ctx := t.Context()
		runErr := make(chan error, 1)
		go func() { runErr <- f.Run(ctx) }()
		count := map[string]int{}
		for range 5 { // the first reads find them on disk
			l, err := f.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			count[l.URL]++
			d.done(l.Item)
			f.Complete(l, Result{Fetched: true})
		}
		f.Add(late...) // now their Adds arrive
		for {
			l, err := f.Next(ctx)
			if errors.Is(err, ErrDrained) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			count[l.URL]++
			d.done(l.Item)
			f.Complete(l, Result{Fetched: true})
		}
		if len(count) != 10 {
			t.Errorf("leased %d distinct URLs, want 10", len(count))
		}
		for u, n := range count {
			if n != 1 {
				t.Errorf("%s leased %d times", u, n)
			}
		}
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
	})
}

// TestStoreErrorStopsRun checks that a failing store read stops Run with
// an error that says what it was doing.
func TestStoreErrorStopsRun(t *testing.T) {
	for _, what := range []string{"front", "tail", "spill", "clock"} {
		t.Run(what, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := newDiskStore()
				f := newFrontier(t, Config{Store: d, HeadSize: 1, FrontBuffer: 2, FirstSeq: 1})
				f.Add(d.push(items("a.test", 6, Normal)...)...)
				if what == "tail" {
					d.tails["b.test"] = map[uint64]Item{1: {URL: "http://b.test/", Host: "b.test"}}
				}
				d.failOn = what
				err := f.Run(t.Context())
				if !errors.Is(err, errInjected) {
					t.Fatalf("Run = %v, want the injected error", err)
				}
				if _, err := f.Next(t.Context()); !errors.Is(err, ErrStopped) {
					t.Errorf("Next after a store error: %v, want ErrStopped", err)
				}
			})
		})
	}
}

// TestLeaseExpires checks that a lease not completed in time goes back to
// its host's queue, that the host waits a gap as if it had been fetched, and
// that the late completion changes nothing.
func TestLeaseExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second, LeaseTimeout: 10 * time.Second})
		f.Add(items("a.test", 2, Normal)...)
		ctx := t.Context()
		runErr := make(chan error, 1)
		go func() { runErr <- f.Run(ctx) }()
		start := time.Now()
		lost, err := f.Next(ctx) // a fetcher that never comes back
		if err != nil {
			t.Fatal(err)
		}
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if l.URL != lost.URL || time.Since(start) != 11*time.Second {
			t.Fatalf("after expiry leased %s at %v, want %s at 11s (10s lease, 1s gap)", l.URL, time.Since(start), lost.URL)
		}
		if l.Clock.Errors != 0 || l.Clock.Streak != 0 || l.Clock.Failing() {
			t.Fatalf("after expiry the host's clock is %+v: a lost lease is no failure", l.Clock)
		}
		f.Complete(lost, Result{Fetched: true}) // too late: ignored
		synctest.Wait()
		if s := f.Stats(); s.InFlight != 1 || s.Expired != 1 || s.Queued != 1 {
			t.Fatalf("stats %+v, want 1 in flight, 1 expired, 1 queued", s)
		}
		f.Complete(l, Result{Fetched: true})
		l, err = f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.Complete(l, Result{Fetched: true})
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
	})
}

// TestStoreTailFromTheFutureIsKept restarts over a tail written when the
// clock was ahead: new tail positions must still go after the stored ones,
// not over them.
func TestStoreTailFromTheFutureIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDiskStore()
		future := uint64(time.Now().Add(time.Hour).UnixNano())
		d.tails["a.test"] = map[uint64]Item{}
		for i := range 4 {
			d.tails["a.test"][future+uint64(i)] = Item{URL: fmt.Sprintf("http://a.test/old%d", i), Host: "a.test", Seq: future + uint64(i), Tail: true}
		}
		f := newFrontier(t, Config{Store: d, HeadSize: 2, FrontBuffer: 4, FirstSeq: 1})
		f.Add(d.push(items("a.test", 4, Normal)...)...)
		order, _ := drainStore(t, f, d, 2, time.Millisecond, nil)
		if len(order) != 8 {
			t.Fatalf("leased %v, want the 4 old and 4 new URLs", order)
		}
		if n := d.size(); n != 0 {
			t.Errorf("%d entries left on disk", n)
		}
	})
}
