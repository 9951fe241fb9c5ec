package schedule

import (
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/recrawl"
)

// TestHostPriors: a host's prior pools its pages' visits; what a visit
// pooled is read back from the store once the host is no longer held (a
// restart, or a host evicted past the bound), and reading a host does not
// hold it, so that a scan over many hosts evicts none.
func TestHostPriors(t *testing.T) {
	db := openStore(t, t.TempDir())
	h := newHostPriors(db, 1)
	h.per = 1 // one host held at a time
	t0 := time.Now()
	visit := func(host string, changed bool) {
		prev := recrawl.History{Last: t0}
		next := recrawl.History{Last: t0.Add(time.Hour)}
		if !changed {
			next.Unchanged = 1
		}
		r := h.observe(host, prev, next)
		b := db.NewBatch()
		b.PutPrior(0, host, r)
		if err := b.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	visit("a.test", true)
	visit("a.test", false)
	a := h.get("a.test")
	if a.Visits == 0 || a.Changes == 0 || a.Span == 0 {
		t.Fatalf("a.test after two visits: %+v", a)
	}
	visit("b.test", true) // a.test evicted
	if len(h.parts[0].m) != 1 {
		t.Errorf("%d hosts held, over the bound of 1", len(h.parts[0].m))
	}
	if got := h.get("a.test"); got != a {
		t.Errorf("a.test read back from the store: %+v, want %+v", got, a)
	}
	if _, held := h.parts[0].m["a.test"]; held {
		t.Errorf("a read held a.test, evicting b.test")
	}
	if got := newHostPriors(db, 1).get("a.test"); got != a {
		t.Errorf("a.test after a restart: %+v, want %+v", got, a)
	}
	if got := h.get("c.test"); got != (recrawl.HostPrior{}) {
		t.Errorf("a host never visited: %+v", got)
	}
}
