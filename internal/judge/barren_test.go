package judge

import (
	"fmt"
	"testing"

	"github.com/weft-crawler/weft/internal/frontier"
)

// TestBarrenParameters: once barrenAfter pages of a host that set a
// parameter to a word, a few values again and again, have led to nothing
// new, a link that sets it from a page of its own path is held, in every family of the host (another
// category's listing), and one queued before is dropped when leased in a
// crawl that ends. A number is no word (the next page); a parameter one
// page led somewhere with is never barren, nor one whose every value is
// new (an article's slug); a link from elsewhere on the host, or another
// host's, is queued as usual.
func TestBarrenParameters(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	b.cfg.Ends = true
	weigh := func(raw string, led bool) {
		w := b.Worth(b.url(raw))
		if led {
			w.Admitted(b.url("http://shop.test/product/" + fmt.Sprint(len(raw))))
		}
		b.Weigh(w, Distinct, b)
	}
	colours := []string{"red", "green", "blue", "black"}
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
		{"http://shop.test/c/1", "http://shop.test/c/1?color=blue", HeldPriority},                   // another category's listing
		{"http://shop.test/c/1?size=m", "http://shop.test/c/1?color=blue&size=m", HeldPriority},     // from a variant
		{"http://shop.test/c/1?color=blue", "http://shop.test/c/1?color=blue&page=2", HeldPriority}, // the colour's next page
		{"http://shop.test/c/1", "http://shop.test/c/1?page=2", frontier.Normal},                    // a number is no word
		{"http://shop.test/c/1", "http://shop.test/c/1?size=m", frontier.Normal},                    // another parameter
		{"http://shop.test/", "http://shop.test/c/2?color=red", frontier.Normal},                    // from elsewhere on the host
		{"http://other.test/c/1", "http://other.test/c/1?color=red", frontier.Normal},               // another host
	} {
		if p := b.link(c.page, c.link); p != c.want {
			t.Errorf("%s from %s: queued at %v, want %v", c.link, c.page, p, c.want)
		}
	}
	if got := b.Held()[HeldBarren]; got != 3 {
		t.Errorf("held %v, want %s 3", b.Held(), HeldBarren)
	}
	queued := b.url("http://shop.test/c/3?color=red")
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
	// A size page that led somewhere: size is never barren.
	weigh("http://shop.test/c/0?size=s", true)
	for i := range 3 * barrenAfter {
		weigh(fmt.Sprintf("http://shop.test/c/%d?size=%c", i, 's'+i%3), false)
	}
	if p := b.link("http://shop.test/c/4", "http://shop.test/c/4?size=l"); p != frontier.Normal {
		t.Errorf("a size, after one size page led somewhere: queued at %v, want %v", p, frontier.Normal)
	}
	// Articles by slug, each linking only more of them: every value new,
	// pages of their own, never barren, however many.
	for i := range 100 {
		weigh(fmt.Sprintf("http://shop.test/article?slug=story-%d", i), false)
	}
	if p := b.link("http://shop.test/article?slug=story-1", "http://shop.test/article?slug=story-100"); p != frontier.Normal {
		t.Errorf("an article by its slug, after 100 that led only to more: queued at %v, want %v", p, frontier.Normal)
	}
}
