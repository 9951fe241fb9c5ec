package crawl

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/judge"
)

// sitemapSite is a site crawled from its sitemaps, as archives of a
// publisher are: an index (on the site) naming a sitemap of posts and one
// on a CDN; the posts' sitemap lists a page that redirects and one on
// another domain; a plain seed answers with a urlset; robots.txt names a
// sitemap of its own, which the seeds' sitemaps do not list.
func sitemapSite(t *testing.T) *miniWeb {
	urlset := func(locs ...string) string {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
		for _, l := range locs {
			fmt.Fprintf(&b, "<url><loc>%s</loc></url>\n", l)
		}
		return b.String() + "</urlset>\n"
	}
	xml := func(rw http.ResponseWriter, body string) {
		rw.Header().Set("Content-Type", "application/xml")
		rw.Write([]byte(body))
	}
	html := func(rw http.ResponseWriter, body string) {
		rw.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(rw, "<html><head><link rel=stylesheet href=/style.css><link rel=icon href=/icon.png></head><body><!-- %d -->%s</body></html>", pageSerial.Add(1), body)
	}
	return newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"m.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nAllow: /\n\nSitemap: "+w.url("m.test", "/robots-sitemap.xml")+"\n")
			case "/sitemap_index.xml":
				xml(rw, `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>`+w.url("m.test", "/sitemaps/posts.xml")+
					`</loc></sitemap><sitemap><loc>`+w.url("cdn.test", "/m/pages.xml")+`</loc></sitemap></sitemapindex>`)
			case "/sitemaps/posts.xml":
				xml(rw, urlset(w.url("m.test", "/post/1"), w.url("m.test", "/post/2?utm_source=feed"), w.url("m.test", "/old"), w.url("other.test", "/landing")))
			case "/robots-sitemap.xml":
				xml(rw, urlset(w.url("m.test", "/robots-only")))
			case "/sitemap.xml":
				http.NotFound(rw, r)
			case "/old":
				http.Redirect(rw, r, "/post/new", http.StatusMovedPermanently)
			case "/style.css":
				rw.Header().Set("Content-Type", "text/css")
				rw.Write([]byte("body{color:#333}"))
			case "/icon.png":
				rw.Header().Set("Content-Type", "image/png")
				rw.Write([]byte("\x89PNG\r\n\x1a\n"))
			case "/tag/1":
				html(rw, `<a href="/tag/1/deep">deeper</a>`)
			default:
				html(rw, `<a href="/tag/1">tag</a> <a href="/post/1">first</a> <a href="http://`+w.auth["other.test"]+`/more">elsewhere</a>`)
			}
		},
		"cdn.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/m/pages.xml":
				xml(rw, urlset(w.url("m.test", "/about")))
			default:
				http.NotFound(rw, r)
			}
		},
		"other.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			default:
				html(rw, `<a href="/more">more</a>`)
			}
		},
		"plain.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt", "/sitemap.xml":
				http.NotFound(rw, r)
			case "/list.xml":
				xml(rw, urlset(w.url("plain.test", "/a")))
			default:
				html(rw, `<a href="/b">b</a>`)
			}
		},
	})
}

// TestSitemapSeeds: the URLs a seed sitemap lists are seeds, through an
// index and on other hosts and domains: at depth 0 (so a crawl one hop
// deep reaches their links and no further), in the scope they widen, with
// robots.txt and politeness as for any URL. A plain seed that answers
// with a urlset is read the same way.
func TestSitemapSeeds(t *testing.T) {
	mw := sitemapSite(t)
	const delay = 5 * time.Millisecond
	cfg := mw.config(t, delay, mw.url("plain.test", "/list.xml"))
	cfg.Sitemaps = []string{mw.url("m.test", "/sitemap_index.xml")}
	cfg.NoSitemaps, cfg.NoRequisites = false, false
	cfg.Scope.MaxDepth = 1
	sum := runCrawl(t, cfg)

	want := map[string][]string{
		"m.test":     {"/sitemap_index.xml", "/sitemaps/posts.xml", "/post/1", "/post/2", "/old", "/post/new", "/about", "/tag/1", "/style.css"},
		"cdn.test":   {"/m/pages.xml"},
		"other.test": {"/landing", "/more"},
		"plain.test": {"/list.xml", "/a", "/b"},
	}
	for host, paths := range want {
		got := mw.paths(host)
		for _, p := range paths {
			if n := strings.Count(" "+strings.Join(got, " ")+" ", " "+p+" "); n != 1 {
				t.Errorf("%s: %s requested %d times, want once (requests %v)", host, p, n, got)
			}
		}
	}
	if got := mw.paths("m.test"); slices.Contains(got, "/tag/1/deep") {
		t.Errorf("m.test: /tag/1/deep requested, two hops from a listed page (requests %v)", got)
	}
	if sum.Seeds != 2 || sum.SeedsFetched != 2 {
		t.Errorf("seeds %d, fetched %d; want the sitemap and the plain seed", sum.Seeds, sum.SeedsFetched)
	}
	mw.checkPolite(t, delay)
}

// TestSitemapOnly: a crawl of exactly what the seeds' sitemaps list, with
// the redirects and requisites of those pages (a tracking parameter
// canonicalised away): no page's link is
// followed, and no sitemap robots.txt names is fetched.
func TestSitemapOnly(t *testing.T) {
	mw := sitemapSite(t)
	const delay = 5 * time.Millisecond
	cfg := mw.config(t, delay, mw.url("plain.test", "/list.xml"))
	cfg.Sitemaps = []string{mw.url("m.test", "/sitemap_index.xml")}
	cfg.NoSitemaps, cfg.NoRequisites, cfg.SitemapOnly = false, false, true
	sum := runCrawl(t, cfg)

	want := map[string][]string{
		"m.test":     {"/robots.txt", "/sitemap_index.xml", "/sitemaps/posts.xml", "/post/1", "/post/2", "/old", "/post/new", "/about", "/style.css", "/icon.png"},
		"cdn.test":   {"/robots.txt", "/m/pages.xml"},
		"other.test": {"/robots.txt", "/landing", "/style.css", "/icon.png"},
		"plain.test": {"/robots.txt", "/list.xml", "/a", "/style.css", "/icon.png"},
	}
	for host, paths := range want {
		got := mw.paths(host)
		slices.Sort(got)
		slices.Sort(paths)
		if !slices.Equal(got, paths) {
			t.Errorf("%s: requests %v, want exactly %v", host, got, paths)
		}
	}
	if sum.Rejected[judge.SitemapOnly] == 0 {
		t.Errorf("rejections %v: the pages' links were not counted as not followed", sum.Rejected)
	}
	mw.checkPolite(t, delay)
}
