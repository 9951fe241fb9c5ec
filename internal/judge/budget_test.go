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
		f := familyOf(u)
		if g := familyOfString(u.String); g != f {
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
		w := b.Worth(b.url(facetPage))
		w.Admitted(b.url("http://shop.test/shop?color=x")) // its own family: not outside it
		if led {
			w.Admitted(b.url("http://shop.test/product/1"))
		}
		b.Weigh(w, content)
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

// A family's budget grows with what its pages show: one URL for each page
// that led to a new URL outside the family, a quarter for each page of
// distinct content, one for each new URL of it that another host links
// to.
func TestTrapBudgetGrows(t *testing.T) {
	for _, c := range []struct {
		name    string
		grow    func(b *budgetJudge)
		more    int
		content Content
	}{
		{"pages that lead elsewhere", func(b *budgetJudge) { b.weigh(6, true, Unjudged) }, 6, Unjudged},
		{"pages of distinct content", func(b *budgetJudge) { b.weigh(8, false, Distinct) }, 2, Distinct},
		{"pages that lead elsewhere, of distinct content", func(b *budgetJudge) { b.weigh(4, true, Distinct) }, 5, Distinct},
		{"links from another host", func(b *budgetJudge) {
			for i := range 3 {
				b.link("http://other.test/", fmt.Sprintf("http://shop.test/shop?brand=b%d", i))
			}
		}, 3, Distinct},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBudgetJudge(t, 4, 0)
			if n := b.links(facetPage, 4); n != 4 {
				t.Fatalf("%d of the first 4 queued as usual", n)
			}
			if n := b.links(facetPage, 1); n != 0 {
				t.Fatalf("past the budget: queued as usual")
			}
			c.grow(b)
			if n := b.links(facetPage, 20); n != c.more {
				t.Errorf("%d more queued as usual once grown, want %d", n, c.more)
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
		w := b.Worth(b.url(page))
		w.Admitted(b.url(fmt.Sprintf("http://shop.test/item/%d", i)))
		b.Weigh(w, Distinct)
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
	b.weigh(2, true, Unjudged) // a budget of 2, one spent
	if n := b.links(facetPage, 10); n != 1 {
		t.Errorf("after 2 pages that led elsewhere, %d queued as usual, want 1: the budget stopped at none", n)
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
		page := fmt.Sprintf("http://shop.test/shop%d?a=1", i)
		b.link(page, fmt.Sprintf("http://shop.test/shop%d?a=2", i))
	}
	if n := b.budgets.fams.Len(); n > bound {
		t.Errorf("%d families in memory, bound %d", n, bound)
	}
	// The last family is kept: spent, it holds.
	last := "http://shop.test/shop999?a=1"
	b.link(last, "http://shop.test/shop999?a=3")
	if p := b.link(last, "http://shop.test/shop999?a=4"); p != HeldPriority {
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
