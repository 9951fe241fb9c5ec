package judge

import (
	"fmt"
	"testing"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/store"
)

// fetched weighs a fetched page, raw, n times as content showed; into,
// when not "", is where it redirected.
func (b *budgetJudge) fetched(raw string, n int, content Content, into string) {
	b.t.Helper()
	for range n {
		w := b.Worth(b.url(raw), "")
		if into != "" {
			w.Redirect(b.url(into))
		}
		b.Weigh(w, content, b)
	}
}

// linksInto judges n new links from a product page into the family of
// format (a URL with one %d), and returns how many were held.
func (b *budgetJudge) linksInto(format string, n int) (held int) {
	b.t.Helper()
	for range n {
		raw := fmt.Sprintf(format, len(b.w.staged))
		if b.link(fmt.Sprintf("http://shop.test/product/%d", len(b.w.staged)), raw) == HeldPriority {
			held++
		}
	}
	return held
}

const loginPage = "http://shop.test/login?next=/cart/add%3Fid%3D1"

// A shape whose pages were copies is a wall: its URLs linked from the
// rest of its host are held, as copies, but the first two and a few by
// their hash, probes; seeds,
// links from its own pages (the trap budget's) and from other hosts are
// not held as copies.
func TestWallHoldsLinksIntoCopies(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	b.fetched(loginPage, 1, Distinct, "")
	b.fetched(loginPage, wallEvidence-1, Copy, "")
	if n := b.linksInto("http://shop.test/login?next=/p/%d", 5); n != 0 {
		t.Errorf("%d of 5 links held after %d copies; want none before %d", n, wallEvidence-1, wallEvidence)
	}
	b.fetched(loginPage, 1, Copy, "")
	n := b.linksInto("http://shop.test/login?next=/p/%d", 2*wallProbe)
	if n > 2*wallProbe-2 || n < 2*wallProbe-8 {
		t.Errorf("%d of %d links into the wall held; want all but the first two and a few probes", n, 2*wallProbe)
	}
	if got := b.Held()[HeldCopies]; got != int64(n) {
		t.Errorf("held %v, want %s %d", b.Held(), HeldCopies, n)
	}
	if p := b.link("http://other.test/", "http://shop.test/login?next=/elsewhere"); p != frontier.Normal {
		t.Errorf("a link from another host into the wall: queued at %v, want %v", p, frontier.Normal)
	}
	why, err := b.Admit(Candidate{URL: b.url("http://shop.test/login?next=/seed"), Priority: frontier.High, As: AsLink}, b.w)
	if err != nil || why != "" || b.w.staged[len(b.w.staged)-1].Priority != frontier.High {
		t.Errorf("a seed into the wall: %q, %v, queued at %v", why, err, b.w.staged[len(b.w.staged)-1].Priority)
	}
}

// A family of distinct pages is no wall, whatever run of copies follows
// them, as long as more than one page in wallEvidence was distinct.
func TestWallNeedsMostlyCopies(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	b.fetched("http://shop.test/article.php?id=1", 4, Distinct, "")
	b.fetched("http://shop.test/article.php?id=1", 4*wallEvidence-1, Copy, "")
	if n := b.linksInto("http://shop.test/article.php?id=%d", 10); n != 0 {
		t.Errorf("%d of 10 links held into a family of 4 distinct pages and %d copies", n, 4*wallEvidence-1)
	}
	b.fetched("http://shop.test/article.php?id=1", 1, Copy, "") // 32 copies, 4 distinct
	if n := b.linksInto("http://shop.test/article.php?id=%d", 10); n != 8 {
		t.Errorf("%d of 10 links held with 4 distinct pages to 32 copies; want all but the first two", n)
	}
}

// A wall falls when its pages turn out distinct (its probes are), and
// every URL it held is released, oldest first, whatever the family's
// budget: they were links from elsewhere, which it never counted.
func TestWallFallsAndReleases(t *testing.T) {
	b := newBudgetJudge(t, 5, 0)
	b.fetched(loginPage, wallEvidence, Copy, "")
	if n := b.linksInto("http://shop.test/login?next=/p/%d", 12); n != 10 {
		t.Fatalf("%d of 12 links held, want all but the first two", n)
	}
	b.fetched(loginPage, 1, Distinct, "") // 8 copies, 1 distinct: still a wall
	if len(b.released) != 0 {
		t.Errorf("%d released by a wall still up", len(b.released))
	}
	b.fetched(loginPage, 1, Distinct, "")
	if len(b.released) != 10 || b.released[0].Item.URL != "http://shop.test/login?next=/p/2" || b.released[0].Item.Priority != ReleasedPriority {
		t.Errorf("released %d URLs (the first %+v); want the 10 held, oldest first, at %v", len(b.released), b.released, ReleasedPriority)
	}
	if n := b.linksInto("http://shop.test/login?next=/p/%d", 5); n != 0 {
		t.Errorf("%d of 5 links held by a wall fallen", n)
	}
}

// A login page that links its own family (a password reset) gives the
// family a trap budget: the wall's URLs are kept apart from it, and are
// not released while the wall stands, and the family's own links are not
// held behind them.
func TestWallHoldsWhileItsFamilyHasABudget(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	if p := b.link(loginPage, "http://shop.test/login?action=reset"); p != frontier.Normal {
		t.Fatalf("the login page's own link queued at %v", p)
	}
	b.fetched(loginPage, wallEvidence, Copy, "")
	if n := b.linksInto("http://shop.test/login?next=/p/%d", 40); n != 38 {
		t.Fatalf("%d of 40 links held, want all but the first two", n)
	}
	b.fetched(loginPage, 3, Copy, "")
	if len(b.released) != 0 {
		t.Errorf("%d URLs released by a wall still up", len(b.released))
	}
	if p := b.link(loginPage, "http://shop.test/login?action=register"); p != frontier.Normal {
		t.Errorf("the family's own link, within its budget, queued at %v behind the wall's", p)
	}
	if got := b.Held(); got[HeldQuery] != 0 {
		t.Errorf("held %v: the wall's URLs counted against the family's budget", got)
	}
}

// A seed that redirects into a wall is followed: seeds and their
// redirects are never held.
func TestWallSparesSeeds(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	b.fetched(loginPage, wallEvidence, Copy, "")
	why, err := b.Admit(Candidate{URL: b.url("http://shop.test/login?next=/account"), Hops: 1, Priority: frontier.High,
		Via: "http://shop.test/account", As: AsLink}, b.w)
	if err != nil || why != "" || b.w.staged[len(b.w.staged)-1].Priority != frontier.High {
		t.Errorf("a seed's redirect into the wall: %q, %v, queued at %v", why, err, b.w.staged[len(b.w.staged)-1].Priority)
	}
}

// A family whose URLs redirect into a wall, wallEvidence in a row, is a
// wall too, whether the redirects came before the wall was learnt or
// after; redirects into a family of distinct pages make none.
func TestRedirectsIntoAWall(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	b.fetched("http://shop.test/cart/add?id=1", wallEvidence, Unjudged, loginPage)
	if n := b.linksInto("http://shop.test/cart/add?id=%d", 5); n != 0 {
		t.Errorf("%d of 5 links held: the redirects' target is not yet a wall", n)
	}
	b.fetched(loginPage, wallEvidence, Copy, "")
	if n := b.linksInto("http://shop.test/cart/add?id=%d", 7); n != 5 {
		t.Errorf("%d of 7 links into a family that redirects to a wall held; want all but the first two", n)
	}
	b.fetched("http://shop.test/go?id=1", 2*wallEvidence, Unjudged, "http://shop.test/product.php?id=1")
	b.fetched("http://shop.test/product.php?id=1", 20, Distinct, "")
	if n := b.linksInto("http://shop.test/go?id=%d", 5); n != 0 {
		t.Errorf("%d of 5 links held into a family that redirects to distinct pages", n)
	}
	// It falls with its target, and what it held is released at the
	// next page of its own weighed.
	b.fetched(loginPage, 4, Distinct, "")
	if n := b.linksInto("http://shop.test/cart/add?id=%d", 5); n != 0 || len(b.released) != 0 {
		t.Errorf("%d of 5 links held, %d released, after the target fell; want none held, none released yet", n, len(b.released))
	}
	b.fetched("http://shop.test/cart/add?id=1", 1, Unjudged, "http://shop.test/basket")
	if len(b.released) != 5 {
		t.Errorf("%d released after the target fell; want the 5 held", len(b.released))
	}
	// A redirect elsewhere breaks the run.
	b.fetched("http://shop.test/wishlist/add?id=1", wallEvidence-1, Unjudged, loginPage)
	b.fetched("http://shop.test/wishlist/add?id=1", 1, Unjudged, "http://shop.test/product.php?id=1")
	b.fetched("http://shop.test/wishlist/add?id=1", 1, Unjudged, loginPage)
	if n := b.linksInto("http://shop.test/wishlist/add?id=%d", 5); n != 0 {
		t.Errorf("%d of 5 links held after a run of one redirect into the wall", n)
	}
}

// What is learnt of walls is bounded: past DefaultMaxFamilies (here a
// bound of 16) the least recently used shape is forgotten.
func TestWallsMemoryBounded(t *testing.T) {
	const bound = 16
	b := newBudgetJudge(t, 50, bound)
	for i := range 1000 {
		b.fetched(fmt.Sprintf("http://shop.test/login-%c%c?next=/", 'a'+i%26, 'a'+i/26%26), 1, Copy, "")
	}
	if n := b.budgets.walls.shapes.Len(); n > bound || n < bound/2 {
		t.Errorf("%d shapes' walls in memory of 676 shapes seen, bound %d", n, bound)
	}
}

// Walls are learnt per shape: the print views of a site's articles, each
// a family of its own (/a/12's query variants) and a copy of its
// article, make one wall, /a/#?print, which holds the next article's
// print view; the articles themselves, without a query, are never held.
func TestWallOfPrintViews(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	for i := range wallEvidence {
		b.fetched(fmt.Sprintf("http://news.test/a/%d?print=1", i), 1, Copy, "")
	}
	for i := range 2 { // its probes
		b.link(fmt.Sprintf("http://news.test/a/%d", 50+i), fmt.Sprintf("http://news.test/a/%d?print=1", 50+i))
	}
	if p := b.link("http://news.test/a/100", "http://news.test/a/100?print=1"); p != HeldPriority {
		t.Errorf("an article's print view after %d copies: queued at %v, want held", wallEvidence, p)
	}
	if p := b.link("http://news.test/a/100", "http://news.test/a/100?comments=all"); p != frontier.Normal {
		t.Errorf("a view of another shape: queued at %v", p)
	}
	for i := range wallEvidence {
		b.fetched(fmt.Sprintf("http://news.test/a/%d", i), 1, Copy, "")
	}
	if p := b.link("http://news.test/", "http://news.test/a/101"); p != frontier.Normal {
		t.Errorf("an article, without a query, after %d copies: queued at %v", wallEvidence, p)
	}
}

// A resumed crawl remembers the URLs a wall held (RememberHeld), apart
// from their families' budgets, and releases them only once the shape,
// weighed wallEvidence times in the new run, is no wall: not at its first
// page, and not while it is learnt again as one.
func TestWallHeldAcrossARestart(t *testing.T) {
	held := []frontier.Item{
		{URL: "http://shop.test/login?next=/p/1", Via: "http://shop.test/product/1", Priority: HeldPriority},
		{URL: "http://shop.test/login?next=/p/2", Via: "http://shop.test/product/2", Priority: HeldPriority},
	}
	for _, copies := range []bool{true, false} {
		b, content := afterRestart(t, held, copies)
		b.fetched(loginPage, 1, content, "")
		if len(b.released) != 0 {
			t.Errorf("copies %v: %d released at the shape's first page", copies, len(b.released))
		}
		b.fetched(loginPage, wallEvidence, content, "")
		if want := map[bool]int{true: 0, false: 2}[copies]; len(b.released) != want {
			t.Errorf("copies %v: %d released after %d pages of the shape, want %d", copies, len(b.released), wallEvidence+1, want)
		}
	}
}

// After a restart, a shape of redirects into a wall (/cart/add?id= to the
// login page) keeps what it held until its target has been weighed
// wallEvidence times in the new run: its redirects come first, and would
// otherwise find it no wall before its target stood again.
func TestRedirectWallHeldAcrossARestart(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	b.RememberHeld([]frontier.Item{{URL: "http://shop.test/cart/add?id=9", Via: "http://shop.test/product/9", Priority: HeldPriority}})
	for range wallEvidence {
		b.fetched("http://shop.test/cart/add?id=1", 1, Unjudged, loginPage)
		b.fetched(loginPage, 1, Copy, "")
	}
	b.fetched("http://shop.test/cart/add?id=1", 1, Unjudged, loginPage)
	if len(b.released) != 0 {
		t.Errorf("%d released by a wall of redirects learnt again", len(b.released))
	}
}

// A link queued before its shape was learnt a wall is stopped when leased
// (Learnt: its caller holds it, Hold), but one in wallProbe by its hash; not a URL the wall held
// (leased by a continuous crawl when nothing else waits), not a link of
// its own family or from another host, not a URL of a shape no wall.
func TestWallStopsWhatWasQueuedBefore(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	b.fetched(loginPage, wallEvidence, Copy, "")
	dropped := 0
	for i := range 500 {
		u := b.url(fmt.Sprintf("http://shop.test/login?next=/q/%d", i))
		if b.Learnt(u, fmt.Sprintf("http://shop.test/product/%d", i), false, false) == HeldCopies {
			dropped++
		}
	}
	if dropped < 470 || dropped == 500 {
		t.Errorf("%d of 500 queued links into the wall dropped; want all but about one in %d", dropped, wallProbe)
	}
	u := b.url("http://shop.test/login?next=/q/1000")
	for _, c := range []struct {
		via  string
		held bool
	}{
		{"http://shop.test/product/1000", true},
		{"http://shop.test/login?next=/elsewhere", false},
		{"http://other.test/", false},
	} {
		if why := b.Learnt(u, c.via, c.held, false); why != "" {
			t.Errorf("from %s (held %v): %q, want kept", c.via, c.held, why)
		}
	}
	if why := b.Learnt(b.url("http://shop.test/search?q=1"), "http://shop.test/", false, false); why != "" {
		t.Errorf("a URL of a shape no wall: %q", why)
	}
}

// A URL queued before its shape was learnt a wall, and held when leased
// (Hold), counts as held and is released when the wall falls, as one held
// when found is.
func TestWallReleasesWhatItHeldWhenLeased(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	b.fetched(loginPage, wallEvidence, Copy, "")
	var held []string
	for i := range 20 {
		raw, via := fmt.Sprintf("http://shop.test/login?next=/q/%d", i), fmt.Sprintf("http://shop.test/product/%d", i)
		u := b.url(raw)
		if b.Learnt(u, via, false, false) == HeldCopies {
			b.Hold(frontier.Item{URL: raw, Host: "shop.test", Depth: 2, Priority: HeldPriority, Via: via}, u, HeldCopies)
			held = append(held, raw)
		}
	}
	if got := b.Held()[HeldCopies]; len(held) < 15 || got != int64(len(held)) {
		t.Fatalf("%d of 20 leased into the wall held, counted %d; want most, each counted", len(held), got)
	}
	b.fetched(loginPage, 2, Distinct, "")
	if len(b.released) != len(held) || b.released[0].Item.URL != held[0] || b.released[0].Item.Priority != ReleasedPriority ||
		!b.released[0].Ranked {
		t.Errorf("released %d (the first %+v); want the %d held when leased, oldest first, at %v, ranked already", len(b.released), b.released, len(held), ReleasedPriority)
	}

	// A variant's wall (a blog's reply forms) holds under its variant
	// shape, and releases when that falls.
	for i := range wallEvidence {
		b.Weigh(b.Worth(b.url(blogPost(i)+"?replytocom=1"), blogPost(i)), Copy, b)
	}
	b.released = nil
	post := blogPost(70)
	u := b.url(post + "?replytocom=9")
	if why := b.Learnt(u, post, false, false); why != HeldCopies {
		t.Fatalf("a reply form queued before its wall: %q, want %q", why, HeldCopies)
	}
	b.Hold(frontier.Item{URL: u.String, Host: "blog.test", Depth: 2, Priority: HeldPriority, Via: post}, u, HeldCopies)
	for i := range 2 {
		b.Weigh(b.Worth(b.url(blogPost(10+i)+"?replytocom=1"), blogPost(10+i)), Distinct, b)
	}
	if len(b.released) != 1 || b.released[0].Item.URL != u.String {
		t.Errorf("released %+v; want the reply form held when leased", b.released)
	}
}

// A redirect's target queued before its shape was learnt a wall is
// stopped when leased, as one queued after is held; before, it is kept.
func TestWallStopsRedirectTargetsQueuedBefore(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	u := b.url("http://shop.test/login?next=/cart/add%3Fid%3D7")
	const action = "http://shop.test/cart/add?id=7"
	if why := b.Learnt(u, action, false, true); why != "" {
		t.Errorf("before the wall: %q, want kept", why)
	}
	b.fetched(loginPage, wallEvidence, Copy, "")
	if why := b.Learnt(u, action, false, true); why != HeldCopies {
		t.Errorf("into the wall: %q, want %q", why, HeldCopies)
	}
	// What else a page link is dropped for does not touch a redirect's
	// target: the page its link meant.
	for i := range probeEvery * 4 {
		b.Redirected(b.url(fmt.Sprintf("http://shop.test/out?to=%d", i)), "", b.url(fmt.Sprintf("http://127.0.0.%d/", 10+i%5)), Scope)
	}
	out := b.url("http://shop.test/out?to=x")
	if why := b.Learnt(out, "http://shop.test/", false, false); why != OffsiteRedirect {
		t.Fatalf("a page link of a shape learnt to leave the crawl: %q, want %q", why, OffsiteRedirect)
	}
	if why := b.Learnt(out, "http://shop.test/go", false, true); why != "" {
		t.Errorf("a redirect's target of a shape learnt to leave the crawl: %q, want kept", why)
	}
}

// The copies of a wall learnt already leave the host's near-duplicate
// window: two walls learnt in turns (print views, a login page) do not
// cut off a host whose other pages are distinct. The copies that teach a
// wall count, so a host of copies under shape after shape is cut off.
func TestWallCopiesLeaveTheHostWindow(t *testing.T) {
	run := func(shapes int) bool {
		b := newBudgetJudge(t, 50, 0)
		b.Judge.copies.window = 50
		batch := new(store.Batch)
		page := func(raw string, near bool) {
			u := b.url(raw)
			of := ""
			if near {
				of = "http://" + u.Authority + "/first" // a copy of another page, not a respelling of its URL
			}
			b.JudgedPage(batch, u.Authority, u, "", of)
			content := Distinct
			if near {
				content = Copy
			}
			b.Weigh(b.Worth(u, ""), content, b)
		}
		for i := range 25 {
			page(fmt.Sprintf("http://shop.test/product/%d", i), false)
		}
		views := []string{"print", "share", "email", "login", "popup", "compare"}[:shapes]
		for i := range 25 {
			for _, v := range views {
				page(fmt.Sprintf("http://shop.test/%s?n=%d", v, i), true)
			}
			page(fmt.Sprintf("http://shop.test/product/%d", 100+i), false)
		}
		return b.Trapped(canon.URL{Authority: "shop.test"})
	}
	if run(2) {
		t.Error("two walls of copies learnt in turns cut their host off")
	}
	if !run(6) {
		t.Error("a host of copies under six shapes was not cut off")
	}
}

// blogPost is the URL of a blog's post i, dated and under a slug of words
// (no digit, so that every post is a shape of its own).
func blogPost(i int) string {
	words := []string{"garden", "lamp", "winter", "coat", "river", "stone", "bread", "market", "letter", "summer"}
	return fmt.Sprintf("http://blog.test/2026/%s/%s-and-%s/", []string{"01", "02", "03"}[i%3], words[i%10], words[i/10%10])
}

// A blog's posts each link a reply form per comment, ?replytocom=, the
// post itself but for the form: each post is a shape (and a dated family)
// of its own, with a few of them, so neither a shape's wall nor a
// family's budget ever held one. Put together as what they add to the
// page that links them (variantShape), wallEvidence copies under as many
// posts make a wall: the next post's are held, but its probes, though
// they are of its own family; the ones queued before are dropped when
// leased; a variant whose pages are distinct (?lang=) is never held.
func TestWallOfVariants(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	for i := range wallEvidence {
		for _, v := range []string{"?replytocom=1", "?lang=fr"} {
			content := Copy
			if v == "?lang=fr" {
				content = Distinct
			}
			b.Weigh(b.Worth(b.url(blogPost(i)+v), blogPost(i)), content, b)
		}
	}
	held := 0
	for i := range 2 * wallProbe {
		post := blogPost(100 + i)
		if b.link(post, post+"?replytocom=1") == HeldPriority {
			held++
		}
		if p := b.link(post, post+"?lang=fr"); p != frontier.Normal {
			t.Fatalf("a variant of distinct pages: queued at %v", p)
		}
	}
	if got := b.Held()[HeldCopies]; held > 2*wallProbe-2 || held < 2*wallProbe-8 || got != int64(held) {
		t.Errorf("%d of %d reply forms held, %d as copies; want all but the first two and a few probes", held, 2*wallProbe, got)
	}
	post := blogPost(50)
	if p := b.link(post, blogPost(51)+"?replytocom=1"); p != frontier.Normal {
		t.Errorf("another post's reply form, linked from this one: queued at %v, want Normal (no variant of its page)", p)
	}
	dropped := 0
	for i := range 500 {
		post := blogPost(60 + i%40)
		if b.Learnt(b.url(fmt.Sprintf("%s?replytocom=%d", post, 1000+i)), post, false, false) == HeldCopies {
			dropped++
		}
	}
	if dropped < 470 || dropped == 500 {
		t.Errorf("%d of 500 reply forms queued before dropped; want all but about one in %d", dropped, wallProbe)
	}
	// Their copies leave the host's near-duplicate window.
	b.Judge.copies.window = 50
	batch := new(store.Batch)
	for i := range 50 {
		u := b.url(fmt.Sprintf("%s?replytocom=%d", post, 2000+i))
		b.JudgedPage(batch, u.Authority, u, post, post)
	}
	if b.Trapped(canon.URL{Authority: "blog.test"}) {
		t.Errorf("the host cut off by the copies of a wall learnt already")
	}
}

// variantShape: a URL that adds parameters to its page's own, keeping
// the page's, is a variant; one that changes or drops one, another path,
// another host, is not.
func TestVariantShape(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	for _, c := range []struct{ raw, via, want string }{
		{"http://a.test/p/?replytocom=5", "http://a.test/p/", "a.test?+replytocom"},
		{"http://a.test/p/?share=x&amp=1", "http://a.test/p/", "a.test?+amp&share"},
		{"http://a.test/shop?color=red&size=m", "http://a.test/shop?color=red", "a.test?+size"},
		{"http://a.test/p/?replytocom=5", "https://a.test/p/", "a.test?+replytocom"},
		{"http://a.test/shop?color=blue&size=m", "http://a.test/shop?color=red", ""},
		{"http://a.test/shop?size=m", "http://a.test/shop?color=red", ""},
		{"http://a.test/shop?page=2", "http://a.test/shop?page=1", ""},
		{"http://a.test/q/?replytocom=5", "http://a.test/p/", ""},
		{"http://a.test/p/?replytocom=5", "http://b.test/p/", ""},
		{"http://a.test/p/", "http://a.test/p/?x=1", ""},
		{"http://a.test/p/?x=1", "", ""},
		{"http://a.test/p/?replytocom=5", "http://a.test/p/#comments", "a.test?+replytocom"},
		{"http://a.test/p/?b=1&a=2&b=3", "http://a.test/p/", "a.test?+a&b"},
		{"http://a.test:8080/p/?x=1", "http://a.test/p/", ""},
		{"http://a.test/p/?x=1", "http://a.test.evil.test/p/", ""},
		{"http://a.test/?x=1", "http://a.test/", "a.test?+x"},
		{"http://a.test/p/?a=2&x=1", "http://a.test/p/?a=1&a=2", ""},
	} {
		if got := variantShape(b.url(c.raw), c.via); got != c.want {
			t.Errorf("%s from %s: %q, want %q", c.raw, c.via, got, c.want)
		}
	}
}

// A variant wall that falls releases what it held: the reply links of
// posts whose reply forms turn out distinct pages after all. Across a
// restart the reply links a run held are remembered as the variant
// wall's: released once wallEvidence of them in the new run show it no
// wall, not while they show it one again.
func TestVariantWallFallsAndIsRememberedAcrossARestart(t *testing.T) {
	reply := func(i int) (string, string) { return blogPost(i) + "?replytocom=1", blogPost(i) }
	learn := func(b *budgetJudge, from int, content Content) {
		for i := from; i < from+wallEvidence; i++ {
			raw, via := reply(i)
			b.Weigh(b.Worth(b.url(raw), via), content, b)
		}
	}
	b := newBudgetJudge(t, 50, 0)
	learn(b, 0, Copy)
	var held []frontier.Item
	for i := 100; i < 100+wallProbe; i++ {
		raw, via := reply(i)
		if b.link(via, raw) == HeldPriority {
			held = append(held, frontier.Item{URL: raw, Via: via, Priority: HeldPriority})
		}
	}
	learn(b, 20, Distinct)
	learn(b, 30, Distinct)
	if len(b.released) != len(held) || len(held) < wallProbe-4 {
		t.Errorf("the wall fell: %d of the %d reply links it held released", len(b.released), len(held))
	}
	for _, copies := range []bool{true, false} {
		b, content := afterRestart(t, held, copies)
		learn(b, 40, content)
		if want := map[bool]int{true: 0, false: len(held)}[copies]; len(b.released) != want {
			t.Errorf("after a restart, copies %v: %d of %d released, want %d", copies, len(b.released), len(held), want)
		}
	}
}

// probeFor lets through one URL in every of a shape's first every, then
// one in twice as many, and so on up to one in every<<maxProbeShift: a
// shape that judges a million URLs is probed some thirty times, and a
// URL probed at a longer period is probed at every shorter one. A wall
// that held 2,000 links lets a few through, and each of them is let
// through again when leased (walled), so that it is asked for.
func TestProbesThinOut(t *testing.T) {
	probes := 0
	for n := range uint64(1_000_000) {
		h := n * 0x9e3779b97f4a7c15 // spread, as a URL's hash is
		if !probeFor(h, n, 50) {
			continue
		}
		probes++
		for shorter := n; shorter > 0; shorter /= 2 {
			if !probeFor(h, shorter, 50) {
				t.Fatalf("hash %d: a probe after %d URLs that is none after %d", h, n, shorter)
			}
		}
	}
	if probes < 10 || probes > 60 {
		t.Errorf("%d probes of a million URLs; want some thirty, not twenty thousand", probes)
	}
	b := newBudgetJudge(t, 50, 0)
	b.fetched(loginPage, wallEvidence, Copy, "")
	var through []string
	for i := range 2000 {
		raw := fmt.Sprintf("http://shop.test/login?next=/p/%d", i)
		if b.link(fmt.Sprintf("http://shop.test/product/%d", i), raw) == frontier.Normal {
			through = append(through, raw)
		}
	}
	if len(through) < 3 || len(through) > 2+15 {
		t.Errorf("%d of 2,000 links into a wall let through; want the first two and a few probes, not one in %d", len(through), wallProbe)
	}
	for i, raw := range through[2:] {
		if why := b.Learnt(b.url(raw), fmt.Sprintf("http://shop.test/product/%d", i), false, false); why != "" {
			t.Errorf("a probe, %s, stopped when leased: %q", raw, why)
		}
	}
}

// afterRestart returns a judge that remembers what a run before held, and
// what its shape's pages show in the new run: copies, or distinct pages.
func afterRestart(t *testing.T, held []frontier.Item, copies bool) (*budgetJudge, Content) {
	b := newBudgetJudge(t, 50, 0)
	b.RememberHeld(held)
	if copies {
		return b, Copy
	}
	return b, Distinct
}

// A page that asked to be neither indexed nor followed (Closed) teaches a
// wall as a copy does: a wiki's edit views, each a distinct page but
// closed, linked from every article, are held after wallEvidence of them.
func TestWallOfClosedPages(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	edit := "http://wiki.test/w/index.php?title=Article_%d&action=edit"
	for i := range wallEvidence {
		w := b.Worth(b.url(fmt.Sprintf(edit, i)), fmt.Sprintf("http://wiki.test/wiki/Article_%d", i))
		b.Weigh(w, Closed, b)
	}
	held := b.linksHeld(func(i int) (string, string) {
		return fmt.Sprintf("http://wiki.test/wiki/Article_%d", i), fmt.Sprintf(edit, i)
	})
	if held < wallProbe-6 || held > wallProbe-2 {
		t.Errorf("%d of %d edit views held after %d closed ones; want all but the first two and a few probes", held, wallProbe, wallEvidence)
	}
}

// toolShape puts together a page's tools: the URLs, without a query,
// whose path names the page that links them.
func TestToolShape(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	for _, c := range []struct{ u, via, want string }{
		{"http://w.test/wiki/Special:WhatLinksHere/Paris", "http://w.test/wiki/Paris", "w.test?/wiki/Special:WhatLinksHere/\x00"},
		{"http://w.test/wiki/Talk:Paris", "http://w.test/wiki/Paris", "w.test?/wiki/Talk:\x00"},
		{"http://w.test/blog/post-a/amp/", "http://w.test/blog/post-a/", "w.test?/blog/\x00/amp/"},
		{"http://w.test/print/12", "http://w.test/a/12", "w.test?/print/\x00"},
		{"http://w.test/wiki/Paris", "http://w.test/wiki/Paris", ""},      // the page itself
		{"http://w.test/wiki/Lyon", "http://w.test/wiki/Paris", ""},       // another page
		{"http://w.test/wiki/NotParis", "http://w.test/wiki/Paris", ""},   // the name not a whole segment
		{"http://w.test/tools/Paris", "http://w.test/wiki/Paris?x=1", ""}, // via has a query
		{"http://w.test/tools/Paris", "http://v.test/wiki/Paris", ""},     // via on another host
		{"http://w.test/tools/", "http://w.test/", ""},                    // via names nothing
		{"http://w.test/tools/Paris", "", ""},                             // no via
		{"http://w.test/docs/intro/", "http://w.test/docs/intro", ""},     // a redirect's target
	} {
		if got := toolShape(b.url(c.u), c.via); got != c.want {
			t.Errorf("%s from %q: %q, want %q", c.u, c.via, got, c.want)
		}
		if h, ok := toolHash(b.url(c.u), c.via); ok != (c.want != "") || ok && hashKey(h) != wallHash(c.want) {
			t.Errorf("%s from %q: the tool's hash is not its shape's", c.u, c.via)
		}
	}
}

// A wiki's tools without a query (/wiki/Special:WhatLinksHere/Paris), each
// a shape of its own, make one wall when wallEvidence of them were closed
// pages: held when linked from the next article, stopped when leased if
// queued before, but for probes; the articles are not held. Tools that
// were copies make none.
func TestWallOfTools(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	tool := "http://wiki.test/wiki/Special:WhatLinksHere/Topic_%s"
	article := "http://wiki.test/wiki/Topic_%s"
	name := func(i int) string { return fmt.Sprintf("%c%c", 'a'+i%26, 'a'+i/26%26) } // words, not numbers
	// Copies are no evidence for a tool's wall: a repository's empty
	// lists of issues read alike, and the lists that are not are pages.
	issues, repo := "http://wiki.test/acme/%s/issues", "http://wiki.test/acme/%s"
	for i := range 2 * wallEvidence {
		b.Weigh(b.Worth(b.url(fmt.Sprintf(issues, name(i))), fmt.Sprintf(repo, name(i))), Copy, b)
	}
	for i := 100; i < 110; i++ {
		if p := b.link(fmt.Sprintf(repo, name(i)), fmt.Sprintf(issues, name(i))); p != frontier.Normal {
			t.Fatalf("a repository's issues after %d copies of others': queued at %v", 2*wallEvidence, p)
		}
	}
	for i := range wallEvidence {
		b.Weigh(b.Worth(b.url(fmt.Sprintf(tool, name(i))), fmt.Sprintf(article, name(i))), Closed, b)
	}
	held := 0
	for i := 100; i < 100+wallProbe; i++ {
		if b.link(fmt.Sprintf(article, name(i)), fmt.Sprintf(tool, name(i))) == HeldPriority {
			held++
		}
		if p := b.link(fmt.Sprintf(article, name(i)), fmt.Sprintf(article, name(i+300))); p != frontier.Normal {
			t.Fatalf("an article linked from another: queued at %v", p)
		}
	}
	if held < wallProbe-6 || held > wallProbe-2 {
		t.Errorf("%d of %d tools held after %d closed ones; want all but the first two and a few probes", held, wallProbe, wallEvidence)
	}
	dropped := 0
	for i := range 500 {
		n := fmt.Sprintf("%s_%d", name(i), i)
		if b.Learnt(b.url(fmt.Sprintf(tool, n)), fmt.Sprintf(article, n), false, false) == HeldCopies {
			dropped++
		}
	}
	if dropped < 470 || dropped == 500 {
		t.Errorf("%d of 500 tools queued before stopped when leased; want all but about one in %d", dropped, wallProbe)
	}
}

// A resumed crawl remembers a page's tool that its wall held under that
// wall, and releases it once wallEvidence distinct tools show the wall no
// longer stands; a calendar's day held by its family's budget, whose path
// names the day that linked it too (/cal/2024/06/01/ from
// /cal/2024/05/01/), is remembered under its family.
func TestToolsHeldAcrossARestart(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	tool := frontier.Item{URL: "http://wiki.test/wiki/Special:WhatLinksHere/Topic_zz", Via: "http://wiki.test/wiki/Topic_zz", Priority: HeldPriority}
	day := frontier.Item{URL: "http://cal.test/cal/2024/06/01/", Via: "http://cal.test/cal/2024/05/01/", Priority: HeldPriority}
	if wallVariant(b.url(day.URL), day.Via) == "" {
		t.Fatal("the day is no tool of the day that linked it: the test tests nothing")
	}
	b.RememberHeld([]frontier.Item{tool, day})
	if !b.budgets.waiting.has(wallKey(wallVariant(b.url(tool.URL), tool.Via))) {
		t.Error("the tool is not remembered under its wall")
	}
	if fam := b.budgets.familyOf(b.url(day.URL)); fam.kind != dateFamily || !b.budgets.waiting.has(fam.key()) {
		t.Errorf("the day is not remembered under its family (%v)", fam)
	}
	for i := range wallEvidence {
		n := fmt.Sprintf("Topic_%c", 'a'+i)
		b.Weigh(b.Worth(b.url("http://wiki.test/wiki/Special:WhatLinksHere/"+n), "http://wiki.test/wiki/"+n), Distinct, b)
	}
	if len(b.released) != 1 || b.released[0].Item.URL != tool.URL {
		t.Errorf("released %v, want the tool", b.released)
	}
}

// A page's print view under a path of its own (/print/N from /node/N), a
// copy of that page (Echo), teaches its tools' wall as a closed page
// does; CopyOf tells an echo from another copy.
func TestWallOfEchoes(t *testing.T) {
	if CopyOf("http://a.test/node/1", "", "http://a.test/node/1") != Echo || CopyOf("http://a.test/node/1", "http://a.test/", "http://a.test/node/1") != Copy ||
		CopyOf("", "", "") != Copy {
		t.Fatal("CopyOf: want Echo for a copy of via only, by the first URL given")
	}
	b := newBudgetJudge(t, 50, 0)
	for i := range wallEvidence {
		b.Weigh(b.Worth(b.url(fmt.Sprintf("http://d.test/print/%d", i)), fmt.Sprintf("http://d.test/node/%d", i)), Echo, b)
	}
	held := b.linksHeld(func(i int) (string, string) {
		return fmt.Sprintf("http://d.test/node/%d", i), fmt.Sprintf("http://d.test/print/%d", i)
	})
	if held < wallProbe-6 || held > wallProbe-2 {
		t.Errorf("%d of %d print views held after %d echoes; want all but the first two and a few probes", held, wallProbe, wallEvidence)
	}
}

// toolShape is the shape whose hash toolHash is.
func toolShape(u canon.URL, via string) string {
	if at, end, ok := toolName(u, via); ok {
		return u.Authority + "?" + u.Path[:at] + "\x00" + u.Path[end:]
	}
	return ""
}

// linksHeld judges wallProbe links, link(i) giving the page and the URL
// it links for i from 100, and returns how many were held.
func (b *budgetJudge) linksHeld(link func(i int) (page, raw string)) (held int) {
	b.t.Helper()
	for i := 100; i < 100+wallProbe; i++ {
		if b.link(link(i)) == HeldPriority {
			held++
		}
	}
	return held
}

// Links into a shape whose pages were a search's results (a news site's
// searches) from its host are queued at Low, behind the host's other
// pages; a shape whose pages are mostly no search is not.
func TestSearchLinksWait(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	search, article := "http://news.test/search?q=name%d", "http://news.test/world/story-%d/"
	tag := "http://news.test/list?tag=t%d"
	for i := range 2 {
		b.Weigh(b.Worth(b.url(fmt.Sprintf(search, i)), fmt.Sprintf(article, i)), Search, b)
		b.Weigh(b.Worth(b.url(fmt.Sprintf(tag, i)), fmt.Sprintf(article, i)), Distinct, b)
	}
	if p := b.link(fmt.Sprintf(article, 7), fmt.Sprintf(search, 100)); p != frontier.Low {
		t.Errorf("a search after two: queued at %v, want Low", p)
	}
	if p := b.link(fmt.Sprintf(search, 1), fmt.Sprintf(search, 101)); p != frontier.Low {
		t.Errorf("a search linked from a search: queued at %v, want Low", p)
	}
	if p := b.link(fmt.Sprintf(article, 7), fmt.Sprintf(tag, 100)); p != frontier.Normal {
		t.Errorf("a tag's list: queued at %v, want Normal", p)
	}
	// The next page of a search's results is its way on; a search ranked
	// as high as a seed waits all the same, under the high front queue.
	paged := "http://news.test/search?q=name%d&page=%d"
	for i := range 2 {
		b.Weigh(b.Worth(b.url(fmt.Sprintf(paged, i, 2)), fmt.Sprintf(paged, i, 1)), Search, b)
	}
	if p := b.link(fmt.Sprintf(paged, 1, 2), fmt.Sprintf(paged, 1, 3)); p != frontier.Normal {
		t.Errorf("a search's next page: queued at %v, want Normal", p)
	}
	if p := b.link(fmt.Sprintf(article, 7), fmt.Sprintf(paged, 9, 2)); p != frontier.Low {
		t.Errorf("a search's second page linked from an article: queued at %v, want Low", p)
	}
	c := Candidate{URL: b.url(fmt.Sprintf(search, 102)), Depth: 2, Priority: frontier.Normal, Rank: 4 * importance.HighRank,
		Via: fmt.Sprintf(article, 7), As: AsPageLink}
	if why, err := b.Admit(c, b.w); why != "" || err != nil {
		t.Fatalf("a search ranked high: %q, %v", why, err)
	}
	if it := b.w.staged[len(b.w.staged)-1]; it.Priority != frontier.Low || it.Rank >= importance.HighRank {
		t.Errorf("a search ranked high: queued at %v, rank %d; want Low, under %d", it.Priority, it.Rank, importance.HighRank)
	}
	// A shape whose pages are no search but for one in wallEvidence: its
	// links wait no more.
	for i := range 2 {
		b.Weigh(b.Worth(b.url(fmt.Sprintf(tag, 10+i)), fmt.Sprintf(article, i)), Search, b)
	}
	if p := b.link(fmt.Sprintf(article, 8), fmt.Sprintf(tag, 101)); p != frontier.Normal {
		t.Errorf("a tag's list, two of four a search's: queued at %v, want Normal", p)
	}
}

// A search's results, leased behind their host's other pages (Worth.Leased
// at Low), make a wall of their shape once wallBarren of them in a row led
// nowhere new; one that led somewhere starts the count again, and those
// leased before (at Normal) tell nothing.
func TestWallOfBarrenSearches(t *testing.T) {
	search, article := "http://news.test/search?q=name%d", "http://news.test/world/story-%d/"
	weigh := func(b *budgetJudge, i int, p frontier.Priority, led bool) {
		w := b.Worth(b.url(fmt.Sprintf(search, i)), fmt.Sprintf(article, i%10))
		w.Leased(p)
		if led {
			w.Admitted(b.url(fmt.Sprintf(article, 1000+i)))
		}
		b.Weigh(w, Search, b)
	}
	asked := 0
	held := func(b *budgetJudge) int {
		asked += wallProbe
		return b.linksHeld(func(i int) (string, string) { return fmt.Sprintf(article, i), fmt.Sprintf(search, asked*1000+i) })
	}
	b := newBudgetJudge(t, 50, 0)
	for i := range 4 * wallBarren {
		weigh(b, i, frontier.Normal, false)
	}
	if n := held(b); n != 0 {
		t.Errorf("%d searches held after %d leased before the host's other pages led nowhere; want none", n, 4*wallBarren)
	}
	for i := range 3 * wallBarren {
		weigh(b, 1000+i, frontier.Low, i%(wallBarren/2) == 0)
	}
	if n := held(b); n != 0 {
		t.Errorf("%d searches held when one in %d led somewhere; want none", n, wallBarren/2)
	}
	// A page of the shape that is no search, distinct, starts the count
	// again too.
	for i := range wallBarren - 1 {
		weigh(b, 1500+i, frontier.Low, false)
	}
	b.Weigh(b.Worth(b.url(fmt.Sprintf(search, 1999)), fmt.Sprintf(article, 1)), Distinct, b)
	weigh(b, 1998, frontier.Low, false)
	if n := held(b); n != 0 {
		t.Errorf("%d searches held after a distinct page of their shape; want none", n)
	}
	for i := range wallBarren {
		p := frontier.Low
		if i%2 == 1 {
			p = frontier.Surplus // held, in a continuous crawl: as late
		}
		weigh(b, 2000+i, p, false)
	}
	if n := held(b); n < wallProbe-6 || n > wallProbe-2 {
		t.Errorf("%d of %d searches held after %d in a row led nowhere; want all but the first two and a few probes", n, wallProbe, wallBarren)
	}
	// One that led somewhere brings the wall down, and releases what it held.
	before := len(b.released)
	weigh(b, 3000, frontier.Low, true)
	weigh(b, 3001, frontier.Low, false)
	if len(b.released) == before {
		t.Error("a search that led somewhere released nothing the wall held")
	}
}

// A shape whose pages were missing (404), wallMissing of them and none
// distinct, is a wall: a template's print view that is no more. One
// distinct page of the shape keeps it from being one (a page's comments,
// missing where it has none); a tool's wall learns nothing of them.
func TestWallOfMissingPages(t *testing.T) {
	print, article := "http://news.test/print.php?article=%d", "http://news.test/world/story-%d/"
	held := func(b *budgetJudge, raw string) int {
		return b.linksHeld(func(i int) (string, string) { return fmt.Sprintf(article, i), fmt.Sprintf(raw, 1000+i) })
	}
	b := newBudgetJudge(t, 50, 0)
	for i := range wallMissing - 1 {
		b.Weigh(b.Worth(b.url(fmt.Sprintf(print, i)), fmt.Sprintf(article, i)), Missing, b)
	}
	if n := held(b, print); n != 0 {
		t.Errorf("%d print views held after %d missing; want none", n, wallMissing-1)
	}
	b.Weigh(b.Worth(b.url(fmt.Sprintf(print, 99)), fmt.Sprintf(article, 99)), Missing, b)
	if n := held(b, "http://news.test/print.php?article=%d&x=1"); n != 0 {
		t.Fatalf("%d URLs of another shape held", n)
	}
	if n := held(b, "http://news.test/print.php?article=2%d"); n < wallProbe-6 || n > wallProbe-2 {
		t.Errorf("%d of %d print views held after %d missing; want all but the first two and a few probes", n, wallProbe, wallMissing)
	}
	comments := "http://news.test/comments?article=%d"
	b = newBudgetJudge(t, 50, 0)
	b.Weigh(b.Worth(b.url(fmt.Sprintf(comments, 0)), fmt.Sprintf(article, 0)), Distinct, b)
	for i := 1; i < 4*wallMissing; i++ {
		b.Weigh(b.Worth(b.url(fmt.Sprintf(comments, i)), fmt.Sprintf(article, i)), Missing, b)
	}
	if n := held(b, comments); n != 0 {
		t.Errorf("%d pages of comments held after one was a page; want none", n)
	}
	tool := "http://news.test/world/story-%d/pdf"
	for i := 200; i < 200+4*wallMissing; i++ {
		b.Weigh(b.Worth(b.url(fmt.Sprintf(tool, i)), fmt.Sprintf(article, i)), Missing, b)
	}
	if n := b.linksHeld(func(i int) (string, string) { return fmt.Sprintf(article, i), fmt.Sprintf(tool, i) }); n != 0 {
		t.Errorf("%d tools held after %d were missing; want none", n, 4*wallMissing)
	}
	if !Missed(404) || !Missed(410) || Missed(403) || Missed(429) || Missed(408) || Missed(500) || Missed(200) {
		t.Error("Missed: want 404 and 410 only")
	}
}
