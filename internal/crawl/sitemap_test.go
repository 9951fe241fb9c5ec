package crawl

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSitemaps crawls a host whose robots.txt names a sitemap index:
// a gzipped urlset (with lastmod, and URLs on another seeded host, one of
// them disallowed there, and on a host out of scope), a malformed urlset,
// and one past the 50,000-URL limit. Every listed URL goes through the
// filters, robots.txt and the seen set like a link; the malformed file
// gives the URLs before its error; the big one is cut at the limit; and
// the server log shows politeness kept.
func TestSitemaps(t *testing.T) {
	urlset := func(locs ...string) string {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
		for _, l := range locs {
			fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>2026-11-29</lastmod></url>\n", l)
		}
		b.WriteString("</urlset>\n")
		return b.String()
	}
	var mw *miniWeb
	var big string
	mw = newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"s.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nDisallow: /big/\n\nSitemap: "+w.url("s.test", "/index.xml")+"\n")
			case "/":
				page(rw)
			case "/index.xml":
				rw.Header().Set("Content-Type", "application/xml")
				fmt.Fprintf(rw, `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>%s</loc><lastmod>2026-11-29</lastmod></sitemap>
<sitemap><loc>%s</loc></sitemap>
<sitemap><loc>%s</loc></sitemap>
</sitemapindex>`, w.url("s.test", "/a.xml.gz"), w.url("s.test", "/broken.xml"), w.url("s.test", "/big.xml"))
			case "/a.xml.gz":
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				zw.Write([]byte(urlset(w.url("s.test", "/p1"), w.url("s.test", "/p2"), w.url("d.test", "/ok"), w.url("d.test", "/private/x"), "http://out-of-scope.example/x")))
				zw.Close()
				rw.Header().Set("Content-Type", "application/gzip")
				rw.Write(buf.Bytes())
			case "/broken.xml":
				rw.Header().Set("Content-Type", "text/xml")
				fmt.Fprintf(rw, "<urlset>\n<url><loc>%s</loc></url>\n<url><loc>%s</url>\n<url><loc>%s</loc></url>\n</urlset>", w.url("s.test", "/p3"), w.url("s.test", "/p4"), w.url("s.test", "/p5"))
			case "/big.xml":
				rw.Header().Set("Content-Type", "application/xml")
				rw.Write([]byte(big))
			case "/sitemap.xml":
				http.NotFound(rw, r)
			default:
				page(rw)
			}
		},
		"d.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nDisallow: /private/\n")
			case "/sitemap.xml":
				http.NotFound(rw, r)
			default:
				page(rw)
			}
		},
	})
	locs := make([]string, 50001)
	for i := range locs {
		locs[i] = mw.url("s.test", fmt.Sprintf("/big/%d", i))
	}
	big = urlset(locs...)

	const delay = 5 * time.Millisecond
	cfg := mw.config(t, delay, mw.url("s.test", "/"), mw.url("d.test", "/"))
	cfg.NoSitemaps = false
	// Refused by scope before any request; were it not, loopback (where
	// nothing listens on its port), never DNS.
	cfg.Fetch.Resolve = maps.Clone(cfg.Fetch.Resolve)
	cfg.Fetch.Resolve["out-of-scope.example"] = "127.0.0.1"
	sum := runCrawl(t, cfg)

	s, d := mw.paths("s.test"), mw.paths("d.test")
	for _, p := range []string{"/sitemap.xml", "/index.xml", "/a.xml.gz", "/broken.xml", "/big.xml", "/p1", "/p2", "/p3"} {
		if n := strings.Count(" "+strings.Join(s, " ")+" ", " "+p+" "); n != 1 {
			t.Errorf("s.test: %s requested %d times, want once (requests %v)", p, n, s)
		}
	}
	for _, p := range []string{"/p4", "/p5"} {
		if slices.Contains(s, p) {
			t.Errorf("s.test: %s requested, listed after the malformed part", p)
		}
	}
	for _, p := range s {
		if strings.HasPrefix(p, "/big/") {
			t.Errorf("s.test: %s requested, disallowed by robots.txt", p)
		}
	}
	if !slices.Contains(d, "/ok") || slices.Contains(d, "/private/x") {
		t.Errorf("d.test requests %v; want /ok, from s.test's sitemap, and not the disallowed /private/x", d)
	}
	if sum.Handled["sitemap"] != 4 || sum.Unreadable["sitemap"] != 1 || sum.Cut["sitemap"] != 1 {
		t.Errorf("sitemaps read %v, malformed %v, cut %v; want 4 read, 1 malformed, 1 cut", sum.Handled, sum.Unreadable, sum.Cut)
	}
	// The big sitemap's first 50,000 URLs were judged (refused by
	// robots.txt), the 50,001st never read.
	if got := sum.Rejected[RejectRobots]; got != 50000+1 { // and d.test's /private/x
		t.Errorf("%d URLs refused by robots.txt, want the 50,000 read of the big sitemap and d.test's /private/x", got)
	}
	if sum.Rejected["scope"] == 0 {
		t.Errorf("rejections %v: the out-of-scope URL was not refused by scope", sum.Rejected)
	}
	mw.checkPolite(t, delay)
}
