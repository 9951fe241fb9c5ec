package synthweb

import (
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
)

// WorldShop is a web of small shops, one per ordinary host, for the
// examples of the public API and the command protocol, which extract
// product records. Each shop has PagesPerHost products (zero means 30):
// a home page links shopCategories category pages (/c/K), each of which
// links its products (/p/N, product N in category N mod shopCategories).
// A product page shows its title as <h1 class="title"> and its price as
// <p class="price"><span class="currency">EUR</span> <span
// class="amount">12.34</span></p>; one product in seven is sold out and
// has no price. It also links its category, the next product and
// /cart/add/N, which answers 404 (a link a filter should refuse). Of the
// other fields, WorldShop reads Seed, Hosts, PagesPerHost, MaxLatency,
// CrawlDelay, RobotsKinds, the hostile hosts, Domain, IPPrefix and
// IPAuthorities; it has no sitemap.
const WorldShop World = "shop"

const shopCategories = 3

// Product is a product page of WorldShop, as an extraction should find it.
type Product struct {
	URL   string `json:"url"`
	Title string `json:"title"`
	Price string `json:"price,omitempty"` // "12.34"; "" when sold out
}

// shopProducts is the number of products of every shop.
func (w *Web) shopProducts() int { return w.cfg.PagesPerHost }

var (
	shopAdjectives = []string{"Blue", "Copper", "Folding", "Heavy", "Little", "Quiet", "Red", "Spare", "Wooden", "Woollen", "Tin"}
	shopNouns      = []string{"Kettle", "Lamp", "Chair", "Teapot", "Blanket", "Clock", "Ladder", "Basket", "Bucket", "Mug", "Radio", "Stool", "Whistle"}
)

// shopProduct is product k of host h (a title with "&" in one product in
// eleven, which HTML writes as "&amp;").
func (w *Web) shopProduct(h, k int) Product {
	s := uint64(w.cfg.Seed)*2654435761 + uint64(h)*40503 + uint64(k)*97
	title := shopAdjectives[s%uint64(len(shopAdjectives))] + " " + shopNouns[(s/11)%uint64(len(shopNouns))] + " " + strconv.Itoa(k+1)
	if k%11 == 5 {
		title += " & Co"
	}
	p := Product{URL: "http://" + w.hosts[h].authority + "/p/" + strconv.Itoa(k), Title: title}
	if k%7 != 6 {
		cents := 199 + (s/7)%20000
		p.Price = fmt.Sprintf("%d.%02d", cents/100, cents%100)
	}
	return p
}

// Products returns the products of every shop of WorldShop whose page its
// robots.txt lets ProductToken fetch, host by host; nil for other worlds.
func (w *Web) Products() []Product {
	if w.cfg.World != WorldShop {
		return nil
	}
	var out []Product
	for h, hh := range w.hosts[:w.nOrdinary] {
		for k := range w.shopProducts() {
			if !hh.disallowAll && allowed(hh.rules, "/p/"+strconv.Itoa(k)) {
				out = append(out, w.shopProduct(h, k))
			}
		}
	}
	return out
}

// serveShop answers a request of a WorldShop host (robots.txt aside).
func (w *Web) serveShop(rw *logWriter, r *http.Request, h *host) {
	path := r.URL.Path
	var b strings.Builder
	page := func(title string) {
		fmt.Fprintf(&b, "<!doctype html>\n<html><head><meta charset=utf-8><title>%s</title></head><body>\n<nav><a href=\"/\">Home</a></nav>\n", html.EscapeString(title))
	}
	switch {
	case path == "/":
		page(h.name)
		fmt.Fprintf(&b, "<h1>%s</h1>\n<ul>\n", html.EscapeString(h.name))
		for c := range shopCategories {
			fmt.Fprintf(&b, "<li><a href=\"/c/%d\">Category %d</a></li>\n", c, c)
		}
		b.WriteString("</ul>\n")
	case strings.HasPrefix(path, "/c/"):
		c, err := strconv.Atoi(path[len("/c/"):])
		if err != nil || c < 0 || c >= shopCategories || path != "/c/"+strconv.Itoa(c) {
			writeBody(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundBody)
			return
		}
		page(fmt.Sprintf("Category %d", c))
		fmt.Fprintf(&b, "<h1>Category %d</h1>\n<ul class=\"products\">\n", c)
		for k := c; k < w.shopProducts(); k += shopCategories {
			fmt.Fprintf(&b, "<li><a href=\"/p/%d\">%s</a></li>\n", k, html.EscapeString(w.shopProduct(h.idx, k).Title))
		}
		b.WriteString("</ul>\n")
	case strings.HasPrefix(path, "/p/"):
		k, err := strconv.Atoi(path[len("/p/"):])
		if err != nil || k < 0 || k >= w.shopProducts() || path != "/p/"+strconv.Itoa(k) {
			writeBody(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundBody)
			return
		}
		p := w.shopProduct(h.idx, k)
		page(p.Title + " | " + h.name)
		fmt.Fprintf(&b, "<div class=\"product\">\n<h1 class=\"title\">%s</h1>\n", html.EscapeString(p.Title))
		if p.Price != "" {
			fmt.Fprintf(&b, "<p class=\"price\"><span class=\"currency\">EUR</span> <span class=\"amount\">%s</span></p>\n", p.Price)
		} else {
			b.WriteString("<p class=\"stock\">Sold out</p>\n")
		}
		fmt.Fprintf(&b, "<p>A fine %s, made to last.</p>\n", html.EscapeString(strings.ToLower(p.Title)))
		fmt.Fprintf(&b, "<a href=\"/cart/add/%d\" class=\"buy\">Add to cart</a>\n</div>\n", k)
		fmt.Fprintf(&b, "<a href=\"/c/%d\">More in category %d</a> <a href=\"/p/%d\">Next product</a>\n", k%shopCategories, k%shopCategories, (k+1)%w.shopProducts())
	default:
		writeBody(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundBody)
		return
	}
	b.WriteString("</body></html>\n")
	writeBody(rw, r, http.StatusOK, "text/html; charset=utf-8", b.String())
}
