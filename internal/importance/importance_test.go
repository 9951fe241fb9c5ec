package importance

import (
	"strconv"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/seen"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func k(s string) seen.Key { return seen.KeyOf("http://" + s) }

// A page hands out one Unit plus what its in-links gave it, over its
// distinct links, a link to another host weighing CrossHost times a link
// within it; a link named twice counts once.
func TestCreditSplitsThePageCash(t *testing.T) {
	e := New(1<<20, 1000)
	v := NewVotes()
	v.Add(k("a.test/1"), SameHost)
	v.Add(k("a.test/2"), SameHost)
	v.Add(k("a.test/2"), SameHost) // twice on the page: one vote
	v.Add(k("b.test/"), OtherHost)
	if v.Len() != 3 {
		t.Fatalf("%d votes, want 3", v.Len())
	}
	e.Credit(k("a.test/"), v)
	// Weights 1 + 1 + 4: a share is Unit/6.
	share := uint32(Unit / 6)
	for u, want := range map[string]uint32{"a.test/1": share, "a.test/2": share, "b.test/": CrossHost * share} {
		if r, _, ok := v.Of(k(u)); !ok || r != want || e.Cash(k(u)) != want {
			t.Errorf("%s: credited %d (cash %d), want %d", u, r, e.Cash(k(u)), want)
		}
	}
	if _, _, ok := v.Of(k("c.test/")); ok {
		t.Error("a URL the page did not vote for has a vote")
	}
	// b.test/ now hands out more than a page nobody links to.
	if hb, hn := e.Handout(k("b.test/")), e.Handout(k("n.test/")); hb != Unit+CrossHost*share || hn != Unit {
		t.Errorf("handouts %d and %d, want %d and %d", hb, hn, Unit+CrossHost*share, Unit)
	}
}

// The important pages are those linked from many pages, and from
// important ones: a page's cash orders the URLs as a backlink count
// weighted by the linking pages' own cash does.
func TestLinksFromImportantPagesCountMore(t *testing.T) {
	e := New(1<<20, 1000)
	credit := func(from string, to ...string) {
		v := NewVotes()
		for _, u := range to {
			v.Add(k(u), OtherHost)
		}
		e.Credit(k(from), v)
	}
	// hub is linked from twenty pages; deep from the hub only; plain
	// from one page nobody links to. Each page links to two.
	for i := range 20 {
		credit("p"+strconv.Itoa(i)+".test/", "hub.test/", "x"+strconv.Itoa(i)+".test/")
	}
	credit("hub.test/", "deep.test/", "y.test/")
	credit("q.test/", "plain.test/", "z.test/")
	if !(e.Cash(k("hub.test/")) > e.Cash(k("deep.test/")) && e.Cash(k("deep.test/")) > e.Cash(k("plain.test/"))) {
		t.Errorf("cash hub %d, deep %d, plain %d: want hub > deep > plain", e.Cash(k("hub.test/")), e.Cash(k("deep.test/")), e.Cash(k("plain.test/")))
	}
}

// A URL is promoted (queued again) when its estimate crosses a power of
// two from promoteFrom on, not at every credit.
func TestPromoteOnlyWhenTheEstimateDoubles(t *testing.T) {
	e := New(1<<20, 1000)
	target := k("t.test/")
	promotions, credits := 0, 0
	for i := range 400 {
		v := NewVotes()
		v.Add(target, OtherHost)
		e.Credit(k("p.test/"+strconv.Itoa(i)), v) // each hands it Unit
		credits++
		r, promote, _ := v.Of(target)
		if promote {
			promotions++
			if r < promoteFrom {
				t.Errorf("promoted at %d, below %d", r, promoteFrom)
			}
		}
	}
	// 400 Units = 102,400: the first credit (0 to 256) and then each
	// power of two crossed, 512, 1,024, ..., 65,536: nine.
	if promotions != 9 {
		t.Errorf("%d promotions in %d credits, want 9", promotions, credits)
	}
}

// The priors are weak: the depth prior favours a shallower link by less
// than a link from another host's page of a hundred links weighs; a
// sitemap's <priority> and recent <lastmod> add a few in-links' worth.
func TestPriorsAreWeak(t *testing.T) {
	oneCross := uint32(Unit / 100 * CrossHost)
	if d1, d5 := Rank(0, 1), Rank(0, 5); d1 <= d5 || d1-d5 >= oneCross {
		t.Errorf("depth prior 1 hop %d, 5 hops %d: want shallower higher by less than one cross-host in-link (%d)", d1, d5, oneCross)
	}
	if Rank(oneCross, 9) <= Rank(0, 1) {
		t.Error("one cross-host in-link does not beat the depth prior")
	}
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	hi, def, none := Listed(1, time.Time{}, now), Listed(0.5, time.Time{}, now), Listed(-1, time.Time{}, now)
	fresh, future := Listed(0.5, now.Add(-time.Hour), now), Listed(0.5, now.Add(48*time.Hour), now)
	if !(hi > def && def == none && fresh > def && future == def) {
		t.Errorf("listed priors: priority 1 %d, 0.5 %d, none %d, fresh %d, future lastmod %d", hi, def, none, fresh, future)
	}
	if Rank(^uint32(0)-1, 1) != ^uint32(0) {
		t.Error("a rank near the top wraps")
	}
	if Priority(HighRank, frontier.Normal) != frontier.High || Priority(HighRank-1, frontier.Normal) != frontier.Normal || Priority(0, frontier.High) != frontier.High {
		t.Error("front queue by rank wrong")
	}
}

// Votes are reused from page to page; a map grown past what is kept is
// let go.
func TestVotesReset(t *testing.T) {
	v := NewVotes()
	for i := range 10 {
		v.Add(k("a.test/"+strconv.Itoa(i)), LinkKind(i%3))
	}
	m := v.m
	v.Reset(100)
	if v.Len() != 0 || v.same != 0 || v.cross != 0 || v.variant != 0 || len(m) != 0 {
		t.Fatalf("after Reset: %d votes, %d same, %d cross, %d variants", v.Len(), v.same, v.cross, v.variant)
	}
	for i := range 10 {
		v.Add(k("a.test/"+strconv.Itoa(i)), SameHost)
	}
	v.Reset(5)
	v.Add(k("b.test/"), SameHost)
	if _, kept := m[k("b.test/")]; kept || v.Len() != 1 {
		t.Error("a map past the bound was kept")
	}
	var nilVotes *Votes
	if _, _, ok := nilVotes.Of(k("a.test/")); ok {
		t.Error("a page without votes has one")
	}
}

// A URL fetched is not promoted however its estimate rises: it is not
// queued. So says a page that handed out its cash, and one that had none
// to hand out (a redirect, an error, a file that is not HTML).
func TestFetchedPageNotPromoted(t *testing.T) {
	e := New(1<<20, 1000)
	nav, redirect := k("a.test/nav"), k("a.test/r/1")
	e.Credit(nav, NewVotes()) // fetched, its links not followed
	e.Fetched(redirect)
	for i := range 100 {
		v := NewVotes()
		v.Add(nav, SameHost)
		v.Add(redirect, SameHost)
		v.Add(k("a.test/new"+strconv.Itoa(i)), SameHost)
		e.Credit(k("a.test/p"+strconv.Itoa(i)), v)
		if _, promote, _ := v.Of(nav); promote {
			t.Fatalf("the fetched page promoted at its %dth in-link", i+1)
		}
		if _, promote, _ := v.Of(redirect); promote {
			t.Fatalf("the fetched redirect promoted at its %dth in-link", i+1)
		}
		if _, promote, _ := v.Of(k("a.test/new" + strconv.Itoa(i))); !promote {
			t.Fatalf("a page not fetched, credited half a unit, not promoted")
		}
	}
}

// A boost multiplies a rank, rounded and held at the largest rank rather
// than wrapped; a factor of 1, or none, leaves it; a boost strong enough
// takes a one-hop link, worth its depth prior alone, to the high queue.
func TestBoost(t *testing.T) {
	for _, tc := range []struct {
		r    uint32
		f    float64
		want uint32
	}{
		{8, 1, 8}, {8, 4, 32}, {8, 0.5, 4}, {8, 0.01, 0}, {3, 0.5, 2}, {0, 1000, 0},
		{1 << 31, 4, ^uint32(0)}, {^uint32(0), 1000, ^uint32(0)}, {100, 0, 100}, {100, -2, 100},
	} {
		if got := Boost(tc.r, tc.f); got != tc.want {
			t.Errorf("Boost(%d, %v) = %d, want %d", tc.r, tc.f, got, tc.want)
		}
	}
	link := Rank(0, 1)
	if Priority(Boost(link, 31), frontier.Normal) != frontier.Normal || Priority(Boost(link, 32), frontier.Normal) != frontier.High {
		t.Errorf("a one-hop link of rank %d: boosted 31 times %d, 32 times %d; want HighRank %d between", link, Boost(link, 31), Boost(link, 32), HighRank)
	}
}

// Explain's parts add up, boosted, to the rank the crawl queues a URL
// with: Rank plus Listed, times the boost.
func TestExplain(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	listed := Listed(1, now.Add(-time.Hour), now)
	e := Explain(40, 2, listed, 2.5)
	if e.Cash != 40 || e.Depth != DepthPrior(2) || e.Sitemap != 64 || e.Boost != 2.5 {
		t.Errorf("parts %+v", e)
	}
	if want := Boost(Rank(40, 2)+listed, 2.5); e.Rank != want || want != uint32(2.5*(40+4+64)) {
		t.Errorf("rank %d, want %d", e.Rank, want)
	}
	if e := Explain(^uint32(0)-1, 1, 64, 1); e.Rank != ^uint32(0) {
		t.Errorf("the sum wraps: %+v", e)
	}
}

func TestListedIf(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if ListedIf(false, 1, now, now) != 0 || ListedIf(true, 1, now, now) != Listed(1, now, now) {
		t.Error("ListedIf: a page no sitemap lists has a sitemap prior, or one listed has not Listed's")
	}
}

// TestVariantsWeighAQuarter: a listing's links to its own variants that
// set a word (a filter, a sort order) weigh a quarter of its other links;
// its next page, a variant that sets a number, and its products weigh
// one, other hosts CrossHost. A page without variants splits its cash as
// before they were weighed.
func TestVariantsWeighAQuarter(t *testing.T) {
	c := canon.New(canon.Config{})
	u := func(s string) canon.URL {
		x, err := c.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	page := u("http://127.0.0.1/shop?cat=2&color=red")
	for _, tc := range []struct {
		link string
		want LinkKind
	}{
		{"http://127.0.0.1/shop?cat=2&color=red&size=m", Variant},     // one more filter
		{"http://127.0.0.1/shop?cat=2&color=blue", Variant},           // another value
		{"http://127.0.0.1/shop?cat=2&color=red&sort=price", Variant}, // a sort order
		{"http://127.0.0.1/shop?cat=2&color=red&page=2", SameHost},    // the next page
		{"http://127.0.0.1/shop?cat=3", SameHost},                     // another category: a number, a filter dropped
		{"http://127.0.0.1/shop", SameHost},                           // no query
		{"http://127.0.0.1/product/7?color=red", SameHost},            // another path
		{"https://127.0.0.1/shop?cat=2&color=red&size=m", SameHost},   // another scheme: another family
		{"http://127.0.0.2/shop?cat=2&color=red&size=m", OtherHost},   // another host
		{"http://127.0.0.1/shop?cat=2&color=red&q=", Variant},         // an empty value is no number
	} {
		if got := KindOf(page, u(tc.link)); got != tc.want {
			t.Errorf("%s on %s: %d, want %d", tc.link, page.String, got, tc.want)
		}
	}

	e := New(1<<16, 1000)
	v := NewVotes()
	for i := range 12 {
		v.Add(k("127.0.0.1/shop?facet="+strconv.Itoa(i)), Variant)
	}
	v.Add(k("127.0.0.1/shop?page=2"), SameHost)
	v.Add(k("127.0.0.1/product/1"), SameHost)
	v.Add(k("127.0.0.2/"), OtherHost)
	e.Credit(k("127.0.0.1/shop"), v)
	variant, _, _ := v.Of(k("127.0.0.1/shop?facet=0"))
	next, _, _ := v.Of(k("127.0.0.1/shop?page=2"))
	other, _, _ := v.Of(k("127.0.0.2/"))
	// 12 quarters, 2 x 4 and 16: 36 quarters of the page's 256.
	if variant != 256/36 || next != 4*256/36 || other != CrossHost*next {
		t.Errorf("a variant got %d, the next page %d, another host %d; want %d, %d, %d", variant, next, other, 256/36, 4*256/36, CrossHost*4*256/36)
	}
	if sum := 12*variant + 2*next + other; sum > Unit {
		t.Errorf("handed out %d, more than the page's %d", sum, Unit)
	}
}
