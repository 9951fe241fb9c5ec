package synthweb

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// GatedShop is a shop whose every product page links actions that only a
// member may take, as most shops do: "/" links each category's listing,
// /c/N, paginated (/c/N?page=P, each page linking the next) with
// GatedShopPerPage of the category's products, each page the category's
// blurb again (a near-duplicate of its first page whose links differ),
// and /product/N, a page of its
// own text. Each product links its category, "/", /login?next= and its
// own path ("log in to see your price"), its print view (?print=1, its
// text again with a link back: a near-duplicate) and three actions,
// /cart/add?id=N, /wishlist/add?id=N and /review/new?product=N, each of
// which redirects (302) to /login?next= and the action's URL. The login
// page is the same form whatever it is asked with, the next URL echoed in
// a hidden field: one page, a near-duplicate copy under each of its URLs;
// it links "/" and /login?action=reset, a page of its own family. Of its
// 1,852 URLs, 251 are pages worth a crawl ("/", 50 listings, 200
// products), 200 print views and 1,401 a member's (600 actions, 801
// login URLs). The
// products are found a page of listing at a time, so a crawler that
// spends its requests, or its trust in the host, on the login wall finds
// only some of them.
const GatedShop = "gated-shop"

// The shop's catalogue.
const (
	GatedShopCategories = 10
	GatedShopProducts   = 200 // GatedShopProducts / GatedShopCategories in each category
	GatedShopPerPage    = 4
)

// gatedShopActions are the paths of the member-only actions, and the
// parameter each takes the product's number in.
var gatedShopActions = [...][2]string{{"/cart/add", "id"}, {"/wishlist/add", "id"}, {"/review/new", "product"}}

// serveGatedShop answers GatedShop.
func (w *Web) serveGatedShop(rw *logWriter, r *http.Request, h *host) {
	const perCategory = GatedShopProducts / GatedShopCategories
	path := r.URL.Path
	switch {
	case path == "/":
		var links []string
		for c := range GatedShopCategories {
			links = append(links, fmt.Sprintf("/c/%d", c))
		}
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, "/", "Shop", trapWords, links))
		return
	case strings.HasPrefix(path, "/c/"):
		c, err := strconv.Atoi(path[len("/c/"):])
		page := 1
		if p := r.URL.Query().Get("page"); p != "" {
			page, _ = strconv.Atoi(p)
		}
		pages := perCategory / GatedShopPerPage
		if err != nil || c < 0 || c >= GatedShopCategories || page < 1 || page > pages {
			break
		}
		links := []string{"/"}
		for i := range GatedShopPerPage {
			links = append(links, fmt.Sprintf("/product/%d", c*perCategory+(page-1)*GatedShopPerPage+i))
		}
		if page < pages {
			links = append(links, fmt.Sprintf("/c/%d?page=%d", c, page+1))
		}
		// Every page of a category reads as its first, the category's
		// blurb: only the products it lists differ.
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, fmt.Sprintf("Category %d", c), trapWords, links))
		return
	case strings.HasPrefix(path, "/product/"):
		n, err := strconv.Atoi(path[len("/product/"):])
		if err != nil || n < 0 || n >= GatedShopProducts || strconv.Itoa(n) != path[len("/product/"):] {
			break
		}
		title := fmt.Sprintf("Product %d", n)
		if r.URL.RawQuery == "print=1" {
			// The print view: the product's text, and a link back to it.
			writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, title, trapWords, []string{path}))
			return
		}
		links := []string{fmt.Sprintf("/c/%d", n/perCategory), "/", "/login?next=" + url.QueryEscape(path), path + "?print=1"}
		for _, a := range gatedShopActions {
			links = append(links, fmt.Sprintf("%s?%s=%d", a[0], a[1], n))
		}
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, title, trapWords, links))
		return
	case path == "/login":
		writeBody(rw, r, http.StatusOK, htmlUTF8, gatedShopLogin(r.URL.Query().Get("next")))
		return
	}
	for _, a := range gatedShopActions {
		if path == a[0] {
			redirect(rw, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
			return
		}
	}
	notFound(rw, r)
}

// gatedShopLogin is the login form, next echoed in it.
func gatedShopLogin(next string) string {
	return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Log in</title>
</head>
<body>
<h1>Log in</h1>
<form method="post" action="/login">
<input type="hidden" name="next" value="` + html.EscapeString(next) + `">
<label>E-mail <input name="email" type="email"></label>
<label>Password <input name="password" type="password"></label>
<button>Log in</button>
</form>
<p>Members keep a basket and a wishlist on every device they use, review what they bought, and hear of a sale before anyone else.
Registering takes a minute: we ask for an e-mail address and a password, and never share either with anyone.
Forgot your password? Ask for a new one from this page and we send a link that works for an hour.</p>
<p><a href="/login?action=reset">Forgot your password?</a> <a href="/">Back to the shop</a></p>
</body>
</html>
`
}
