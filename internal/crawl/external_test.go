package crawl

import (
	"errors"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
)

// TestExternals: a lease handed out is completed once with its URL, and a
// second completion with that URL is answered alike without handing the
// lease back twice; another URL, an unknown ID or one forgotten past keep
// is refused; expire takes out exactly the leases whose time is up.
func TestExternals(t *testing.T) {
	x := &externals{keep: 2}
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	a := x.hand(frontier.Lease{Item: frontier.Item{URL: "http://a.test/", Host: "a.test", Depth: 3}}, now, time.Minute)
	b := x.hand(frontier.Lease{Item: frontier.Item{URL: "http://b.test/", Host: "b.test"}}, now, 2*time.Minute)
	if a.ID == b.ID || len(a.ID) != 32 || a.Depth != 3 || !a.Expires.Equal(now.Add(time.Minute)) {
		t.Fatalf("leases handed out: %+v, %+v", a, b)
	}
	if _, ok, err := x.complete(a.ID, "http://b.test/"); ok || !errors.Is(err, ErrUnknownLease) {
		t.Fatalf("completed with another URL: %v, %v", ok, err)
	}
	if l, ok, err := x.complete(a.ID, a.URL); !ok || err != nil || l.URL != a.URL {
		t.Fatalf("completed: %+v, %v, %v", l, ok, err)
	}
	if _, ok, err := x.complete(a.ID, a.URL); ok || err != nil {
		t.Fatalf("completed again: %v, %v; want done already, no error", ok, err)
	}
	if _, ok, err := x.complete("feed", a.URL); ok || !errors.Is(err, ErrUnknownLease) {
		t.Fatalf("an ID never handed out: %v, %v", ok, err)
	}
	if gone := x.expire(now.Add(90 * time.Second)); len(gone) != 0 {
		t.Fatalf("expired at 90 s: %+v, want none (b has 2 min)", gone)
	}
	if gone := x.expire(now.Add(150 * time.Second)); len(gone) != 1 || gone[0].URL != b.URL {
		t.Fatalf("expired at 150 s: %+v, want b's lease alone", gone)
	}
	if _, ok, err := x.complete(b.ID, b.URL); ok || !errors.Is(err, ErrUnknownLease) {
		t.Fatalf("an expired lease completed: %v, %v", ok, err)
	}
	// Two more completions push a's out of the two remembered.
	for _, u := range []string{"http://c.test/", "http://d.test/"} {
		e := x.hand(frontier.Lease{Item: frontier.Item{URL: u}}, now, time.Minute)
		if _, ok, err := x.complete(e.ID, u); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if _, ok, err := x.complete(a.ID, a.URL); ok || !errors.Is(err, ErrUnknownLease) {
		t.Fatalf("a completion forgotten: %v, %v; want unknown", ok, err)
	}
}
