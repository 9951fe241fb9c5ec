package synthweb

import (
	"net/http"
	"strings"
	"testing"
)

// The shop whose filters are in its paths, as clicked: the categories'
// own listings and their second pages lead to every product; a listing
// links the values of the filters not set yet only, and reads the same
// under either order of its filters; one with every filter set links no
// filter; what is no page is not found.
func TestFilterShop(t *testing.T) {
	t.Parallel()
	c, site, body := oneHostile(t, 3, FilterShop)
	links := func(page string) []string { return hrefs([]byte(page)) }
	products := map[string]bool{}
	for _, cat := range links(body("/")) {
		if !strings.HasPrefix(cat, "/c/") {
			continue
		}
		for _, page := range []string{cat, cat + "page-2/"} {
			for _, l := range links(body(page)) {
				if strings.HasPrefix(l, "/p/") {
					products[l] = true
				}
			}
		}
	}
	if len(products) != FilterShopCategories*FilterShopPerCat {
		t.Errorf("the categories' listings lead to %d products, want %d", len(products), FilterShopCategories*FilterShopPerCat)
	}
	text := func(page string) string { return page[strings.Index(page, "<h1>"):strings.Index(page, "<ul>")] }
	a, b := body("/c/hats/color-green/size-42/"), body("/c/hats/size-42/color-green/")
	if text(a) != text(b) || a == b {
		t.Error("one set of filters under two orders: want the same text and other links")
	}
	for _, l := range links(a) {
		if seg, ok := strings.CutPrefix(l, "/c/hats/color-green/size-42/"); ok && (strings.HasPrefix(seg, "color-") || strings.HasPrefix(seg, "size-")) {
			t.Errorf("a listing links %s, a filter it has set", l)
		}
	}
	if !strings.Contains(a, `href="/c/hats/color-green/size-42/material-wool/"`) {
		t.Error("a listing does not link a filter not set yet")
	}
	for _, l := range links(body("/c/hats/color-green/size-42/material-wool/")) {
		if strings.Count(l, "/") > 6 {
			t.Errorf("a listing with every filter set links %s", l)
		}
	}
	if page := body("/p/hats-7/"); !strings.Contains(page, `href="/c/hats/"`) {
		t.Error("a product does not link its category")
	}
	for _, bad := range []string{"/c/socks/", "/c/hats/color-green/color-red/", "/c/hats/colour-green/", "/c/hats/page-9/", "/c/hats/page-1/", "/p/hats-20/", "/p/hats-07/", "/c/hats"} {
		if r := get(t, c, site+bad); r.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", bad, r.status)
		}
	}
}

// The shop whose filters are names and values: the same listings, each
// filter two segments.
func TestFilterPairShop(t *testing.T) {
	t.Parallel()
	c, site, body := oneHostile(t, 3, FilterPairShop)
	page := body("/c/hats/color/green/size/42/")
	if !strings.Contains(page, `href="/c/hats/color/green/size/42/material/wool/"`) || strings.Contains(page, "material-wool") {
		t.Error("a listing does not link the next filter as a name and a value")
	}
	a, b := body("/c/hats/color/green/size/42/"), body("/c/hats/size/42/color/green/")
	if a[strings.Index(a, "<h1>"):strings.Index(a, "<ul>")] != b[strings.Index(b, "<h1>"):strings.Index(b, "<ul>")] {
		t.Error("one set of filters under two orders: want the same text")
	}
	for _, bad := range []string{"/c/hats/color/", "/c/hats/color-green/", "/c/hats/color/green/color/red/"} {
		if r := get(t, c, site+bad); r.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", bad, r.status)
		}
	}
}
