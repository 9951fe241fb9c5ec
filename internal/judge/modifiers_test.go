package judge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/store"
)

var (
	pfColors = []string{"color-red", "color-blue", "color-green", "color-black", "color-white"}
	pfSizes  = []string{"size-38", "size-40", "size-42", "size-44", "size-46", "size-48"}
)

// pathShop has b discover a shop of cats categories whose facets are in
// the path, as a crawl finds it: the front page links each category, a
// category its listing's next page, a product and a facet of each value;
// a colour's page links a size of each value and its next pages, a size's
// page a colour of each value (in the order clicked).
func pathShop(b *budgetJudge, cats int) {
	b.t.Helper()
	for c := range cats {
		cat := fmt.Sprintf("http://pf.test/c/cat%d/", c)
		b.link("http://pf.test/", cat)
		b.link(cat, cat+"page-2/")
		b.link(cat, fmt.Sprintf("http://pf.test/p/cat%d-1/", c))
		for _, v := range append(pfColors, pfSizes...) {
			b.link(cat, cat+v+"/")
		}
		b.link(cat, cat+"page-3/")
		for _, c := range pfColors {
			for _, v := range append(pfSizes, "page-2", "page-3") {
				b.link(cat+c+"/", cat+c+"/"+v+"/")
			}
		}
		for _, s := range pfSizes {
			for _, v := range pfColors {
				b.link(cat+s+"/", cat+s+"/"+v+"/")
			}
		}
	}
}

// The segments a host appends after many others, next to another that
// is (a facet's values, which stack), are its modifiers, and the paths
// that differ only in them are one family: every facet page of a
// category, its listing's next pages among them. A category, a product,
// another category's facets are not of it. A directory's trades, which
// follow every city, and versioned documentation's pages, which follow
// every version, stack with nothing but endings that follow everything
// (/plumbers/page-2/, never /page-2/plumbers/): no family.
func TestPathModifiers(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	if f := b.budgets.familyOf(b.url("http://pf.test/c/cat1/color-red/")); !f.none() {
		t.Fatalf("before anything is learnt: family %v", f)
	}
	pathShop(b, 10)
	fam := func(raw string) family { return b.budgets.familyOf(b.url(raw)) }
	one := fam("http://pf.test/c/cat1/color-red/")
	if one.kind != pathFamily {
		t.Fatalf("a facet page: family %v, want a path family", one)
	}
	for _, raw := range []string{"http://pf.test/c/cat1/size-42/", "http://pf.test/c/cat1/color-red/size-42/",
		"http://pf.test/c/cat1/size-42/color-red/", "http://pf.test/c/cat1/color-blue/size-38/color-red/"} {
		if f := fam(raw); f != one {
			t.Errorf("%s: family %v, want the category's facets' %v", raw, f, one)
		}
	}
	for _, raw := range []string{"http://pf.test/c/cat1/", "http://pf.test/p/cat1-1/", "http://pf.test/c/cat2/color-red/",
		"https://pf.test/c/cat1/color-red/", "http://other.test/c/cat1/color-red/", "http://pf.test/c/cat1/color-red?sort=price"} {
		if f := fam(raw); f == one {
			t.Errorf("%s: of the category's facets' family", raw)
		}
	}
	if f := fam("http://pf.test/c/cat1/"); !f.none() {
		t.Errorf("the category's own page: family %v, want none", f)
	}

	d := newBudgetJudge(t, 50, 0)
	for c := range 10 {
		for _, trade := range []string{"plumbers", "electricians", "roofers", "painters", "movers", "cleaners", "glaziers", "tilers", "bakers"} {
			list := fmt.Sprintf("http://dir.test/us/ca/city%d/%s/", c, trade)
			d.link(fmt.Sprintf("http://dir.test/us/ca/city%d/", c), list)
			d.link(list, list+"page-2/") // endings that follow everything, and come after the trade only
			d.link(list, list+"page-3/")
		}
		for _, page := range []string{"install", "config", "faq", "api"} {
			d.link(fmt.Sprintf("http://dir.test/docs/v%d/", c), fmt.Sprintf("http://dir.test/docs/v%d/%s/", c, page))
		}
		d.link(fmt.Sprintf("http://dir.test/category/news%d/", c), fmt.Sprintf("http://dir.test/category/news%d/page/2/", c))
	}
	for _, raw := range []string{"http://dir.test/us/ca/city3/roofers/", "http://dir.test/docs/v3/faq/", "http://dir.test/category/news3/page/2/"} {
		if f := d.budgets.familyOf(d.url(raw)); !f.none() {
			t.Errorf("%s: family %v, want none", raw, f)
		}
	}
	for _, seg := range []string{"plumbers", "roofers", "city3", "page-2", "v3", "faq", "news3"} {
		if d.budgets.mods.learntHash(segHash(hostHash("dir.test"), seg)) {
			t.Errorf("%s: a modifier", seg)
		}
	}
}

// A category's facet pages, linked from one another, spend their
// family's budget and are held past it (HeldPath); the category's own
// links into its facets are in-links, queued as usual, and so is the
// next page of a listing, or a numeric facet's next value (up to
// maxNamed budgets' worth).
func TestPathFamilyBudget(t *testing.T) {
	b := newBudgetJudge(t, 5, 0)
	pathShop(b, 10)
	const cat = "http://pf.test/c/cat11/" // a category met after its host's modifiers were learnt
	page := cat + "color-green/"
	before := b.Held()[HeldPath]
	normal := 0
	for _, v := range pfSizes {
		for _, more := range []string{"color-red/", "color-blue/"} {
			if b.link(page, page+v+"/"+more) == frontier.Normal {
				normal++
			}
		}
	}
	if normal != 5 {
		t.Errorf("%d of 12 facet links of a facet page queued as usual, want the budget of 5", normal)
	}
	if got := b.Held()[HeldPath] - before; got != 7 {
		t.Errorf("%d more held for %s, want 7", got, HeldPath)
	}
	if p := b.link(cat, cat+"size-44/color-blue/"); p != frontier.Normal {
		t.Errorf("a facet linked from its category's page: queued at %v, want %v", p, frontier.Normal)
	}
	if p := b.link(page+"page-2/", page+"page-3/"); p != frontier.Normal {
		t.Errorf("a facet's next page: queued at %v, want %v", p, frontier.Normal)
	}
	if p := b.link(cat+"color-white/size-46/", cat+"color-white/size-48/"); p != frontier.Normal {
		t.Errorf("a numeric facet's next value: queued at %v, want %v", p, frontier.Normal)
	}
	// Another category's facets have a budget of their own.
	if p := b.link("http://pf.test/c/cat12/color-green/", "http://pf.test/c/cat12/color-green/size-46/"); p != frontier.Normal {
		t.Errorf("another category's facet: queued at %v", p)
	}

	// A resumed crawl knows the modifiers, so the family of what it held.
	db, err := store.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := b.SaveCounts(db); err != nil {
		t.Fatal(err)
	}
	r := newBudgetJudge(t, 5, 0)
	if err := r.LoadCounts(db); err != nil {
		t.Fatal(err)
	}
	if f, want := r.budgets.familyOf(r.url(page)), b.budgets.familyOf(b.url(page)); f != want || f.kind != pathFamily {
		t.Errorf("resumed: family %v, want %v", f, want)
	}
	if n := r.RememberHeld([]frontier.Item{{URL: page + "size-48/page-2/", Via: page, Priority: HeldPriority}}); n != 1 {
		t.Errorf("resumed: %d held URLs remembered, want 1", n)
	}
}

// The next page of a listing whose pages are in its path: one segment's
// number changed, and nothing else.
func TestNextInPath(t *testing.T) {
	b := newBudgetJudge(t, 5, 0)
	for _, c := range []struct {
		via, u string
		want   bool
	}{
		{"http://a.test/c/shoes/page-2/", "http://a.test/c/shoes/page-3/", true},
		{"http://a.test/c/shoes/page-9/", "http://a.test/c/shoes/page-10/", true},
		{"http://a.test/c/shoes/page-12/", "http://a.test/c/shoes/page-13/", true},
		{"http://a.test/c/shoes/red/page/2/", "http://a.test/c/shoes/red/page/3/", true},
		{"http://a.test/c/shoes/p2.html", "http://a.test/c/shoes/p3.html", true},
		{"http://a.test/c/shoes/", "http://a.test/c/shoes/page-2/", false},                         // a segment added
		{"http://a.test/c/shoes/color-red/", "http://a.test/c/shoes/color-blue/", false},           // a word changed
		{"http://a.test/c/shoes/page-2/", "http://a.test/c/boots/page-3/", false},                  // two segments changed
		{"http://a.test/c/shoes/page-2/", "http://a.test/c/shoes/page-3/?sort=1", false},           // a query
		{"http://a.test/c/shoes/page-2/", "http://a.test/c/shoes/page-2/", false},                  // the same
		{"http://a.test/s/1700000000/", "http://a.test/s/1700000001/", false},                      // a timestamp
		{"http://b.test/c/shoes/page-2/", "http://a.test/c/shoes/page-3/", false},                  // another host
		{"http://a.test/c/shoes-2/page-2/", "http://a.test/c/shoes-3/page-2/", true},               // one number changed
		{"http://a.test/c/shoes/page-2/color-red/", "http://a.test/c/shoes/page-3/size-1/", false}, // and a word
	} {
		if got := nextInPath(b.url(c.u), c.via); got != c.want {
			t.Errorf("%s from %s: next %v, want %v", c.u, c.via, got, c.want)
		}
	}
}

// Filters written as a name and a value (/c/cat1/color/red/size/42/, as
// some shops write them) stack as pairs: a pair is a unit, its value a
// word or a number, and the facet pages of a category are one family
// whatever the order clicked. Pairs of a site that does not stack them
// are not learnt: a blog's year and month, documentation's language,
// version and page.
func TestPathModifierPairs(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	colors := []string{"color/red", "color/blue", "color/green", "color/black", "color/white"}
	sizes := []string{"size/38", "size/40", "size/42", "size/44", "size/46", "size/48"}
	for c := range 10 {
		cat := fmt.Sprintf("http://nv.test/c/cat%d/", c)
		b.link("http://nv.test/", cat)
		for _, v := range append(slices.Clone(colors), sizes...) {
			b.link(cat, cat+v+"/")
		}
		for _, col := range colors {
			for _, s := range sizes {
				b.link(cat+col+"/", cat+col+"/"+s+"/")
				b.link(cat+s+"/", cat+s+"/"+col+"/")
			}
		}
	}
	fam := func(raw string) family { return b.budgets.familyOf(b.url(raw)) }
	one := fam("http://nv.test/c/cat1/color/red/")
	if one.kind != pathFamily {
		t.Fatalf("a facet page: family %v, want a path family", one)
	}
	for _, raw := range []string{"http://nv.test/c/cat1/size/42/", "http://nv.test/c/cat1/color/red/size/42/", "http://nv.test/c/cat1/size/42/color/red/"} {
		if f := fam(raw); f != one {
			t.Errorf("%s: family %v, want the category's facets' %v", raw, f, one)
		}
	}
	for _, raw := range []string{"http://nv.test/c/cat1/", "http://nv.test/c/cat2/color/red/", "http://nv.test/p/cat1-1/"} {
		if f := fam(raw); f == one {
			t.Errorf("%s: of the category's facets' family", raw)
		}
	}

	d := newBudgetJudge(t, 50, 0)
	for y := range 10 {
		for m := 1; m <= 12; m++ {
			month := fmt.Sprintf("http://blog.test/%d/%02d/", 2010+y, m)
			d.link(fmt.Sprintf("http://blog.test/%d/", 2010+y), month)
			d.link(month, month+fmt.Sprintf("post-%d-%d/", y, m))
		}
	}
	for _, lang := range []string{"en", "de", "fr", "es", "it", "nl", "pt", "ja", "ko"} {
		for v := range 9 {
			for _, page := range []string{"install", "config", "faq", "api"} {
				d.link(fmt.Sprintf("http://docs.test/%s/v%d/", lang, v), fmt.Sprintf("http://docs.test/%s/v%d/guide/%s/", lang, v, page))
			}
		}
	}
	for _, raw := range []string{"http://blog.test/2013/05/post-3-5/", "http://docs.test/de/v3/guide/faq/", "http://docs.test/de/v3/"} {
		if f := d.budgets.familyOf(d.url(raw)); f.kind == pathFamily {
			t.Errorf("%s: a path family", raw)
		}
	}
}

// A pair is no unit when its name is a page of its own: a code forge's
// trees (/owner/repo/tree/main/src/lib/) learn no pair. A segment learnt
// alone that is also a pair's name leaves the family with its value. A
// path whose last segment is empty (/a//) teaches nothing.
func TestPathModifierPairsApart(t *testing.T) {
	names := []string{"src", "lib", "docs", "test", "cmd", "internal", "pkg", "api", "web", "scripts",
		"tools", "examples", "assets", "config", "build", "vendor", "util", "core", "app", "data"}
	b := newBudgetJudge(t, 50, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	for r := range 1000 {
		dir := fmt.Sprintf("http://forge.test/o%d/repo/tree/main/", r)
		for _, i := range rng.Perm(len(names))[:6] { // a path down the repository's tree
			next := dir + names[i] + "/"
			b.link(dir, next)
			dir = next
		}
	}
	if note, _ := b.budgets.mods.hosts.Peek("forge.test"); note&hostPairs != 0 {
		t.Error("a code forge's trees: a pair learnt")
	}

	m := newModifiers(100, 1)
	h := hostHash("shop.test")
	for _, k := range []uint64{segHash(h, "sale"), pairHash(h, "sale", "yes")} {
		m.learnt.Update(hashKey(k), func(bool) bool { return true })
	}
	m.any.Store(true)
	m.hosts.Update("shop.test", func(uint8) uint8 { return hostModifiers | hostPairs })
	if a, b := m.family("http", "shop.test", "/c/hats/sale/yes/"), m.family("http", "shop.test", "/c/hats/sale/"); a.none() || a != b {
		t.Errorf("a pair whose name is a modifier too: family %v, want %v's", a, b)
	}

	if _, n := lastSegs("/x/a//"); n != 0 {
		t.Errorf("/x/a//: %d segments, want none", n)
	}
	if segs, n := lastSegs("/a/b/c/d/e/"); n != 4 || segs != [4]string{"b", "c", "d", "e"} {
		t.Errorf("/a/b/c/d/e/: %v %d", segs, n)
	}
	if segs, n := lastSegs("/x"); n != 1 || segs[3] != "x" {
		t.Errorf("/x: %v %d", segs, n)
	}
}

// Only the hosts that learnt modifiers have their paths looked at, segment
// by segment: another host's path is of no family at once. The hosts are
// kept with the modifiers; a store of an older build, which kept no hosts,
// has every host's paths looked at.
func TestPathModifierHosts(t *testing.T) {
	b := newBudgetJudge(t, 50, 0)
	pathShop(b, 10)
	m := b.budgets.mods
	if note, ok := m.hosts.Peek("pf.test"); !ok || note&hostModifiers == 0 || m.hosts.Len() != 1 {
		t.Fatalf("hosts with modifiers: pf.test %v %v, %d in all", note, ok, m.hosts.Len())
	}
	const facet = "/c/cat1/color-red/"
	want := m.family("http", "pf.test", facet)
	for _, c := range []struct {
		name string
		read func(*modifiers)
	}{
		{"with its hosts", func(r *modifiers) { r.unmarshalHosts(m.marshalHosts(), true) }},
		{"of an older build", func(r *modifiers) { r.unmarshalHosts(nil, false) }},
	} {
		r := newModifiers(100, 1)
		if err := r.unmarshal(m.marshal()); err != nil {
			t.Fatal(err)
		}
		c.read(r)
		if got := r.family("http", "pf.test", facet); got != want || got.none() {
			t.Errorf("read back %s: family %v, want %v", c.name, got, want)
		}
		if got := r.family("http", "other.test", facet); !got.none() {
			t.Errorf("read back %s: another host's path of family %v", c.name, got)
		}
	}
}

// BenchmarkFamilyOtherHost is what a path of a host without modifiers
// costs once another host learnt some: one look-up (gated), or one for
// every segment and pair (every host looked at, as a store of an older
// build reads back).
func BenchmarkFamilyOtherHost(b *testing.B) {
	m := newModifiers(100, 1)
	h := hostHash("shop.test")
	for _, k := range []uint64{segHash(h, "sale"), pairHash(h, "color", "red")} {
		m.learnt.Update(hashKey(k), func(bool) bool { return true })
	}
	m.any.Store(true)
	m.hosts.Update("shop.test", func(uint8) uint8 { return hostModifiers | hostPairs })
	for _, legacy := range []bool{false, true} {
		b.Run(fmt.Sprintf("every-host-%v", legacy), func(b *testing.B) {
			m.legacy.Store(legacy)
			for b.Loop() {
				m.family("https", "news.test", "/world/europe/2026/a-long-article-slug/")
			}
		})
	}
}
