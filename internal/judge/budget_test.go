package judge

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/hostmap"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
)

// Which URLs are of one family, and of which kind: one path's query
// variants; one host's paths that differ in their date-like segments, or
// a path whose query carries a date; nothing else.
func TestFamilies(t *testing.T) {
	cn := canon.New(canon.Config{})
	fam := func(raw string) family {
		t.Helper()
		u, err := cn.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		f := (*budgets)(nil).familyOf(u)
		if g := (*budgets)(nil).familyOfString(u.String); g != f {
			t.Errorf("%s: family %v from its string, %v from its parts", raw, g, f)
		}
		return f
	}
	for _, c := range []struct {
		a, b string
		kind famKind // of a
		same bool
	}{
		{"http://a.test/shop?color=red", "http://a.test/shop?size=m&sort=new", queryFamily, true},
		{"http://a.test/list?page=2", "http://a.test/list?page=300", queryFamily, true},
		{"http://a.test/shop?color=red", "https://a.test/shop?color=red", queryFamily, false},
		{"http://a.test/shop?color=red", "http://b.test/shop?color=red", queryFamily, false},
		{"http://a.test/shop?color=red", "http://a.test/shops?color=red", queryFamily, false},
		{"http://a.test/shop", "http://a.test/shop", noFamily, true},
		{"http://a.test/cal/2026/11/", "http://a.test/cal/1999/01/", dateFamily, true},
		{"http://a.test/cal/2026/11/", "http://a.test/cal/2026/11/05/", dateFamily, true}, // a calendar's months and days
		{"http://a.test/cal/2026/11/", "http://a.test/cal/2026-11-05/", dateFamily, true},
		{"http://a.test/cal/2026/11/", "http://a.test/cal/2026/11/05/x", dateFamily, false},
		{"http://a.test/cal/2026/11/", "http://a.test/cal/2026/11/?view=week", dateFamily, true},
		{"http://a.test/cal/2026/11/", "http://a.test/cal/2026/11", dateFamily, false},
		{"http://a.test/2026/11/05/a-polite-crawler", "http://a.test/2025/01/31/a-polite-crawler", dateFamily, true},
		{"http://a.test/2026/11/05/a-polite-crawler", "http://a.test/2026/11/05/another-story", dateFamily, false},
		{"http://a.test/news/2026-11-05.html", "http://a.test/news/2025-1-2.html", dateFamily, true},
		{"http://a.test/news/2026_11_05/", "http://a.test/news/05.11.2026/", dateFamily, true},
		{"http://a.test/d/20261105", "http://a.test/d/19991231", dateFamily, true},
		{"http://a.test/events?date=2026-11-05", "http://a.test/events?date=2026-11-06&view=list", dateFamily, true},
		{"http://a.test/events?year=2026&month=11", "http://a.test/events?month=1&year=2025", dateFamily, true},
		{"http://a.test/events?year=2026", "http://a.test/events?page=2", dateFamily, false},
		{"http://a.test/product/2019", "http://a.test/product/2020", noFamily, false}, // a year alone is an id as often
		{"http://a.test/d/12345678", "http://a.test/d/87654321", noFamily, false},     // eight digits: a number, not a date from 1900 to 2100
		{"http://a.test/v/2026-13-01", "http://a.test/v/2026-12-01", noFamily, false},
		{"http://a.test/a/b", "http://a.test/a/c", noFamily, false},
	} {
		a, b := fam(c.a), fam(c.b)
		if a.kind != c.kind {
			t.Errorf("%s: kind %d, want %d", c.a, a.kind, c.kind)
		}
		if got := a == b && !a.none(); got != (c.same && c.kind != noFamily) {
			t.Errorf("%s and %s: one family %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

// budgetJudge is a Judge with a trap budget of base URLs a family, at
// most maxFamilies in memory, every host in scope.
type budgetJudge struct {
	*Judge
	t  *testing.T
	cn *canon.Canonicalizer
	w  *admitWorld

	released []Held          // what Weigh released, in order
	gone     map[string]bool // URLs Release reports no longer waiting
}

// Release implements Releaser.
func (b *budgetJudge) Release(h Held) bool {
	if b.gone[h.Item.URL] {
		return false
	}
	b.released = append(b.released, h)
	return true
}

// room is what the family of page may still queue under its budget.
func (b *budgetJudge) room(page string) int64 {
	s, _ := b.budgets.fams.Peek(b.budgets.familyOf(b.url(page)).key())
	return s.budget(b.budgets.base) - int64(s.counted)
}

func newBudgetJudge(t *testing.T, base, maxFamilies int) *budgetJudge {
	t.Helper()
	cn := canon.New(canon.Config{})
	sc, err := scope.New(scope.Config{Mode: scope.Any})
	if err != nil {
		t.Fatal(err)
	}
	set, err := seen.New(seen.Config{ExpectedURLs: 10_000, Partitions: 1}, seen.NewMemoryStore(1))
	if err != nil {
		t.Fatal(err)
	}
	w := &admitWorld{}
	j := New(Config{Canon: cn, Scope: sc, Seen: set, Guard: w, Robots: w, Hosts: hostmap.New[store.HostState](1),
		ExpectedURLs: 10_000, Partitions: 1, TrapBudget: base, MaxFamilies: maxFamilies, Log: slog.New(slog.DiscardHandler)})
	return &budgetJudge{Judge: j, t: t, cn: cn, w: w}
}

func (b *budgetJudge) url(raw string) canon.URL {
	b.t.Helper()
	u, err := b.cn.Parse(raw)
	if err != nil {
		b.t.Fatal(err)
	}
	return u
}

// link judges a link of page to raw, and returns the priority it was
// queued at (it must be queued).
func (b *budgetJudge) link(page, raw string) frontier.Priority {
	b.t.Helper()
	why, err := b.Admit(Candidate{URL: b.url(raw), Depth: 2, Priority: frontier.Normal, Via: page, As: AsPageLink}, b.w)
	if err != nil || why != "" {
		b.t.Fatalf("%s from %s: %q, %v; want it queued", raw, page, why, err)
	}
	return b.w.staged[len(b.w.staged)-1].Priority
}

// links judges n new links of page into its own family (facet values
// never used before), and returns how many were queued at Normal: the
// rest were held.
func (b *budgetJudge) links(page string, n int) int {
	b.t.Helper()
	normal := 0
	for range n {
		raw := fmt.Sprintf("http://shop.test/shop?color=c%d", len(b.w.staged))
		switch p := b.link(page, raw); p {
		case frontier.Normal:
			normal++
		case HeldPriority:
		default:
			b.t.Fatalf("%s queued at %v", raw, p)
		}
	}
	return normal
}

// weigh weighs a fetched page of the shop's family n times: led, whether
// it led to a new URL outside the family; content, what it showed.
func (b *budgetJudge) weigh(n int, led bool, content Content) {
	for range n {
		w := b.Worth(b.url(facetPage), "")
		w.Admitted(b.url("http://shop.test/shop?color=x")) // its own family: not outside it
		if led {
			w.Admitted(b.url("http://shop.test/product/1"))
		}
		b.Weigh(w, content, b)
	}
}

const facetPage = "http://shop.test/shop?color=red"

// Past its budget, a family's URLs that its own pages lead to are queued
// at the lowest priority and counted, per reason and per host; its URLs
// linked from elsewhere on the host are queued as usual, and so are other
// families', which have budgets of their own.
func TestTrapBudgetHolds(t *testing.T) {
	b := newBudgetJudge(t, 5, 0)
	if n := b.links(facetPage, 8); n != 5 {
		t.Errorf("%d of 8 URLs of the family queued as usual, want the budget of 5", n)
	}
	if p := b.link("http://shop.test/", "http://shop.test/shop?size=xl"); p != frontier.Normal {
		t.Errorf("a URL of the family linked from the front page: queued at %v, want %v", p, frontier.Normal)
	}
	for i := range 3 {
		if p := b.link("http://shop.test/cal/2026/11/", fmt.Sprintf("http://shop.test/cal/2027/%02d/", i+1)); p != frontier.Normal {
			t.Errorf("a month of a calendar with its own budget: queued at %v", p)
		}
	}
	if got := b.Held(); len(got) != 1 || got[HeldQuery] != 3 {
		t.Errorf("held %v, want %s 3", got, HeldQuery)
	}
	costs, hosts := b.TrapReport()
	if hosts != 1 || len(costs) != 1 || costs[0].Host != "shop.test" || costs[0].Held != 3 {
		t.Errorf("trap report %+v (%d hosts), want shop.test with 3 held", costs, hosts)
	}
	for _, it := range b.w.staged[5:8] {
		if it.Priority != HeldPriority {
			t.Errorf("%s staged at %v, want %v", it.URL, it.Priority, HeldPriority)
		}
	}
	// A date family holds for its own reason.
	b = newBudgetJudge(t, 2, 0)
	for i := range 4 {
		b.link("http://cal.test/cal/2026/11/", fmt.Sprintf("http://cal.test/cal/2026/%02d/", i+1))
	}
	if got := b.Held(); got[HeldDate] != 2 || got[HeldQuery] != 0 {
		t.Errorf("held %v, want %s 2", got, HeldDate)
	}
	// No budget: nothing held.
	b = newBudgetJudge(t, 0, 0)
	if n := b.links(facetPage, 100); n != 100 {
		t.Errorf("no budget: %d of 100 queued as usual", n)
	}
}

// A family's budget grows with what its pages show: one URL for each new
// URL outside the family a page led to (up to maxLed), a quarter for each
// page of distinct content (or a search's results, unless leased behind
// their host's other pages they led nowhere), one for each new URL of it
// that another host links to. The URL held before goes first (Weigh
// releases it), then new ones are queued as usual.
func TestTrapBudgetGrows(t *testing.T) {
	for _, c := range []struct {
		name string
		grow func(b *budgetJudge)
		more int
	}{
		{"pages that lead elsewhere", func(b *budgetJudge) { b.weigh(6, true, Unjudged) }, 6},
		{"pages of distinct content", func(b *budgetJudge) { b.weigh(8, false, Distinct) }, 2},
		{"a search's results", func(b *budgetJudge) { b.weigh(8, false, Search) }, 2},
		{"a search's results, leased late, that led nowhere", func(b *budgetJudge) {
			for range 8 {
				w := b.Worth(b.url(facetPage), "")
				w.Leased(frontier.Low)
				b.Weigh(w, Search, b)
			}
		}, -4}, // they showed nothing: the budget shrinks
		{"pages that lead elsewhere, of distinct content", func(b *budgetJudge) { b.weigh(4, true, Distinct) }, 5},
		{"links from another host", func(b *budgetJudge) {
			for i := range 3 {
				b.link("http://other.test/", fmt.Sprintf("http://shop.test/shop?brand=b%d", i))
			}
		}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBudgetJudge(t, 8, 0)
			if n := b.links(facetPage, 8); n != 8 {
				t.Fatalf("%d of the first 8 queued as usual", n)
			}
			if n := b.links(facetPage, 1); n != 0 {
				t.Fatalf("past the budget: queued as usual")
			}
			c.grow(b)
			if more := int64(len(b.released)) + b.room(facetPage); more != int64(c.more) {
				t.Errorf("%d released and %d more to queue once grown, want %d in all", len(b.released), b.room(facetPage), c.more)
			}
		})
	}
	// A family whose every page leads somewhere new pays for itself: a
	// listing of 1,000 pages, each linking the next, is never held.
	b := newBudgetJudge(t, 4, 0)
	for i := range 1000 {
		page := fmt.Sprintf("http://shop.test/list?page=%d", i)
		if p := b.link(page, fmt.Sprintf("http://shop.test/list?page=%d", i+1)); p != frontier.Normal {
			t.Fatalf("page %d of a listing held", i+1)
		}
		w := b.Worth(b.url(page), "")
		w.Admitted(b.url(fmt.Sprintf("http://shop.test/item/%d", i)))
		b.Weigh(w, Distinct, b)
	}
	// A page is credited for each new URL outside its family it led to,
	// up to maxLed; and what a family grows never puts it more than its
	// budget ahead of what it queued, so that a family that stops leading
	// anywhere has no more than that to spend.
	b = newBudgetJudge(t, 4, 0)
	b.links(facetPage, 4)
	w := b.Worth(b.url(facetPage), "")
	for i := range 3 {
		w.Admitted(b.url(fmt.Sprintf("http://shop.test/product/%d", i)))
	}
	b.Weigh(w, Unjudged, b)
	if r := b.room(facetPage); r != 3 {
		t.Errorf("a page that led to 3 new pages: room for %d more, want 3", r)
	}
	for i := range 50 {
		page := fmt.Sprintf("http://shop.test/shop?color=c%d", i)
		w := b.Worth(b.url(page), "")
		for j := range 20 {
			w.Admitted(b.url(fmt.Sprintf("http://shop.test/product/%d-%d", i, j)))
		}
		b.Weigh(w, Distinct, b)
	}
	if r := b.room(facetPage); r != 4 {
		t.Errorf("after 50 pages that led to 20 new pages each, and 4 URLs queued: room for %d more, want the budget of 4", r)
	}
}

// URLs held are released in the order they were found, and a URL of the
// family found while others wait is held behind them, whatever the
// budget: a family is explored breadth first. A URL the releaser finds
// no longer waiting spends nothing.
func TestTrapBudgetReleasesInOrder(t *testing.T) {
	b := newBudgetJudge(t, 2, 0)
	if n := b.links(facetPage, 6); n != 2 {
		t.Fatalf("%d of 6 queued as usual, want 2", n)
	}
	held := b.w.staged[2:6]
	b.weigh(2, true, Unjudged) // two more
	if len(b.released) != 2 || b.released[0].Item.URL != held[0].URL || b.released[1].Item.URL != held[1].URL {
		t.Fatalf("released %v, want the first two held, %s and %s", b.released, held[0].URL, held[1].URL)
	}
	if p := b.released[0].Item.Priority; p != ReleasedPriority {
		t.Errorf("released to be queued at %v, want %v, after the pages the family led to", p, ReleasedPriority)
	}
	b.weigh(2, false, Distinct) // half a URL: none
	if n := b.links(facetPage, 1); n != 0 {
		t.Errorf("a new URL queued ahead of two held before it")
	}
	b.weigh(3, true, Unjudged)
	if len(b.released) != 5 || b.released[2].Item.URL != held[2].URL || b.released[4].Item.URL != b.w.staged[6].URL {
		t.Errorf("released %d, want 5, the newest last", len(b.released))
	}
	if got := b.Released(); got != 5 {
		t.Errorf("Released() = %d, want 5", got)
	}
	// Gone (fetched, or released by an earlier run): the next in line is
	// released in its place.
	b = newBudgetJudge(t, 2, 0)
	b.links(facetPage, 5)
	b.gone = map[string]bool{b.w.staged[2].URL: true, b.w.staged[3].URL: true}
	b.weigh(1, true, Unjudged)
	if len(b.released) != 1 || b.released[0].Item.URL != b.w.staged[4].URL || b.room(facetPage) != 0 || b.budgets.waiting.len() != 0 {
		t.Errorf("two held URLs gone: released %v, room %d, %d waiting; want the third, no room, none", b.released, b.room(facetPage), b.budgets.waiting.len())
	}
	b.weigh(1, true, Unjudged)
	if b.room(facetPage) != 1 || b.Released() != 1 {
		t.Errorf("nothing left to release: room %d, %d released; want 1 and 1", b.room(facetPage), b.Released())
	}
	// A held URL being fetched (a continuous crawl leases held URLs when
	// nothing else waits) is not released by its own page's weight.
	b = newBudgetJudge(t, 2, 0)
	b.links(facetPage, 4)
	self := b.w.staged[2].URL
	w0 := b.Worth(b.url(self), "")
	w0.Admitted(b.url("http://shop.test/product/9"))
	b.Weigh(w0, Unjudged, b)
	if len(b.released) != 1 || b.released[0].Item.URL != b.w.staged[3].URL {
		t.Errorf("a held page's weight released %v, want the next held, %s, not itself", b.released, b.w.staged[3].URL)
	}
	// No releaser: the held URLs stay held, and the budget unspent.
	b = newBudgetJudge(t, 2, 0)
	b.links(facetPage, 4)
	w := b.Worth(b.url(facetPage), "")
	w.Admitted(b.url("http://shop.test/product/1"))
	b.Weigh(w, Unjudged, nil)
	if b.room(facetPage) != 1 || b.budgets.waiting.len() != 2 {
		t.Errorf("no releaser: room %d and %d waiting, want 1 and 2", b.room(facetPage), b.budgets.waiting.len())
	}
	// Config.NoRelease (a node of a cluster that may lose its hosts):
	// nothing is remembered, and a family with room queues its new URLs
	// as usual, held ones or not.
	b = newBudgetJudge(t, 2, 0)
	b.budgets = newBudgets(2, 0, 1, true)
	b.links(facetPage, 4)
	b.weigh(1, true, Unjudged)
	if len(b.released) != 0 || b.links(facetPage, 3) != 1 {
		t.Errorf("no release: %d released; want none, and one more queued as usual", len(b.released))
	}
}

// The URLs held that the judge remembers are bounded, an eighth of the
// bound a family: past it the family that went longest without a release
// (or since its first URL held) is forgotten whole, so that traps, which
// only hold, go before a family whose URLs are being released.
func TestTrapBudgetWaitingBounded(t *testing.T) {
	w := newWaiting(24)
	add := func(fam string, n int) {
		for i := range n {
			w.add(fam, Held{Item: frontier.Item{URL: fmt.Sprint(fam, i)}})
		}
	}
	add("a", 5) // a share of 3
	if w.len() != 3 {
		t.Fatalf("%d of one family remembered, want its share of 3", w.len())
	}
	for _, f := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		add(f, 3)
	}
	w.take("a", 1) // a released one: used last
	add("i", 2)    // full: b goes first, then c
	if w.len() != 22 || !w.has("a") || w.has("b") || !w.has("c") || !w.has("i") {
		t.Errorf("%d remembered, a %v, b %v, c %v, i %v; want 22, b forgotten", w.len(), w.has("a"), w.has("b"), w.has("c"), w.has("i"))
	}
	if got := w.take("a", 5); len(got) != 2 || got[0].Item.URL != "a1" || w.has("a") {
		t.Errorf("took %v of a, want a1 and a2, and a gone", got)
	}
}

// A family's budget shrinks by one for each page that was a copy, by half
// for each that brought nothing new, and never below none: a family
// that turns worthwhile recovers.
func TestTrapBudgetShrinks(t *testing.T) {
	b := newBudgetJudge(t, 8, 0)
	b.links(facetPage, 1) // the family is known
	b.weigh(3, false, Copy)
	if n := b.links(facetPage, 10); n != 8-3-1 {
		t.Errorf("after 3 copies, %d more queued as usual, want %d", n, 8-3-1)
	}
	b = newBudgetJudge(t, 8, 0)
	b.links(facetPage, 1)
	b.weigh(4, false, Unjudged)
	if n := b.links(facetPage, 10); n != 8-2-1 {
		t.Errorf("after 4 pages that brought nothing new, %d more queued as usual, want %d", n, 8-2-1)
	}
	// A page that led elsewhere but copied its content weighs nothing.
	b = newBudgetJudge(t, 8, 0)
	b.links(facetPage, 1)
	b.weigh(4, true, Copy)
	if n := b.links(facetPage, 10); n != 8-1 {
		t.Errorf("after 4 copies that led elsewhere, %d more queued as usual, want %d", n, 8-1)
	}
	b = newBudgetJudge(t, 8, 0)
	b.links(facetPage, 1)
	b.weigh(100, false, Copy) // down to none, not below
	if n := b.links(facetPage, 10); n != 0 {
		t.Errorf("after 100 copies, %d queued as usual", n)
	}
	b.weigh(2, true, Unjudged) // a budget of 2, one spent: one of the 10 held is released
	if n := len(b.released) + b.links(facetPage, 10); n != 1 {
		t.Errorf("after 2 pages that led elsewhere, %d released or queued as usual, want 1: the budget stopped at none", n)
	}
	// The pages of a family no page of its own has led to yet weigh
	// nothing: they have no budget to move, and take no memory.
	b = newBudgetJudge(t, 8, 0)
	b.weigh(5, false, Copy)
	if n := b.budgets.fams.Len(); n != 0 {
		t.Errorf("%d families kept for pages that led nowhere in their family", n)
	}
}

// The families kept are bounded: past the bound the least recently used
// is forgotten, and starts again at the budget.
func TestTrapBudgetMemoryBounded(t *testing.T) {
	const bound = 16
	b := newBudgetJudge(t, 2, bound)
	for i := range 1000 {
		page := fmt.Sprintf("http://shop.test/shop%d?a=one", i)
		b.link(page, fmt.Sprintf("http://shop.test/shop%d?a=two", i))
	}
	if n := b.budgets.fams.Len(); n > bound {
		t.Errorf("%d families in memory, bound %d", n, bound)
	}
	// The last family is kept: spent, it holds.
	last := "http://shop.test/shop999?a=one"
	b.link(last, "http://shop.test/shop999?a=three")
	if p := b.link(last, "http://shop.test/shop999?a=four"); p != HeldPriority {
		t.Errorf("a family in memory past its budget: queued at %v", p)
	}
}

// The budgets of the families in memory are saved with the trap rules'
// counts and read back: a resumed crawl holds a family that had spent
// its budget.
func TestTrapBudgetSurvivesRestart(t *testing.T) {
	db, err := store.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := newBudgetJudge(t, 3, 0)
	b.links(facetPage, 3)
	b.weigh(4, false, Distinct) // one more
	if err := b.SaveCounts(db); err != nil {
		t.Fatal(err)
	}
	b = newBudgetJudge(t, 3, 0)
	if err := b.LoadCounts(db); err != nil {
		t.Fatal(err)
	}
	if n := b.links(facetPage, 5); n != 1 {
		t.Errorf("resumed: %d more queued as usual, want 1 (3 + 1 grown, 3 spent)", n)
	}
}

// TestOneScriptManyKinds: the URLs of one path are one family, but a link
// between two of its queries that share no parameter name (WordPress's
// plain links: a category, ?cat=3, listing a post, ?p=12) joins pages of
// two kinds, and is an in-link; and a link that changes one parameter's
// number and nothing else (the next page, the next post) is a page of its
// own: neither is held past the family's budget, and a page's links of
// the first sort count as leading outside the family. A filter set or
// changed, the next page with a filter changed, a calendar's next month
// or day (a date family), a timestamp changed (no page number), and the
// next page of a family whose pages were copies are held.
func TestOneScriptManyKinds(t *testing.T) {
	b := newBudgetJudge(t, 1, 0)
	b.link("http://blog.test/?cat=3", "http://blog.test/?cat=3&paged=2") // spends the budget of 1
	for _, c := range []struct {
		page, link string
		want       frontier.Priority
	}{
		{"http://blog.test/?cat=3", "http://blog.test/?p=12", frontier.Normal},                        // another kind
		{"http://blog.test/?p=12", "http://blog.test/?p=13", frontier.Normal},                         // the next post
		{"http://blog.test/?cat=3&paged=2", "http://blog.test/?cat=3&paged=3", frontier.Normal},       // the next page
		{"http://blog.test/?p=12", "http://blog.test/?p=14#comments", frontier.Normal},                // a fragment is no part
		{"http://blog.test/?cat=3", "http://blog.test/?cat=3&paged=5", HeldPriority},                  // a parameter added
		{"http://blog.test/?cat=3", "http://blog.test/?cat=4&paged=2", HeldPriority},                  // a parameter added, another changed
		{"http://blog.test/?color=red", "http://blog.test/?color=red&size=m", HeldPriority},           // a filter set
		{"http://blog.test/?color=red&page=2", "http://blog.test/?color=blue&page=2", HeldPriority},   // a filter changed
		{"http://blog.test/?color=red&page=2", "http://blog.test/?color=red&page=3", frontier.Normal}, // the filter's next page
		{"http://blog.test/?sort=new&s=wool", "http://blog.test/?s=wool&sort=old", HeldPriority},      // a word changed
	} {
		if p := b.link(c.page, c.link); p != c.want {
			t.Errorf("%s from %s: queued at %v, want %v", c.link, c.page, p, c.want)
		}
	}
	cal := newBudgetJudge(t, 1, 0)
	cal.link("http://cal.test/events?month=11&year=2026", "http://cal.test/events?month=10&year=2026")
	if p := cal.link("http://cal.test/events?month=11&year=2026", "http://cal.test/events?month=12&year=2026"); p != HeldPriority {
		t.Errorf("a calendar's next month past its budget: queued at %v, want %v", p, HeldPriority)
	}
	if p := cal.link("http://cal.test/events?month=11&year=2026", "http://cal.test/events?date=2026-11-05"); p != HeldPriority {
		t.Errorf("a calendar's day from its month (no name shared, a date family) past its budget: queued at %v, want %v", p, HeldPriority)
	}
	// A timestamp is no page number: a cache-buster's next value is held.
	if p := b.link("http://blog.test/?t=1733500000", "http://blog.test/?t=1733500001"); p != HeldPriority {
		t.Errorf("a timestamp changed past the budget: queued at %v, want %v", p, HeldPriority)
	}
	// Nor is a next page free in a family whose pages were copies.
	copies := newBudgetJudge(t, 1, 0)
	copies.link(facetPage, "http://shop.test/shop?color=blue")
	copies.weigh(3, false, Copy)
	if p := copies.link("http://shop.test/shop?page=2", "http://shop.test/shop?page=3"); p != HeldPriority {
		t.Errorf("the next page in a family of copies past its budget: queued at %v, want %v", p, HeldPriority)
	}
	w := b.Worth(b.url("http://blog.test/?cat=5"), "")
	w.Admitted(b.url("http://blog.test/?cat=5&paged=2"))
	if w.led != 0 {
		t.Errorf("the next page of a category counted as leading outside its family")
	}
	w.Admitted(b.url("http://blog.test/?p=40"))
	if w.led != 1 {
		t.Errorf("a post a category lists: counted %d, want 1 (leading outside its family)", w.led)
	}
}
