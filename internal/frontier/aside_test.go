package frontier

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// TestAsideHostIsNotForgotten checks that a host whose only URL is put
// aside (Result.Later) stays in memory while the host cache is pruned.
// Its URL went through the host's tail on disk, and the entry stays
// there while the URL is aside. If prune forgot the host, the host would
// come back with a fresh tail position (tailAfter 0). The next tail read
// would then find the aside URL's entry again and lease it a second time,
// before the frontier had run out of everything else.
//
// Scenario, with one back queue per URL (HeadSize 1), two back queues and
// a host cache of 8 (prune at 8 hosts, down to 4):
//  1. a.test gets a page and then a sitemap: the page goes to the head and
//     the sitemap to a.test's tail. The page is dropped without a request,
//     so a.test's clock stays run out. The sitemap is read from the tail
//     and put aside. k.test's lease stays out (the keeper), so the
//     frontier never drains.
//  2. Six more hosts come and go. Each is fetched, so its clock runs a
//     Delay ahead and prune may not forget it. The eighth host starts a
//     prune, and a.test, idle with its clock run out, is the only host
//     prune could forget.
//  3. Two new URLs arrive for a.test: one goes to its head and one to
//     its tail, so the tail is read again.
//  4. The keeper is completed, which leaves only the aside URL. It is
//     leased once more, with Lease.Last set.
func TestAsideHostIsNotForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDiskStore()
		f := newFrontier(t, Config{Store: d, Delay: time.Minute, MaxActiveHosts: 2,
			FrontBuffer: 4, HeadSize: 1, HostCache: 8, FirstSeq: 1})
		ctx := t.Context()

		const sitemap = "http://a.test/sitemap.xml"
		putAside := false // the sitemap has been put aside
		// lease takes the next lease. Every lease the test expects is ready
		// at once, so the timeout only turns a missing lease into a failure
		// instead of a deadlock in the bubble.
		lease := func(step string) Lease {
			t.Helper()
			nctx, cancel := context.WithTimeout(ctx, time.Hour)
			defer cancel()
			l, err := f.Next(nctx)
			if err != nil {
				t.Fatalf("%s: Next: %v", step, err)
			}
			if l.URL == sitemap && putAside && !l.Last {
				s := f.Stats()
				t.Fatalf("%s: %s leased again while it was aside and other URLs were left (Last %v; stats Aside %d, Queued %d)",
					step, l.URL, l.Last, s.Aside, s.Queued)
			}
			return l
		}
		// aside checks the counts: the sitemap is aside and is the only
		// URL queued (every other URL is leased or done).
		aside := func(step string) {
			t.Helper()
			if s := f.Stats(); s.Aside != 1 || s.Queued != 1 {
				t.Fatalf("%s: stats Aside %d, Queued %d; want the sitemap alone, aside and queued (1, 1)", step, s.Aside, s.Queued)
			}
		}
		done := func(l Lease, fetched bool) {
			d.done(l.Item)
			f.Complete(l, Result{Fetched: fetched})
		}

		// 1. The sitemap goes through a.test's tail and is put aside.
		f.Add(d.push(
			Item{URL: "http://k.test/", Host: "k.test", Priority: Normal},
			Item{URL: "http://a.test/0", Host: "a.test", Priority: Normal},
			Item{URL: sitemap, Host: "a.test", Priority: Normal, Sitemap: true},
		)...)
		// Run after the first URLs are in: a frontier with nothing queued
		// drains at once.
		runErr := make(chan error, 1)
		go func() { runErr <- f.Run(ctx) }()
		var keeper Lease
		for range 3 {
			switch l := lease("first"); l.URL {
			case "http://k.test/":
				keeper = l // kept out: the frontier must not drain
			case sitemap:
				if !l.Tail {
					t.Fatalf("the sitemap was leased from its front queue, not from a.test's tail")
				}
				f.Complete(l, Result{Retry: true, Later: true}) // its entry stays on disk
				putAside = true
			default:
				done(l, false) // dropped without a request: a.test's clock stays run out
			}
		}
		aside("after the sitemap was put aside")

		// 2. Other hosts come and go until prune runs.
		for i := range 6 {
			f.Add(d.push(Item{URL: fmt.Sprintf("http://h%d.test/", i), Host: fmt.Sprintf("h%d.test", i), Priority: Normal})...)
		}
		for range 6 {
			done(lease("other hosts"), true)
		}
		aside("after the other hosts")

		// 3. New URLs for a.test: a/1 goes to the head, a/2 to the tail.
		// After a/1, the tail is read.
		f.Add(d.push(items("a.test", 3, Normal)[1:]...)...)
		for _, want := range []string{"http://a.test/1", "http://a.test/2"} {
			l := lease("new URLs of a.test")
			if l.URL != want {
				t.Fatalf("leased %s, want %s", l.URL, want)
			}
			done(l, false)
		}
		aside("after a.test's new URLs")

		// 4. Once the keeper is done, nothing else is left: the sitemap is
		// leased one last time, and then the frontier drains.
		done(keeper, true)
		l := lease("last")
		if l.URL != sitemap || !l.Last {
			t.Fatalf("last lease %s (Last %v), want %s brought back (Last true)", l.URL, l.Last, sitemap)
		}
		done(l, true)
		if _, err := f.Next(ctx); !errors.Is(err, ErrDrained) {
			t.Fatalf("Next after the sitemap: %v, want ErrDrained", err)
		}
		if err := <-runErr; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if s := f.Stats(); s.Queued != 0 || s.Aside != 0 {
			t.Errorf("after the drain: Queued %d, Aside %d; want 0, 0", s.Queued, s.Aside)
		}
		if n := d.size(); n != 0 {
			t.Errorf("%d entries left on disk after the drain", n)
		}
	})
}
