package judge

import (
	"fmt"
	"testing"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
)

// TestBarrenParameters: once barrenAfter pages of a host that set a
// parameter to a word, a few values again and again, have led to nothing
// new, a link that carries it from a page of its own path is held, in
// every family of the host (another category's listing), and, once twice
// as many pages have shown it, one queued before is held when leased
// in a crawl that ends (Hold). A number is no word (the next page); a parameter
// one page led somewhere with is never barren, nor one whose every value
// is new (an article's slug), nor, on a path, one that every page of it
// carries (a script's route); a link from elsewhere on the host, or
// another host's, is queued as usual. A parameter that leads somewhere
// after all has the URLs held for it released.
func TestBarrenParameters(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	b.cfg.Ends = true
	weigh := func(raw string, led bool) {
		w := b.Worth(b.url(raw), "")
		if led {
			w.Admitted(b.url("http://shop.test/product/" + fmt.Sprint(len(b.released), raw)))
		}
		b.Weigh(w, Distinct, b)
	}
	colours := []string{"red", "green", "blue", "black"}
	for c := range 4 { // each category's next page, which sets no colour
		weigh(fmt.Sprintf("http://shop.test/c/%d?page=2", c), true)
	}
	for i := range barrenAfter - 1 { // four colours in two categories
		weigh(fmt.Sprintf("http://shop.test/c/%d?color=%s", i/4, colours[i%4]), false)
	}
	if p := b.link("http://shop.test/c/1", "http://shop.test/c/1?color=red"); p != frontier.Normal {
		t.Errorf("after %d colour pages that led nowhere: a colour queued at %v, want %v", barrenAfter-1, p, frontier.Normal)
	}
	weigh("http://shop.test/c/1?color=black", false)
	for _, c := range []struct {
		page, link string
		want       frontier.Priority
	}{
		{"http://shop.test/c/2", "http://shop.test/c/2?color=blue", HeldPriority},                   // another category's listing
		{"http://shop.test/c/1?size=m", "http://shop.test/c/1?color=blue&size=m", HeldPriority},     // from a variant
		{"http://shop.test/c/1?color=blue", "http://shop.test/c/1?color=blue&page=2", HeldPriority}, // the colour's next page
		{"http://shop.test/c/1", "http://shop.test/c/1?a=x&b=x&c=x&d=x&color=red", HeldPriority},    // fifth of five
		{"http://shop.test/c/1", "http://shop.test/c/1?page=3", frontier.Normal},                    // a number is no word
		{"http://shop.test/c/1", "http://shop.test/c/1?size=m", frontier.Normal},                    // another parameter
		{"http://shop.test/", "http://shop.test/c/3?color=red", frontier.Normal},                    // from elsewhere on the host
		{"http://other.test/c/1", "http://other.test/c/1?color=red", frontier.Normal},               // another host
		{"http://shop.test/only-colours", "http://shop.test/only-colours?color=blue", HeldPriority}, // a path not weighed yet
	} {
		if p := b.link(c.page, c.link); p != c.want {
			t.Errorf("%s from %s: queued at %v, want %v", c.link, c.page, p, c.want)
		}
	}
	if got := b.Held()[HeldBarren]; got != 5 {
		t.Errorf("held %v, want %s 5", b.Held(), HeldBarren)
	}
	// A path whose every page weighed sets a colour: there colour routes.
	weigh("http://shop.test/only-colours?color=red", false)
	weigh("http://shop.test/only-colours?color=green", false)
	if p := b.link("http://shop.test/only-colours", "http://shop.test/only-colours?color=black"); p != frontier.Normal {
		t.Errorf("a colour on a path whose every page sets one: queued at %v, want %v", p, frontier.Normal)
	}

	// Stopped when leased (and held again, Hold) only on twice the
	// evidence, and only in a crawl that ends, from its own path, and when
	// not held already.
	queued := b.url("http://shop.test/c/3?color=red")
	if got := b.Learnt(queued, "http://shop.test/c/3", false, false); got != "" {
		t.Errorf("leased %s after %d colour pages: %q, want it fetched", queued.String, barrenAfter+2, got)
	}
	for i := range barrenAfter {
		weigh(fmt.Sprintf("http://shop.test/c/%d?color=%s", 4+i/4, colours[i%4]), false)
	}
	for _, c := range []struct {
		via        string
		held, ends bool
		want       string
	}{
		{"http://shop.test/c/3", false, true, HeldBarren},
		{"http://shop.test/c/3?sort=new", false, true, HeldBarren},
		{"http://shop.test/", false, true, ""},     // from elsewhere
		{"http://shop.test/c/3", true, true, ""},   // held already, for a continuous crawl
		{"http://shop.test/c/3", false, false, ""}, // a continuous crawl fetches it when nothing else waits
	} {
		b.cfg.Ends = c.ends
		if got := b.Learnt(queued, c.via, c.held, false); got != c.want {
			t.Errorf("leased %s from %s (held %v, crawl ends %v): %q, want %q", queued.String, c.via, c.held, c.ends, got, c.want)
		}
	}
	b.cfg.Ends = true
	// Its caller holds it instead (state.Batch.Hold): counted, and
	// remembered for release.
	b.Hold(frontier.Item{URL: queued.String, Host: "shop.test", Depth: 2, Priority: HeldPriority, Via: "http://shop.test/c/3"}, queued, HeldBarren)
	if got := b.Held()[HeldBarren]; got != 6 {
		t.Errorf("held %v after a hold when leased, want %s 6", b.Held(), HeldBarren)
	}

	// A colour page that leads somewhere after all: colour is no longer
	// barren, and the URLs held for it are released, those held when
	// leased too.
	weigh("http://shop.test/c/9?color=white", true)
	released := map[string]bool{}
	for _, h := range b.released {
		released[h.Item.URL] = true
	}
	for _, u := range []string{"http://shop.test/c/2?color=blue", "http://shop.test/c/1?color=blue&size=m", "http://shop.test/c/1?color=blue&page=2", queued.String} {
		if !released[u] {
			t.Errorf("%s, held for its colour, not released once colour led somewhere; released %v", u, released)
		}
	}
	if p := b.link("http://shop.test/c/5", "http://shop.test/c/5?color=blue"); p != frontier.Normal {
		t.Errorf("a colour after one colour page led somewhere: queued at %v, want %v", p, frontier.Normal)
	}

	// Articles by slug, each linking only more of them: every value new,
	// pages of their own, never barren, however many.
	for i := range 100 {
		weigh(fmt.Sprintf("http://shop.test/article?slug=story-%d", i), false)
	}
	if p := b.link("http://shop.test/article?slug=story-1", "http://shop.test/article?slug=story-100"); p != frontier.Normal {
		t.Errorf("an article by its slug, after 100 that led only to more: queued at %v, want %v", p, frontier.Normal)
	}
	// A script that routes every page by words (?option=com_content&view=
	// article&id=N): its route is on every page of its path, never held.
	for i := range 3 * barrenAfter {
		weigh(fmt.Sprintf("http://shop.test/index.php?id=%d&option=com_content&view=article", i), false)
	}
	if p := b.link("http://shop.test/index.php?id=3&option=com_content&view=article", "http://shop.test/index.php?id=900&option=com_content&view=category"); p != frontier.Normal {
		t.Errorf("a page of a script routed by words: queued at %v, want %v", p, frontier.Normal)
	}
}

// TestParamStateSaturates: the pages counted for a parameter stop at the
// most a uint16 holds, never wrapping back to none.
func TestParamStateSaturates(t *testing.T) {
	b := newBarren(16, 1)
	u, err := canon.New(canon.Config{}).Parse("http://shop.test/c/1?sort=new")
	if err != nil {
		t.Fatal(err)
	}
	for range 1<<16 + 10 {
		b.weighed(u, 0)
	}
	if s, _ := b.params.Peek(paramKey("shop.test", "sort")); s.pages != 1<<16-1 {
		t.Errorf("pages %d after 65,546 weighed, want 65,535", s.pages)
	}
}

// TestBarrenWithoutRelease: a node of a cluster releases nothing
// (Config.NoRelease): a parameter learnt barren and then unlearnt, and a
// parameter learnt to name pages, move nothing held, and do not fail.
func TestBarrenWithoutRelease(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	b.budgets.waiting = nil // as Config.NoRelease leaves it
	weigh := func(raw string, led bool) {
		w := b.Worth(b.url(raw), "")
		if led {
			w.Admitted(b.url("http://shop.test/product/" + raw[len(raw)-3:]))
		}
		b.Weigh(w, Distinct, b)
	}
	weigh("http://shop.test/c/0?page=2", true)
	for i := range barrenAfter {
		weigh(fmt.Sprintf("http://shop.test/c/0?color=c%d", i%3), false)
	}
	if p := b.link("http://shop.test/c/0", "http://shop.test/c/0?color=c1&size=m"); p != HeldPriority {
		t.Errorf("a barren colour: queued at %v, want %v", p, HeldPriority)
	}
	weigh("http://shop.test/c/0?color=c2", true) // unlearnt
	for i := range 40 {
		weigh(fmt.Sprintf("http://shop.test/wiki?title=Page_%d", i), false) // learnt to name pages
	}
	if len(b.released) != 0 {
		t.Errorf("released %d URLs without a waiting list", len(b.released))
	}
}

// TestParameterThatNamesPages: a wiki without pretty links, every page
// /index.php?title=..., one family whose pages link each other: once its
// title has named more pages than a filter has values, a link that
// changes the title alone is another page, queued as usual past the
// family's budget (up to maxNamed budgets' worth), and the links held as
// the family's variants before are released. Not so a search's terms
// (a value with a space), a title changed with another parameter, or a
// parameter that not every page of the path carries.
func TestParameterThatNamesPages(t *testing.T) {
	b := newBudgetJudge(t, 2, 0)
	page := func(i int) string { return fmt.Sprintf("http://wiki.test/index.php?title=Page_%d", i) }
	b.link(page(0), page(1))
	b.link(page(0), page(2)) // the budget of 2 spent
	if p := b.link(page(0), page(3)); p != HeldPriority {
		t.Fatalf("a third page past a budget of 2, before titles are learnt: queued at %v, want %v", p, HeldPriority)
	}
	for i := range 80 {
		w := b.Worth(b.url(page(10+i)), "")
		b.Weigh(w, Distinct, b)
	}
	released := false
	for _, h := range b.released {
		released = released || h.Item.URL == page(3)
	}
	if !released {
		t.Errorf("%s, held before titles were learnt to name pages, not released", page(3))
	}
	for i := 0; b.link(page(7), fmt.Sprintf("%s&rev=r%d", page(7), i)) != HeldPriority; i++ { // spend what the pages grew
		if i > 100 {
			t.Fatal("the family's budget never spent")
		}
	}
	for _, c := range []struct {
		from, link string
		want       frontier.Priority
	}{
		{page(5), page(500), frontier.Normal},
		{page(5), page(501) + "&action=edit", HeldPriority},                                               // a title and an action: a variant
		{"http://wiki.test/index.php?q=red+wool", "http://wiki.test/index.php?q=blue+wool", HeldPriority}, // a search
	} {
		if p := b.link(c.from, c.link); p != c.want {
			t.Errorf("%s from %s: queued at %v, want %v", c.link, c.from, p, c.want)
		}
	}
	// It leads nowhere outside the family (a word-valued calendar would
	// pay for itself), and maxNamed budgets' worth of them are queued so,
	// no more.
	w := b.Worth(b.url(page(6)), "")
	w.Admitted(b.url(page(502)))
	if w.led != 0 {
		t.Errorf("another page a title names: counted %d as leading outside the family, want 0", w.led)
	}
	queued := 0
	for i := range 100 {
		if b.link(page(5), page(600+i)) == frontier.Normal {
			queued++
		}
	}
	if queued == 0 || queued > maxNamed*2 {
		t.Errorf("%d of 100 more pages by title queued as usual, want some, and at most maxNamed budgets (%d)", queued, maxNamed*2)
	}
}
