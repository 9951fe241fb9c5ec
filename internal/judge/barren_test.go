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
// as many pages have shown it, one queued before is dropped when leased
// in a crawl that ends. A number is no word (the next page); a parameter
// one page led somewhere with is never barren, nor one whose every value
// is new (an article's slug), nor, on a path, one that every page of it
// carries (a script's route); a link from elsewhere on the host, or
// another host's, is queued as usual. A parameter that leads somewhere
// after all has the URLs held for it released.
func TestBarrenParameters(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	b.cfg.Ends = true
	weigh := func(raw string, led bool) {
		w := b.Worth(b.url(raw))
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

	// Dropped when leased only on twice the evidence, and only in a crawl
	// that ends, from its own path, and when not held already.
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

	// A colour page that leads somewhere after all: colour is no longer
	// barren, and the URLs held for it are released.
	weigh("http://shop.test/c/9?color=white", true)
	released := map[string]bool{}
	for _, h := range b.released {
		released[h.Item.URL] = true
	}
	for _, u := range []string{"http://shop.test/c/2?color=blue", "http://shop.test/c/1?color=blue&size=m", "http://shop.test/c/1?color=blue&page=2"} {
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
