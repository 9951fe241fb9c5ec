package crawl

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/judge"
)

// Kinds of aliasSite.
const (
	aliasSame       = iota // every directory is its index.html
	aliasRootDiffer        // / is not /index.html (an old home page kept)
	aliasOldDiffer         // / is /index.html, but /old/index.html is not /old/
)

// aliasSite is a site whose server answers a directory with its
// index.html, as a static server does: / and /index.html are one page,
// and so are /docs/ and /docs/index.html, but where kind says otherwise.
// / links to /index.html and /old/index.html before /a, which leads to
// /docs/, so those are fetched, and /old/index.html's link to /old/ too,
// before /docs/ is.
func aliasSite(kind int) func(*miniWeb, http.ResponseWriter, *http.Request) {
	return func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
		html := func(body string) {
			rw.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(rw, "<html><body><h1>%s</h1>%s</body></html>", r.Host, body) // no page is another site's
		}
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			http.NotFound(rw, r)
		case p == "/index.html" && kind == aliasRootDiffer:
			html(`the old home page, kept <a href="/a">a</a>`)
		case p == "/", p == "/index.html":
			html(`home <a href="/index.html">home</a> <a href="/old/index.html">old</a> <a href="/a">a</a>`)
		case p == "/old/index.html" && kind == aliasOldDiffer:
			html(`the old index, not the directory's <a href="/old/">old</a>`)
		case p == "/old/", p == "/old/index.html":
			html(`old <a href="/old/">old</a>`)
		case p == "/a":
			html(`a <a href="/docs/">docs</a>`)
		case p == "/docs/", p == "/docs/index.html":
			html(`docs <a href="/docs/index.html">docs</a> <a href="/docs/b">b</a>`)
		default:
			html("a page")
		}
	}
}

// A site whose directories answer like their index.html is asked for the
// first pair of them (which shows it), and then for no index.html of a
// directory already fetched: one request fewer per site here. What a site
// showed is kept in its host's state, in the store when that leaves
// memory: with room for one host's (--host-cache 1) the sites evict each
// other's all along, and the rule holds all the same.
func TestIndexAliasSaved(t *testing.T) {
	for _, hostCache := range []int{0, 1} {
		t.Run(fmt.Sprintf("host-cache-%d", hostCache), func(t *testing.T) { testIndexAliasSaved(t, hostCache) })
	}
}

func testIndexAliasSaved(t *testing.T, hostCache int) {
	sites := map[string]func(*miniWeb, http.ResponseWriter, *http.Request){}
	for i := range 3 {
		sites[fmt.Sprintf("s%d.test", i)] = aliasSite(aliasSame)
	}
	mw := newMiniWeb(t, sites)
	var seeds []string
	for name := range sites {
		seeds = append(seeds, mw.url(name, "/"))
	}
	cfg := mw.config(t, time.Millisecond, seeds...)
	if hostCache > 0 {
		cfg.HostCache, cfg.Partitions = hostCache, 1
	}
	sum := runCrawlHeld(t, cfg)
	for name := range sites {
		got := mw.paths(name)
		slices.Sort(got)
		if want := []string{"/", "/a", "/docs/", "/docs/b", "/index.html", "/old/", "/old/index.html", "/robots.txt"}; !slices.Equal(got, want) {
			t.Errorf("%s requests %v, want %v: /docs/index.html is /docs/", name, got, want)
		}
	}
	if n := sum.Rejected[judge.IndexAlias]; n != 3 {
		t.Errorf("%d links refused as index aliases, want 3 (rejected %v)", n, sum.Rejected)
	}
}

// A site where a directory and its index.html differ, whether that is
// seen first (the root) or after a pair that agreed (/old/), has its
// index files fetched: /docs/index.html is asked for though it is /docs/.
func TestIndexAliasNotAssumed(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"root.test": aliasSite(aliasRootDiffer),
		"old.test":  aliasSite(aliasOldDiffer),
	})
	sum := runCrawl(t, mw.config(t, time.Millisecond, mw.url("root.test", "/"), mw.url("old.test", "/")))
	for _, name := range []string{"root.test", "old.test"} {
		got := mw.paths(name)
		slices.Sort(got)
		if want := []string{"/", "/a", "/docs/", "/docs/b", "/docs/index.html", "/index.html", "/old/", "/old/index.html", "/robots.txt"}; !slices.Equal(got, want) {
			t.Errorf("%s requests %v, want %v", name, got, want)
		}
	}
	if n := sum.Rejected[judge.IndexAlias]; n != 0 {
		t.Errorf("%d links refused as index aliases on sites where an index file differs", n)
	}
}
