package frontier

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A borrowed lease waits for its host's clock like a queued URL: not while
// a worker's lease on the host is out, and not before the delay after it;
// and the worker's next URL waits in turn for the borrowed one.
func TestBorrowWaitsForTheHostClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: 10 * time.Second, KeepAlive: true})
		f.Add(items("a.test", 2, Normal)...)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go f.Run(ctx)
		start := time.Now()
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := borrowLater(t, ctx, f, "a.test", "http://a.test/script.js")
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("borrowed while the host's lease was out")
		default:
		}
		time.Sleep(time.Second) // the worker's fetch, in fake time
		f.Complete(l, Result{Fetched: true})
		bl := <-got
		if d := time.Since(start); d != 11*time.Second {
			t.Fatalf("borrowed after %v, want 1s of fetch + 10s of delay", d)
		}
		if bl.URL != "http://a.test/script.js" || !bl.Requests() {
			t.Fatalf("borrowed lease %+v", bl)
		}
		// The next worker lease waits for the borrowed one, then the delay.
		next := make(chan time.Time, 1)
		go func() {
			l2, err := f.Next(ctx)
			if err != nil {
				t.Errorf("Next: %v", err)
				return
			}
			next <- time.Now()
			f.Complete(l2, Result{Fetched: true})
		}()
		synctest.Wait()
		select {
		case <-next:
			t.Fatal("worker leased the host while a borrowed lease was out")
		default:
		}
		f.Complete(bl, Result{Fetched: true, Retry: true}) // Retry is ignored for a borrowed URL
		if d := (<-next).Sub(start); d != 21*time.Second {
			t.Fatalf("worker's next lease after %v, want 21s", d)
		}
		if q := f.Stats().Queued; q != 0 {
			t.Fatalf("queued %d after all, want 0 (a borrowed URL is not queued again)", q)
		}
		cancel()
	})
}

// A Borrow given up (its context ends) leaves nothing behind: the host's
// next worker lease comes as if it had never been asked.
func TestBorrowCanceledLeavesHostFree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: 10 * time.Second, KeepAlive: true})
		f.Add(items("a.test", 2, Normal)...)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go f.Run(ctx)
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		bctx, bcancel := context.WithTimeout(ctx, 5*time.Second)
		defer bcancel()
		if _, err := f.Borrow(bctx, "a.test", "http://a.test/x.js", Lease{}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Borrow while the host is busy past its context: %v", err)
		}
		f.Complete(l, Result{Fetched: true})
		l2, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if l2.borrow != nil {
			t.Fatal("a worker got a borrowed URL")
		}
		f.Complete(l2, Result{Fetched: true})
		synctest.Wait()
		if s := f.Stats(); s.Queued != 0 || s.InFlight != 0 {
			t.Fatalf("after all: %+v", s)
		}
		cancel()
	})
}

// A borrowed URL is given as soon as its host is ready, though other
// hosts were ready before it and no worker asks for them: its caller may
// be a worker itself, holding a lease while it waits.
func TestBorrowIsNotQueuedBehindReadyHosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: 10 * time.Second, KeepAlive: true})
		for _, h := range []string{"b.test", "c.test", "d.test"} {
			f.Add(items(h, 3, Normal)...)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go f.Run(ctx)
		time.Sleep(time.Second) // the three hosts are ready before a.test
		start := time.Now()
		bl, err := f.Borrow(ctx, "a.test", "http://a.test/app.js", Lease{})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("borrowed after %v behind hosts no worker asked for, want at once", d)
		}
		f.Complete(bl, Result{Fetched: true})
		// The others are still there for the workers.
		for range 3 {
			l, err := f.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if l.Host == "a.test" {
				t.Fatalf("a worker got the borrowed host: %+v", l)
			}
			f.Complete(l, Result{Fetched: true})
		}
		cancel()
	})
}

// A caller holding a lease on one host of a server may borrow another
// host of that server: its own lease does not hold the borrowed one back
// (it would until the caller gave it up), the lease says so (SameServer),
// and anyone else's lease to that server still does.
func TestBorrowUnderALeaseOnTheSameServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{IPGap: 500 * time.Millisecond, KeepAlive: true})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		held, other := leaseOnSharedServer(t, ctx, f)
		start := time.Now()
		// Without the held lease (another worker's, say), the server is busy.
		bctx, bcancel := context.WithTimeout(ctx, 2*time.Second)
		defer bcancel()
		if _, err := f.Borrow(bctx, other, "http://"+other+"/a.js", Lease{}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Borrow while another lease on the server is out: %v, want to wait past its context", err)
		}
		bl, err := f.Borrow(ctx, other, "http://"+other+"/a.js", held)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Fatalf("borrowed under the held lease after %v, want at once (2s)", d)
		}
		if !bl.SameServer || !bl.Requests() {
			t.Fatalf("borrowed lease %+v, want SameServer and a request", bl)
		}
		// With the borrowed lease out too, no worker gets the server.
		next := make(chan Lease, 1)
		go func() {
			l, err := f.Next(ctx)
			if err == nil {
				next <- l
			}
		}()
		f.Complete(held, Result{Fetched: true})
		synctest.Wait()
		select {
		case l := <-next:
			t.Fatalf("a worker leased %s while a borrowed lease on its server was out", l.Host)
		default:
		}
		f.Complete(bl, Result{Fetched: true})
		l := <-next
		if d := time.Since(start); d != 2*time.Second+500*time.Millisecond {
			t.Fatalf("the worker's lease came %v after the start, want 2.5s (the gap after the borrowed request)", d)
		}
		f.Complete(l, Result{Fetched: true})
		cancel()
	})
}

// A borrowed lease that sends nothing gives back the server's gap it
// took only if no request to the server ended since: here the held
// lease's request ends the moment the borrowed one is taken, and the
// server's next request still waits a gap from that end.
func TestNothingSentKeepsAnotherRequestsGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const gap = 500 * time.Millisecond
		f := newFrontier(t, Config{IPGap: gap, KeepAlive: true})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		held, other := leaseOnSharedServer(t, ctx, f)
		bl, err := f.Borrow(ctx, other, "http://"+other+"/a.js", held)
		if err != nil {
			t.Fatal(err)
		}
		ended := time.Now()
		f.Complete(held, Result{Fetched: true}) // its request ends as the borrowed lease starts
		f.Complete(bl, Result{})                // the borrowed lease sends nothing
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(ended); d < gap {
			t.Fatalf("the next lease on the server came %v after a request to it ended, want >= %v", d, gap)
		}
		f.Complete(l, Result{Fetched: true})
		cancel()
	})
}

// A worker's URL that comes back (a Retry, as after finding a host's
// server or fetching its robots.txt) goes before a borrowed URL waiting
// on the host: the worker has it, and then the borrowed URL goes to its
// caller, never to a worker.
func TestBorrowBehindARetriedURL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second, KeepAlive: true})
		f.Add(items("a.test", 1, Normal)...)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go f.Run(ctx)
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := borrowLater(t, ctx, f, "a.test", "http://a.test/app.js")
		synctest.Wait()
		f.Complete(l, Result{Retry: true}) // back, first in the host's queue
		workers := make(chan Lease, 2)
		go func() {
			for {
				l, err := f.Next(ctx)
				if err != nil {
					return
				}
				workers <- l
			}
		}()
		l2 := <-workers
		if l2.URL != l.URL || l2.borrow != nil {
			t.Fatalf("the worker got %q (borrowed %v), want its own URL back", l2.URL, l2.borrow != nil)
		}
		f.Complete(l2, Result{Fetched: true})
		bl := <-got
		if bl.URL != "http://a.test/app.js" {
			t.Fatalf("borrowed %q", bl.URL)
		}
		f.Complete(bl, Result{Fetched: true})
		synctest.Wait()
		select {
		case l := <-workers:
			t.Fatalf("a worker got %q after all", l.URL)
		default:
		}
		if s := f.Stats(); s.Queued != 0 || s.InFlight != 0 {
			t.Fatalf("after all: %+v", s)
		}
		cancel()
	})
}

// borrowLater calls Borrow in a goroutine of its own; the channel gets the
// lease.
func borrowLater(t *testing.T, ctx context.Context, f *Frontier, host, url string) <-chan Lease {
	got := make(chan Lease, 1)
	go func() {
		bl, err := f.Borrow(ctx, host, url, Lease{})
		if err != nil {
			t.Errorf("Borrow: %v", err)
			return
		}
		got <- bl
	}()
	return got
}

// leaseOnSharedServer runs f on two hosts of one server, www.test with two
// URLs and static.test with one, and takes a lease on one of them once
// their server is known; it returns that lease and the other host.
func leaseOnSharedServer(t *testing.T, ctx context.Context, f *Frontier) (held Lease, other string) {
	t.Helper()
	f.Add(items("www.test", 2, Normal)...)
	f.Add(items("static.test", 1, Normal)...)
	go f.Run(ctx)
	for held.Host == "" {
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if l.Mode == ModeFindGroup {
			f.Complete(l, Result{Retry: true, SetGroup: true, Group: "10.0.0.1"})
			continue
		}
		held = l
	}
	other = "static.test"
	if held.Host == other {
		other = "www.test"
	}
	return held, other
}
