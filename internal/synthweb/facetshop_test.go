package synthweb

import (
	"net/http"
	"strings"
	"testing"
)

// The path-faceted shop: a category's listing links its facets in the
// path, a facet's listing appends the next filter in the order set, two
// orders of one set of filters list the same products, the next page
// comes last, and a path that is no listing is not found.
func TestPathFacetShop(t *testing.T) {
	t.Parallel()
	c, site, body := oneHostile(t, 3, PathFacetShop)
	home := body("/")
	if !strings.Contains(home, `href="/shop/cat-0/"`) || !strings.Contains(home, `href="/shop/cat-5/"`) {
		t.Fatalf("the front page does not link the categories: %.300s", home)
	}
	cat := body("/shop/cat-2/")
	for _, l := range []string{`href="/shop/cat-2/color-red/"`, `href="/shop/cat-2/size-xl/"`, `href="/shop/cat-2/sort-new/"`, `href="/shop/cat-2/page-2/"`, `href="/product/2"`} {
		if !strings.Contains(cat, l) {
			t.Errorf("the category's listing does not link %s", l)
		}
	}
	red := body("/shop/cat-2/color-red/")
	for _, l := range []string{`href="/shop/cat-2/color-red/size-m/"`, `href="/shop/cat-2/color-blue/"`} {
		if !strings.Contains(red, l) {
			t.Errorf("a facet's listing does not link %s", l)
		}
	}
	products := func(page string) (out []string) {
		for _, l := range strings.Split(page, `href="/product/`)[1:] {
			out = append(out, l[:strings.IndexByte(l, '"')])
		}
		return out
	}
	if a, b := products(body("/shop/cat-2/color-red/size-m/")), products(body("/shop/cat-2/size-m/color-red/")); len(a) == 0 || strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("two orders of one set of filters list products %v and %v, want the same", a, b)
	}
	for _, bad := range []string{"/shop/cat-9/", "/shop/cat-2/color-pink/", "/shop/cat-2/color-red/color-blue/", "/shop/cat-2/page-1/", "/shop?cat=2"} {
		if r := get(t, c, site+bad); r.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", bad, r.status)
		}
	}
}
