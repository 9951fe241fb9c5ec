package neardup

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/extract"
	"github.com/weft-crawler/weft/internal/state"
	"github.com/weft-crawler/weft/internal/store"
)

// TestNearDuplicateListingOtherThings: a near-duplicate whose links are
// its original's, however written (absolute or relative, with a session
// in the query or in the path, a facet's query, a fragment), is a copy;
// one that links to two or more things its original does not (a
// listing's next page, in its template's words) lists other things; and
// against an original an older weft kept, with no links, every
// near-duplicate does.
func TestNearDuplicateListingOtherThings(t *testing.T) {
	d, n, judgeLinks := newJudging(t)
	nav := []string{"/", "/about", "/c/shoes", "/c/hats", "../help/faq.html", "https://shop.test/cart"}
	page := func(items ...string) []string { return append(slices.Clone(nav), items...) }
	items := func(from, to int, format string) (out []string) {
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprintf(format, i))
		}
		return out
	}
	judge := func(fp uint64, url string, hrefs []string) Verdict {
		t.Helper()
		links := make([]extract.Link, len(hrefs))
		for i, h := range hrefs {
			links[i] = extract.Link{URL: h, Tag: "a"}
		}
		return judgeLinks(fp, url, links)
	}
	const fp = 0x0123_4567_89ab_cdef
	if v := judge(fp, "http://shop.test/c/shoes", page(items(1, 4, "/item/%d")...)); v.Of != "" {
		t.Fatalf("the first page: %+v", v)
	}
	for i, c := range []struct {
		links []string
		want  bool
	}{
		{page(items(1, 4, "/item/%d")...), false},
		{page(items(1, 4, "https://shop.test/item/%d?utm_source=mail#reviews")...), false},
		{page(items(1, 4, "//shop.test/./item/%d")...), false},
		{page(items(1, 4, "/item/%d;jsessionid=a81f3c9e0b7d4e2f")...), false},
		{page(items(1, 4, "/item/%d?sid=a81f3c9e0b7d4e2f9a6c5b1d3e8f7a20")...), false},
		{page(items(1, 3, "/item/%d")...), false},                       // a print view, fewer links
		{page(append(items(1, 4, "/item/%d"), "/item/9")...), false},    // one more link: a changed box
		{page(items(5, 8, "/item/%d")...), true},                        // the next page of the listing
		{page(items(1, 4, "/c/shoes?page=%d&color=red")...), false},     // facets of one path
		{append(items(1, 4, "/item/%d"), "/item/10", "/item/11"), true}, // two links of its own
	} {
		v := judge(fp^uint64(1)<<(i%8), fmt.Sprintf("http://shop.test/c/shoes?v=%d", i), c.links)
		if v.Of != "http://shop.test/c/shoes" || v.NewLinks != c.want {
			t.Errorf("copy %d (%v): %+v, want a copy of the first page, new links %v", i, c.links[len(nav):], v, c.want)
		}
	}
	// A calendar whose every day is the same story: the next days are of
	// the page's own pattern, nothing else.
	const day = 0x1111_2222_3333_4444
	if v := judge(day, "http://cal.test/day/5", []string{"/", "/day/6", "/day/12", "/day/11"}); v.Of != "" {
		t.Fatalf("the first day: %+v", v)
	}
	if v := judge(day^1, "http://cal.test/day/6", []string{"/", "/day/7", "/day/13", "/day/13"}); v.Of == "" || v.NewLinks {
		t.Errorf("the next day: %+v, want a copy, links and all", v)
	}
	if v := judge(day^2, "http://cal.test/day/7", []string{"/", "/day/8", "/event/3", "/event/4"}); v.Of == "" || !v.NewLinks {
		t.Errorf("a day listing two events: %+v, want new links", v)
	}
	// A session in a segment of the path: one link whatever its id.
	a, _ := linkKeys("/s/a81f3c9e0b7d4e2f9a6c5b1d3e8f7a20/item/1", nil)
	b, _ := linkKeys("http://shop.test/s/0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a/item/1", nil)
	if a != b {
		t.Error("one link under two session ids in its path counts as two")
	}
	// What a page listing other things linked to joins its original's: a
	// copy of the listing's second page is a copy of it, links and all.
	if v := judge(fp^0b101, "http://shop.test/c/shoes?page=2&print=1", page(items(5, 8, "/item/%d")...)); v.Of == "" || v.NewLinks {
		t.Errorf("a print view of the second page: %+v, want a copy, links and all", v)
	}
	// A shop whose menus run to hundreds of links: the items after them
	// count all the same.
	menu := items(1, 300, "/c/dept-%d")
	if v := judge(0x9696_6969_9696_6969, "http://big.test/c/1", append(slices.Clone(menu), items(1, 4, "/item/%d")...)); v.Of != "" {
		t.Fatalf("a big shop's first page: %+v", v)
	}
	if v := judge(0x9696_6969_9696_6968, "http://big.test/c/1?page=2", append(slices.Clone(menu), items(5, 8, "/item/%d")...)); !v.NewLinks {
		t.Errorf("a big shop's second page: %+v, want new links after its 300 menu links", v)
	}
	// A listing page fetched again (a recrawl), one whose links are not
	// followed, and one nearer the seeds than its original are compared,
	// and vouch for nothing.
	vouched := func() int { return n.listings["http://shop.test/c/shoes"].listed }
	before := vouched()
	for _, c := range []struct {
		depth           int
		follow, refetch bool
	}{{1, true, true}, {1, false, false}, {0, true, false}} {
		pb := d.NewBatch()
		links := []extract.Link{{URL: "/item/40"}, {URL: "/item/41"}}
		if v, err := n.Judge(fp^0b1001, links, "http://shop.test/c/shoes?page=11", c.depth, c.follow, c.refetch, pb.Batch); err != nil || !v.NewLinks {
			t.Errorf("%+v: %+v, %v; want new links", c, v, err)
		}
		if vouched() != before {
			t.Errorf("%+v: the original vouched for %d pages, want %d", c, vouched(), before)
		}
	}
	// An original vouches for maxListed near-duplicates listing other
	// things; past that they are copies, links and all.
	const cal = 0x3c3c_3c3c_c3c3_c3c3
	if v := judge(cal, "http://cal.test/day/0", []string{"/week/0", "/week/1"}); v.Of != "" {
		t.Fatalf("the first day: %+v", v)
	}
	listing := 0
	for i := 1; i <= maxListed+20; i++ {
		v := judge(cal^uint64(1)<<(i%9), fmt.Sprintf("http://cal.test/day/%d", i), []string{fmt.Sprintf("/week/%d", 2*i), fmt.Sprintf("/week/%d", 2*i+1)})
		if v.Of == "" {
			t.Fatalf("day %d: %+v, want a copy of day 0", i, v)
		}
		if v.NewLinks {
			listing++
		}
	}
	if listing != maxListed {
		t.Errorf("%d days of one story each linking two new weeks listed other things; want %d, then copies", listing, maxListed)
	}
	// An original kept by an older weft: what it linked to is not known.
	pb := d.NewBatch()
	pb.Batch.PutSimHash(0xfedc_ba98_7654_3210, store.SimRecord{URL: "http://old.test/", Depth: 1})
	if err := pb.Batch.Commit(false); err != nil {
		t.Fatal(err)
	}
	n.ix.Add(0xfedc_ba98_7654_3210)
	if v := judge(0xfedc_ba98_7654_3211, "http://old.test/2", page()); v.Of != "http://old.test/" || !v.NewLinks {
		t.Errorf("against an original of an older weft: %+v, want new links", v)
	}
	// Links not known (nil): a copy.
	pb = d.NewBatch()
	if v, err := n.Judge(fp^0b11, nil, "http://shop.test/x", 1, true, false, pb.Batch); err != nil || v.Of == "" || v.NewLinks {
		t.Errorf("links not known: %+v, %v; want a copy", v, err)
	}
}

// A script's pages are named by the numbers in their query: a forum's
// next listing page, which reads as its template, lists other topics
// (viewtopic.php?t=), and its links are followed; its own path's
// variants, a timestamp, one number set in every link (a cache-buster's)
// and the parameters in another order still count as one link.
func TestNearDuplicateListingByQuery(t *testing.T) {
	_, _, judge := newJudging(t)
	listing := func(f, from int, extra ...string) []extract.Link {
		links := []extract.Link{{URL: "./index.php", Tag: "a"}, {URL: fmt.Sprintf("./viewforum.php?f=%d&start=%d", f, from+20), Tag: "a"}}
		for i := from; i < from+20; i++ {
			links = append(links, extract.Link{URL: fmt.Sprintf("./viewtopic.php?f=%d&t=%d", f, f*1000+i), Tag: "a"})
		}
		for _, e := range extra {
			links = append(links, extract.Link{URL: e, Tag: "a"})
		}
		return links
	}
	const fp = 0x0f0f_1234_5678_9abc
	if v := judge(fp, "http://forum.test/viewforum.php?f=4&start=20", listing(4, 20)); v.Of != "" {
		t.Fatalf("the first listing: %+v", v)
	}
	if v := judge(fp^1, "http://forum.test/viewforum.php?f=6&start=20", listing(6, 20)); v.Of == "" || !v.NewLinks {
		t.Errorf("another forum's listing, of other topics: %+v, want a copy with new links", v)
	}
	stamps := listing(4, 20)
	for i := range stamps {
		stamps[i].URL += "&ts=1765100000123"
	}
	if v := judge(fp^2, "http://forum.test/viewforum.php?f=4&start=20&sort=new", stamps); v.Of == "" || v.NewLinks {
		t.Errorf("the listing again, a timestamp in every link: %+v, want a copy, links and all", v)
	}
	rnd := listing(4, 20)
	for i := range rnd {
		rnd[i].URL += "&rnd=482913"
	}
	if v := judge(fp^8, "http://forum.test/viewforum.php?f=4&start=20&rnd=482913", rnd); v.Of == "" || v.NewLinks {
		t.Errorf("the listing again, one number in every link (a cache-buster's): %+v, want a copy, links and all", v)
	}
	reordered := listing(4, 20)
	for i, l := range reordered {
		if before, after, ok := strings.Cut(l.URL, "?f=4&"); ok {
			reordered[i].URL = before + "?" + after + "&f=4"
		}
	}
	if v := judge(fp^16, "http://forum.test/viewforum.php?start=20&f=4", reordered); v.Of == "" || v.NewLinks {
		t.Errorf("the listing again, its links' parameters in another order: %+v, want a copy, links and all", v)
	}
	// A shop's items, each link with its language: a copy with one more
	// link, to the other language, lists nothing else.
	items := func(extra ...string) (links []extract.Link) {
		for i := 1; i <= 10; i++ {
			links = append(links, extract.Link{URL: fmt.Sprintf("/item.php?id=%d&lang=1", i), Tag: "a"})
		}
		for _, e := range extra {
			links = append(links, extract.Link{URL: e, Tag: "a"})
		}
		return links
	}
	const shop = 0x5a5a_1234_a5a5_4321
	if v := judge(shop, "http://shop.test/list.php?c=1", items()); v.Of != "" {
		t.Fatalf("the shop's first listing: %+v", v)
	}
	if v := judge(shop^1, "http://shop.test/list.php?c=1&print=1", items("/list.php?c=1&lang=2")); v.Of == "" || v.NewLinks {
		t.Errorf("its print view, with a language switch: %+v, want a copy, links and all", v)
	}
	// Nine numbers in each link, the topic's last: it still counts.
	many := func(f int) (links []extract.Link) {
		for i := range 20 {
			links = append(links, extract.Link{URL: fmt.Sprintf("/viewtopic.php?a=1&b=1&c=1&d=1&e=1&g=1&h=1&i=1&f=%d&t=%d", f, f*1000+i), Tag: "a"})
		}
		return links
	}
	const board = 0x7777_0000_7777_0000
	if v := judge(board, "http://big.test/viewforum.php?f=1", many(1)); v.Of != "" {
		t.Fatalf("the big board's first listing: %+v", v)
	}
	if v := judge(board^1, "http://big.test/viewforum.php?f=2", many(2)); v.Of == "" || !v.NewLinks {
		t.Errorf("the big board's next forum, nine numbers a link: %+v, want new links", v)
	}
	if v := judge(fp^4, "http://forum.test/viewforum.php?f=4&start=20&view=print", listing(4, 20, "./viewforum.php?f=4&start=100", "./viewforum.php?f=4&start=120")); v.Of == "" || v.NewLinks {
		t.Errorf("the listing again, linking more of its own pages: %+v, want a copy, links and all", v)
	}
}

// newJudging returns a fresh store, an index in it, and a function that
// judges a page of fingerprint fp at url, linking links, against the
// index, and commits what it adds: the index then holds it for the next
// call.
func newJudging(t *testing.T) (*state.State, *Index, func(fp uint64, url string, links []extract.Link) Verdict) {
	d, _, err := state.Open(t.TempDir(), 4, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := New(9, 100, d.DB)
	return d, n, func(fp uint64, url string, links []extract.Link) Verdict {
		t.Helper()
		pb := d.NewBatch()
		v, err := n.Judge(fp, links, url, 1, true, false, pb.Batch)
		if err != nil {
			t.Fatal(err)
		}
		if err := pb.Batch.Commit(false); err != nil {
			t.Fatal(err)
		}
		n.Settle([]uint64{fp})
		return v
	}
}
