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
		got := make(chan Lease, 1)
		go func() {
			bl, err := f.Borrow(ctx, "a.test", "http://a.test/script.js")
			if err != nil {
				t.Errorf("Borrow: %v", err)
				return
			}
			got <- bl
		}()
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
		if _, err := f.Borrow(bctx, "a.test", "http://a.test/x.js"); !errors.Is(err, context.DeadlineExceeded) {
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
