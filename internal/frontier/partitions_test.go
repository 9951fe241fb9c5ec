package frontier

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weft-crawler/weft/internal/partition"
)

// TestHoldKeepsHostUntilReleased: a host an operator holds is not leased,
// keeps its queue and its clock, while other hosts go on; released, it
// goes on where it was. A host held before it is known is held when it
// comes.
func TestHoldKeepsHostUntilReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second})
		f.Hold("c.test", true) // not known yet
		f.Add(items("a.test", 2, Normal)...)
		f.Add(items("b.test", 2, Normal)...)
		ctx := t.Context()
		runErr := make(chan error, 1)
		go func() { runErr <- f.Run(ctx) }()
		f.Hold("a.test", true)
		f.Add(items("c.test", 1, Normal)...)
		for range 2 {
			l, err := f.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if l.Host != "b.test" {
				t.Fatalf("leased %s while a.test and c.test are held", l.URL)
			}
			f.Complete(l, Result{Fetched: true})
		}
		got := nextLease(ctx, f)
		noLeaseWithin(t, got, time.Hour, "a held host leased %s")
		if h := f.Host("a.test"); !h.Known || !h.Held || h.Queued != 2 || h.Busy || h.Name != "a.test" {
			t.Errorf("a.test while held: %+v", h)
		}
		if hs := f.Hosts(2); len(hs) != 2 || hs[0].Name != "a.test" || hs[1].Name != "c.test" {
			t.Errorf("the two hosts with most URLs: %+v", hs)
		}
		if s := f.Stats(); s.HeldHosts != 2 || s.Queued != 3 {
			t.Errorf("stats %+v, want 2 held hosts and 3 URLs queued", s)
		}
		f.Hold("a.test", false)
		l := <-got
		if l.Host != "a.test" {
			t.Fatalf("after the release leased %s", l.URL)
		}
		f.Complete(l, Result{Fetched: true})
		l, _ = f.Next(ctx)
		f.Complete(l, Result{Fetched: true})
		f.Hold("c.test", false)
		l, _ = f.Next(ctx)
		if l.Host != "c.test" {
			t.Fatalf("leased %s, want c.test's", l.URL)
		}
		f.Complete(l, Result{Fetched: true})
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
		if h := f.Host("b.test"); h.Known {
			t.Errorf("after Run: %+v", h)
		}
	})
}

// TestHoldPartition: the hosts of a held partition, known or not yet, are
// not leased while the other partition's are; an operator's hold of one
// of them outlives the partition's release; released, the partition's
// hosts go on.
func TestHoldPartition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const parts = 2
		// Hosts of partition 0 and of partition 1.
		var p0, p1 []string
		for i := 0; len(p0) < 2 || len(p1) < 1; i++ {
			h := fmt.Sprintf("h%d.test", i)
			if partition.Of(h, parts) == 0 {
				p0 = append(p0, h)
			} else {
				p1 = append(p1, h)
			}
		}
		f := newFrontier(t, Config{Delay: time.Second, Partitions: parts})
		f.HoldPartition(0, true)
		f.Add(items(p0[0], 1, Normal)...)
		f.Add(items(p1[0], 2, Normal)...)
		ctx := t.Context()
		runErr := make(chan error, 1)
		go func() { runErr <- f.Run(ctx) }()
		f.Add(items(p0[1], 1, Normal)...) // comes while its partition is held
		f.Hold(p0[1], true)               // and an operator holds it too
		for range 2 {
			l, err := f.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if l.Host != p1[0] {
				t.Fatalf("leased %s while partition 0 is held", l.URL)
			}
			f.Complete(l, Result{Fetched: true})
		}
		got := nextLease(ctx, f)
		noLeaseWithin(t, got, time.Hour, "a host of a held partition leased %s")
		if h := f.Host(p0[0]); h.Held || !h.PartitionHeld || h.Queued != 1 {
			t.Errorf("%s while its partition is held: %+v", p0[0], h)
		}
		f.HoldPartition(0, false)
		l := <-got
		if l.Host != p0[0] {
			t.Fatalf("after the release leased %s, want %s's (%s is held by an operator)", l.URL, p0[0], p0[1])
		}
		f.Complete(l, Result{Fetched: true})
		if h := f.Host(p0[1]); !h.Held {
			t.Errorf("%s lost its operator's hold with its partition's: %+v", p0[1], h)
		}
		f.Hold(p0[1], false)
		l, _ = f.Next(ctx)
		if l.Host != p0[1] {
			t.Fatalf("leased %s, want %s's", l.URL, p0[1])
		}
		f.Complete(l, Result{Fetched: true})
		if err := <-runErr; err != nil {
			t.Fatal(err)
		}
	})
	defer func() {
		if recover() == nil {
			t.Error("HoldPartition without Config.Partitions did not panic")
		}
	}()
	f, _ := New(Config{})
	f.HoldPartition(0, true)
}

// TestClockHandoff: the clocks one frontier gives of a partition's hosts
// (PartitionClocks) make another frontier, given them (InstallClocks)
// before or after it knows the hosts, wait out the gap the first one
// owed each host: the per-host rule holds across a handoff.
func TestClockHandoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const parts = 2
		var hosts []string // two of partition 1
		for i := 0; len(hosts) < 2; i++ {
			if h := fmt.Sprintf("h%d.test", i); partition.Of(h, parts) == 1 {
				hosts = append(hosts, h)
			}
		}
		ctx := t.Context()
		old := newFrontier(t, Config{Delay: 10 * time.Second, Partitions: parts, KeepAlive: true})
		old.Add(items(hosts[0], 1, Normal)...)
		old.Add(items(hosts[1], 1, Normal)...)
		go old.Run(ctx)
		start := time.Now()
		for range 2 {
			l, err := old.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			old.Complete(l, Result{Fetched: true, Signal: Throttled, RetryAfter: time.Minute})
		}
		synctest.Wait()
		clocks := old.PartitionClocks(1)
		if len(clocks) != 2 || len(old.PartitionClocks(0)) != 0 {
			t.Fatalf("clocks of partition 1: %v; of partition 0: %v", clocks, old.PartitionClocks(0))
		}

		next := newFrontier(t, Config{Delay: 10 * time.Second, Partitions: parts})
		next.Add(items(hosts[0], 1, Normal)...) // known before the clocks come
		next.InstallClocks(clocks)
		go next.Run(ctx)
		synctest.Wait()
		next.Add(items(hosts[1], 1, Normal)...) // comes after them
		for range 2 {
			l, err := next.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if waited := time.Since(start); waited < time.Minute {
				t.Errorf("%s leased %v after the previous owner's request, which asked for a minute", l.Host, waited)
			}
			next.Complete(l, Result{Fetched: true})
		}
	})
}

// TestRearmAfterHandoff: a host asked on one node, whose wait has run out
// when its partition is handed over, and given a longer gap by an operator
// on the next owner, is not asked before that gap has passed since its
// last request: the handoff passes the clocks that have run out too,
// which date that request.
func TestRearmAfterHandoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const parts = 2
		host := ""
		for i := 0; host == ""; i++ {
			if h := fmt.Sprintf("h%d.test", i); partition.Of(h, parts) == 1 {
				host = h
			}
		}
		ctx := t.Context()
		cfg := Config{Delay: time.Second, Partitions: parts, KeepAlive: true}
		old, next := newFrontier(t, cfg), newFrontier(t, cfg)
		next.HoldPartition(1, true)
		go old.Run(ctx)
		go next.Run(ctx)
		old.Add(items(host, 1, Normal)...)
		l, err := old.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		old.Complete(l, Result{Fetched: true})
		lastEnd := time.Now()
		time.Sleep(2 * time.Second) // the one-second wait runs out

		next.InstallClocks(old.ReleasePartition(1))
		next.HoldPartition(1, false)
		next.Add(Item{URL: "http://" + host + "/later", Host: host, Priority: Normal})
		synctest.Wait()
		next.Rearm(func(name string, _ Clock) (time.Duration, bool) { return 10 * time.Second, name == host })
		if l, err = next.Next(ctx); err != nil {
			t.Fatal(err)
		}
		if gap := time.Since(lastEnd); gap < 10*time.Second {
			t.Errorf("%s leased %v after its last request ended, under a Crawl-delay of 10s", l.URL, gap)
		}
	})
}

// TestTakeOver: clocks a dead owner kept (a Crawl-delay, failures, a host
// given up) make the next owner wait one gap from the takeover, as a
// restart does, and replace what it had of the host (stale counts from an
// earlier ownership that went back down since must not come back).
func TestTakeOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const parts = 2
		var hosts []string // two of partition 1
		for i := 0; len(hosts) < 2; i++ {
			if h := fmt.Sprintf("h%d.test", i); partition.Of(h, parts) == 1 {
				hosts = append(hosts, h)
			}
		}
		ctx := t.Context()
		f := newFrontier(t, Config{Delay: time.Second, Partitions: parts, KeepAlive: true})
		// What this frontier knew of hosts[0] from an earlier ownership.
		f.InstallClocks(map[string]Clock{hosts[0]: {Streak: 9, Throttles: 19, ThrottledSince: time.Now(), Backoff: time.Minute}})
		start := time.Now()
		kept := map[string]Clock{
			hosts[0]: {NextAt: start.Add(-time.Hour), CrawlDelay: 30 * time.Second, Errors: 5},
			hosts[1]: {GaveUp: true, Errors: 9},
		}
		f.TakeOverPartition(1, start, kept)
		f.Add(items(hosts[0], 1, Normal)...)
		go f.Run(ctx)
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < 30*time.Second {
			t.Errorf("%s leased %v after the takeover, under its kept Crawl-delay", l.Host, waited)
		}
		if l.Clock.CrawlDelay != 30*time.Second || l.Clock.Errors != 5 || l.Clock.Streak != 0 || l.Clock.Throttles != 0 || l.Clock.Backoff != 0 {
			t.Errorf("clock after the takeover: %+v, want the kept one", l.Clock)
		}
		f.Complete(l, Result{Fetched: true})
		f.Add(items(hosts[1], 1, Normal)...)
		synctest.Wait()
		if info := f.Host(hosts[1]); !info.Clock.GaveUp {
			t.Errorf("%s after the takeover: %+v, want it given up", hosts[1], info)
		}
	})
}

// TestTakeOverPartitionWaitsAGap: after a takeover every host of the
// partition waits one gap from it, whether it was in memory with its last
// request long past, comes in later, or has its own Crawl-delay; a host of
// another partition does not wait.
func TestTakeOverPartitionWaitsAGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const parts = 2
		byPart := [parts][]string{}
		for i := 0; len(byPart[0]) < 1 || len(byPart[1]) < 3; i++ {
			h := fmt.Sprintf("h%d.test", i)
			byPart[partition.Of(h, parts)] = append(byPart[partition.Of(h, parts)], h)
		}
		known, later, slow, other := byPart[1][0], byPart[1][1], byPart[1][2], byPart[0][0]
		ctx := t.Context()
		f := newFrontier(t, Config{Delay: time.Second, Partitions: parts, KeepAlive: true})
		go f.Run(ctx)
		// known was fetched long ago, in an earlier ownership.
		f.Add(items(known, 2, Normal)...)
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.Complete(l, Result{Fetched: true})
		time.Sleep(time.Hour) // the fake clock: the known host's wait is long over
		f.HoldPartition(1, true)
		synctest.Wait()
		at := time.Now()
		f.TakeOverPartition(1, at, map[string]Clock{slow: {CrawlDelay: 5 * time.Second}})
		f.HoldPartition(1, false)
		f.Add(items(later, 1, Normal)...)
		f.Add(items(slow, 1, Normal)...)
		f.Add(items(other, 1, Normal)...)
		want := map[string]time.Duration{known: time.Second, later: time.Second, slow: 5 * time.Second, other: 0}
		for range len(want) {
			l, err := f.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if waited := time.Since(at); waited < want[l.Host] {
				t.Errorf("%s leased %v after the takeover, want at least %v", l.Host, waited, want[l.Host])
			}
			f.Complete(l, Result{Fetched: true})
		}
	})
}

// TestReleasePartition: releasing a partition with a lease out on one of
// its hosts returns only once that lease is completed, with the clock its
// completion set; meanwhile nothing of the partition is leased.
func TestReleasePartition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const parts = 2
		var hosts []string // two of partition 0
		for i := 0; len(hosts) < 2; i++ {
			if h := fmt.Sprintf("h%d.test", i); partition.Of(h, parts) == 0 {
				hosts = append(hosts, h)
			}
		}
		f := newFrontier(t, Config{Delay: time.Second, Partitions: parts, KeepAlive: true})
		f.Add(items(hosts[0], 2, Normal)...)
		f.Add(items(hosts[1], 1, Normal)...)
		ctx := t.Context()
		go f.Run(ctx)
		l, err := f.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan map[string]Clock, 1)
		go func() { got <- f.ReleasePartition(0) }()
		synctest.Wait()
		select {
		case c := <-got:
			t.Fatalf("released with a lease out: %v", c)
		default:
		}
		next := nextLease(ctx, f)
		time.Sleep(time.Minute)
		f.Complete(l, Result{Fetched: true, Signal: Throttled, RetryAfter: time.Hour})
		clocks := <-got
		if c, ok := clocks[l.Host]; !ok || c.NextAt.Before(time.Now().Add(59*time.Minute)) {
			t.Errorf("clocks %v: want %s's, an hour ahead", clocks, l.Host)
		}
		noLeaseWithin(t, next, time.Minute, "leased %s of a released partition")
	})
}

// TestRearm: a new Crawl-delay given through Rearm shows in the host's
// clock at once and holds its next request, whether the host is idle or
// has a lease out whose worker computed its clock before the change; a
// shorter one lets the wait already armed run out; a host the function
// passes over is left alone.
func TestRearm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFrontier(t, Config{Delay: time.Second})
		f.Add(items("a.test", 4, Normal)...)
		f.Add(items("b.test", 2, Normal)...)
		ctx := t.Context()
		go f.Run(ctx)
		to := func(host string, d time.Duration) rearmFunc {
			return func(name string, _ Clock) (time.Duration, bool) { return d, name == host }
		}
		lease := func(host string) (Lease, time.Time) {
			t.Helper()
			for {
				l, err := f.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if l.Host == host {
					return l, time.Now()
				}
				f.Complete(l, Result{Fetched: true})
			}
		}

		// Idle: a.test's request ended at t0, its next waits 1s; Rearm to
		// 5s shows at once and holds the next until t0+5s.
		l, t0 := lease("a.test")
		f.Complete(l, Result{Fetched: true})
		synctest.Wait()
		f.Rearm(to("a.test", 5*time.Second))
		if c := f.Host("a.test").Clock; c.CrawlDelay != 5*time.Second || !c.NextAt.Equal(t0.Add(5*time.Second)) {
			t.Errorf("after Rearm: %+v, want Crawl-delay 5s and the next request at t0+5s", c)
		}
		if c := f.Host("b.test").Clock; c.CrawlDelay != 0 {
			t.Errorf("b.test re-armed too: %+v", c)
		}
		l, at := lease("a.test")
		if at.Sub(t0) != 5*time.Second {
			t.Errorf("next request %v after the last, want 5s", at.Sub(t0))
		}

		// Busy: the lease is out as the delay goes to 8s, and comes back
		// with the clock of 5s its worker computed: 8s it is.
		time.Sleep(time.Second) // the fetch
		f.Rearm(to("a.test", 8*time.Second))
		if c := f.Host("a.test").Clock; c.CrawlDelay != 8*time.Second {
			t.Errorf("with its lease out: %+v, want Crawl-delay 8s at once", c)
		}
		end := time.Now()
		f.Complete(l, Result{Fetched: true, SetCrawlDelay: true, CrawlDelay: 5 * time.Second})
		synctest.Wait()
		if c := f.Host("a.test").Clock; c.CrawlDelay != 8*time.Second || !c.NextAt.Equal(end.Add(8*time.Second)) {
			t.Errorf("a lease out during Rearm, back: %+v, want Crawl-delay 8s and the next at its end+8s", c)
		}

		// Shorter: the 8s wait armed stands.
		f.Rearm(to("a.test", 0))
		if c := f.Host("a.test").Clock; c.CrawlDelay != 0 || !c.NextAt.Equal(end.Add(8*time.Second)) {
			t.Errorf("after a shorter Rearm: %+v, want no Crawl-delay and the wait armed kept", c)
		}
		l, at = lease("a.test")
		if at.Sub(end) != 8*time.Second {
			t.Errorf("next request %v after the last, want the 8s armed", at.Sub(end))
		}
		f.Complete(l, Result{Fetched: true})
	})
}

// TestHeldMeansOneThing: "held" is an operator's hold, in Stats as in
// Host; a host whose partition is held (a cluster node's host another
// node owns now) says so apart, and its URLs are not counted as queued
// here (they wait for a later ownership) until the partition is let go.
func TestHeldMeansOneThing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const parts = 2
		var p0, p1 string
		for i := 0; p0 == "" || p1 == ""; i++ {
			h := fmt.Sprintf("h%d.test", i)
			if partition.Of(h, parts) == 0 {
				p0 = h
			} else {
				p1 = h
			}
		}
		f := newFrontier(t, Config{Delay: time.Second, Partitions: parts})
		f.HoldPartition(0, true)
		f.Hold(p1, true)
		f.Add(items(p0, 2, Normal)...)
		f.Add(items(p1, 1, Normal)...)
		ctx, cancel := context.WithCancel(t.Context())
		runErr := make(chan error, 1)
		go func() { runErr <- f.Run(ctx) }()
		s := f.Stats()
		held := 0
		for _, h := range []string{p0, p1} {
			if f.Host(h).Held {
				held++
			}
		}
		if s.HeldHosts != held || held != 1 {
			t.Errorf("Stats counts %d held hosts, Host says %d are held; want 1 (%s, by an operator)", s.HeldHosts, held, p1)
		}
		if h := f.Host(p0); h.Held || !h.PartitionHeld {
			t.Errorf("%s, of a held partition: %+v", p0, h)
		}
		if s.Queued != 1 || s.PartitionHeld != 2 {
			t.Errorf("queued %d, of held partitions %d; want 1 and 2", s.Queued, s.PartitionHeld)
		}
		f.HoldPartition(0, false)
		if s := f.Stats(); s.Queued != 3 || s.PartitionHeld != 0 {
			t.Errorf("the partition let go: queued %d, of held partitions %d; want 3 and 0", s.Queued, s.PartitionHeld)
		}
		cancel()
		<-runErr
	})
}
