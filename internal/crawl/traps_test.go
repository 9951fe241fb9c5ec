package crawl

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPatternCapSparesSitemaps: a.test lists 30 pages of one pattern
// (/item/N) in its sitemap, b.test only links to them. With a cap of 5 a
// pattern, b.test's links stop at 5 while every page a.test's sitemap
// lists is fetched: a sitemap is the site's own word on what it has.
func TestPatternCapSparesSitemaps(t *testing.T) {
	const items, capPattern = 30, 5
	page := func(w *miniWeb, rw http.ResponseWriter, r *http.Request, withSitemap bool) {
		switch {
		case r.URL.Path == "/robots.txt" && withSitemap:
			fmt.Fprintf(rw, "User-agent: *\nAllow: /\nSitemap: http://%s/sitemap.xml\n", r.Host)
		case r.URL.Path == "/sitemap.xml" && withSitemap:
			rw.Header().Set("Content-Type", "application/xml")
			var b strings.Builder
			b.WriteString(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for i := range items {
				fmt.Fprintf(&b, "<url><loc>http://%s/item/%d</loc></url>", r.Host, i)
			}
			b.WriteString("</urlset>")
			io.WriteString(rw, b.String())
		case r.URL.Path == "/" && !withSitemap:
			rw.Header().Set("Content-Type", "text/html")
			for i := range items {
				fmt.Fprintf(rw, `<a href="/item/%d">item</a>`, i)
			}
		case strings.HasPrefix(r.URL.Path, "/item/"):
			rw.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(rw, "<p>item %s</p>", r.URL.Path)
		default:
			http.NotFound(rw, r)
		}
	}
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) { page(w, rw, r, true) },
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) { page(w, rw, r, false) },
	})
	cfg := mw.config(t, time.Millisecond, mw.url("a.test", "/"), mw.url("b.test", "/"))
	cfg.NoSitemaps = false
	cfg.MaxURLsPerPattern = capPattern
	sum := runCrawl(t, cfg)
	count := func(host string) int {
		n := 0
		for _, r := range mw.requests(host) {
			if strings.HasPrefix(r.path, "/item/") {
				n++
			}
		}
		return n
	}
	if a, b := count("a.test"), count("b.test"); a != items || b != capPattern {
		t.Errorf("items fetched: a.test (sitemap) %d, want %d; b.test (links) %d, want the cap of %d", a, items, b, capPattern)
	}
	if sum.Rejected[RejectPattern] != items-capPattern {
		t.Errorf("%d URLs refused by the pattern cap, want %d", sum.Rejected[RejectPattern], items-capPattern)
	}
}
