package synthweb

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The gated shop: its listings lead a page at a time to products, each
// product links three actions, each action redirects to the login page
// with its own URL as next, and the login page differs from one next to
// another only in the hidden field that echoes it.
func TestGatedShop(t *testing.T) {
	t.Parallel()
	c, site, body := oneHostile(t, 3, GatedShop)
	products := map[string]bool{}
	for cat := range GatedShopCategories {
		next := fmt.Sprintf("/c/%d", cat)
		for next != "" {
			page := body(next)
			next = ""
			for _, l := range strings.Split(page, `href="`)[1:] {
				l = l[:strings.IndexByte(l, '"')]
				switch {
				case strings.HasPrefix(l, "/product/"):
					products[l] = true
				case strings.HasPrefix(l, "/c/") && strings.Contains(l, "page="):
					next = strings.ReplaceAll(l, "&amp;", "&")
				}
			}
		}
	}
	if len(products) != GatedShopProducts {
		t.Errorf("the listings lead to %d products, want %d", len(products), GatedShopProducts)
	}
	product := body("/product/7")
	var logins []string
	for _, a := range []string{"/cart/add?id=7", "/wishlist/add?id=7", "/review/new?product=7"} {
		if !strings.Contains(product, `href="`+strings.ReplaceAll(a, "&", "&amp;")+`"`) {
			t.Errorf("product 7 does not link %s", a)
		}
		r := get(t, c, site+a)
		loc := r.header.Get("Location")
		if r.status != http.StatusFound || !strings.HasPrefix(loc, "/login?next=") {
			t.Fatalf("%s: %d to %q, want 302 to /login?next=", a, r.status, loc)
		}
		logins = append(logins, body(loc))
	}
	if logins[0] == logins[1] || !strings.Contains(logins[0], `value="/cart/add?id=7"`) ||
		strings.Replace(logins[0], "/cart/add?id=7", "/wishlist/add?id=7", 1) != logins[1] {
		t.Errorf("the login pages differ otherwise than by the URL they echo:\n%s\n%s", logins[0], logins[1])
	}
	if r := get(t, c, site+"/product/200"); r.status != http.StatusNotFound {
		t.Errorf("/product/200: %d, want 404", r.status)
	}
}
