package external

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/frontier"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestExternals: a lease handed out is completed once with its URL, and a
// second completion with that URL is answered alike without handing the
// lease back twice; another URL, an unknown ID or one forgotten past keep
// is refused; Expire takes out exactly the leases whose time is up.
func TestExternals(t *testing.T) {
	x := &Leases{keep: 2}
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	a := x.Hand(frontier.Lease{Item: frontier.Item{URL: "http://a.test/", Host: "a.test", Depth: 3}}, now, time.Minute)
	b := x.Hand(frontier.Lease{Item: frontier.Item{URL: "http://b.test/", Host: "b.test"}}, now, 2*time.Minute)
	if a.ID == b.ID || len(a.ID) != 32 || a.Depth != 3 || !a.Expires.Equal(now.Add(time.Minute)) {
		t.Fatalf("leases handed out: %+v, %+v", a, b)
	}
	if _, ok, err := x.Complete(a.ID, "http://b.test/"); ok || !errors.Is(err, ErrUnknownLease) {
		t.Fatalf("completed with another URL: %v, %v", ok, err)
	}
	if l, ok, err := x.Complete(a.ID, a.URL); !ok || err != nil || l.URL != a.URL {
		t.Fatalf("completed: %+v, %v, %v", l, ok, err)
	}
	if _, ok, err := x.Complete(a.ID, a.URL); ok || err != nil {
		t.Fatalf("completed again: %v, %v; want done already, no error", ok, err)
	}
	if _, ok, err := x.Complete("feed", a.URL); ok || !errors.Is(err, ErrUnknownLease) {
		t.Fatalf("an ID never handed out: %v, %v", ok, err)
	}
	if gone := x.Expire(now.Add(90 * time.Second)); len(gone) != 0 {
		t.Fatalf("expired at 90 s: %+v, want none (b has 2 min)", gone)
	}
	if gone := x.Expire(now.Add(150 * time.Second)); len(gone) != 1 || gone[0].URL != b.URL {
		t.Fatalf("expired at 150 s: %+v, want b's lease alone", gone)
	}
	if _, ok, err := x.Complete(b.ID, b.URL); ok || !errors.Is(err, ErrUnknownLease) {
		t.Fatalf("an expired lease completed: %v, %v", ok, err)
	}
	// Two more completions push a's out of the two remembered.
	for _, u := range []string{"http://c.test/", "http://d.test/"} {
		e := x.Hand(frontier.Lease{Item: frontier.Item{URL: u}}, now, time.Minute)
		if _, ok, err := x.Complete(e.ID, u); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if _, ok, err := x.Complete(a.ID, a.URL); ok || !errors.Is(err, ErrUnknownLease) {
		t.Fatalf("a completion forgotten: %v, %v; want unknown", ok, err)
	}
}

// TestSweepGivesBackExpiredLeases: Sweep hands a lease to expired at the
// first tick after its time is up, once, and returns when its context
// ends.
func TestSweepGivesBackExpiredLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		x := &Leases{log: slog.New(slog.DiscardHandler)}
		start := time.Now()
		e := x.Hand(frontier.Lease{Item: frontier.Item{URL: "http://a.test/", Host: "a.test"}}, start, time.Second)
		ctx, cancel := context.WithCancel(t.Context())
		expired := make(chan frontier.Lease, 2)
		swept := make(chan struct{})
		go func() {
			x.Sweep(ctx, 250*time.Millisecond, func(l frontier.Lease) { expired <- l })
			close(swept)
		}()
		l := <-expired
		if took := time.Since(start); l.URL != e.URL || took <= time.Second || took > 1250*time.Millisecond {
			t.Fatalf("expired %q after %v, want %q at the first tick past 1 s", l.URL, took, e.URL)
		}
		synctest.Wait()
		if len(expired) != 0 {
			t.Fatal("a lease given back twice")
		}
		if _, ok, err := x.Complete(e.ID, e.URL); ok || !errors.Is(err, ErrUnknownLease) {
			t.Fatalf("an expired lease completed: %v, %v", ok, err)
		}
		cancel()
		<-swept
	})
}
