package crawl

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weft-crawler/weft/internal/browsertest"
	"github.com/weft-crawler/weft/internal/judge"
)

// words writes n words drawn from a vocabulary of thousands, the same for
// the same seed: a page's own text.
func words(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "w%d ", r.IntN(5000))
	}
	return b.String()
}

// A site of two templates whose links carry a parameter minted at each
// answer, under a name no list of tracking parameters holds (?visit=):
// every page links to variants of the others. The crawl learns from the
// first pages that are the same under two values that the parameter
// changes nothing, and from then on asks for each page once: every page
// is fetched, for few more requests than pages, and the host is not taken
// for a trap. A host that redirects a URL without the parameter to one
// with it still gives every page; one whose ?id= pages differ is crawled
// as before.
func TestInertParamLearnt(t *testing.T) {
	// With --render auto, a page whose HTML the renderer does not want
	// (none of these) teaches as it does without: the rule was once
	// asked only of pages no renderer could take, and s.test then cost
	// 60 page requests, against 49.
	for _, mode := range []string{RenderNever, RenderAuto} {
		t.Run(mode, func(t *testing.T) {
			const pages = 40
			var nonce atomic.Int64
			mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
				"s.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
					visitPage(rw, r, pages, nonce.Add(1), 0, false)
				},
				// r.test insists on the parameter: a URL without it redirects to
				// the URL with a new one.
				"r.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
					visitPage(rw, r, pages, nonce.Add(1), 500, true)
				},
				"c.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/item" {
						http.NotFound(rw, r)
						return
					}
					var id int
					fmt.Sscanf(r.URL.Query().Get("id"), "%d", &id)
					rw.Header().Set("Content-Type", "text/html")
					fmt.Fprintf(rw, "<html><body><p>%s</p><a href=\"/item?id=%d\">next</a> <a href=\"/item?id=%d\">other</a></body></html>",
						words(uint64(1000+id), 120), (id+1)%pages, (id+5)%pages)
				},
			})
			cfg := mw.config(t, 0, mw.url("s.test", sitePath(0)), mw.url("c.test", "/item?id=0"), mw.url("r.test", sitePath(0)+"?visit=0"))
			if mode == RenderAuto {
				cfg.Render = RenderConfig{Mode: mode, Chromium: browsertest.Chromium(t)}
			}
			sum := runCrawl(t, cfg)
			fetched := map[string]int{}
			requests := 0
			for _, p := range mw.paths("s.test") {
				path, _, _ := strings.Cut(p, "?")
				if _, ok := sitePage(path); ok {
					fetched[path]++
					requests++
				}
			}
			t.Logf("s.test: %d page requests for %d pages", requests, pages)
			if b := sum.Browser; mode == RenderAuto && (b == nil || b.Mode != RenderAuto || b.Pages != 0 || requests > pages+pages/3) {
				t.Errorf("render auto: %+v; %d page requests; want no page rendered and %d requests at most, as without", b, requests, pages+pages/3)
			}
			if len(fetched) != pages {
				t.Errorf("s.test: %d of its %d pages fetched", len(fetched), pages)
			}
			if requests > pages+pages/2 { // 50 when written; 133 without the rule, and 4 pages never found
				t.Errorf("s.test: %d page requests for %d pages; want few more than one a page", requests, pages)
			}
			if sum.Traps != 0 {
				t.Errorf("%d hosts cut off as traps; want none", sum.Traps)
			}
			if sum.InertParamHosts != 2 || len(sum.InertParams) != 2 || !strings.HasSuffix(sum.InertParams[0], ": visit") {
				t.Errorf("%d hosts with a parameter learnt inert (%v); want s.test's and r.test's visit", sum.InertParamHosts, sum.InertParams)
			}
			// r.test's pages, once its visit is learnt, are asked for without it
			// and followed to where the host insists on one: each is still had.
			answered := map[string]bool{}
			for _, r := range mw.requests("r.test") {
				if path, q, _ := strings.Cut(r.path, "?"); q != "" {
					answered[path] = true
				}
			}
			if len(answered) != pages {
				t.Errorf("r.test: %d of its %d pages answered", len(answered), pages)
			}
			if sum.Rejected[judge.InertParam] == 0 {
				t.Errorf("rejected %v; want the variants queued before the parameter was learnt dropped unrequested", sum.Rejected)
			}
			items := map[string]bool{}
			for _, p := range mw.paths("c.test") {
				if strings.HasPrefix(p, "/item?") {
					items[p] = true
				}
			}
			if len(items) != pages {
				t.Errorf("c.test: %d of its %d items fetched", len(items), pages)
			}
		})
	}
}

// sitePath is the path of page n of a site of two templates: stories and
// the rest.
func sitePath(n int) string {
	if n%2 == 0 {
		return fmt.Sprintf("/p%d", n)
	}
	return fmt.Sprintf("/story/%d", n)
}

// sitePage is the page sitePath gave path.
func sitePage(path string) (int, bool) {
	var n int
	if _, err := fmt.Sscanf(path, "/p%d", &n); err == nil && sitePath(n) == path {
		return n, true
	}
	if _, err := fmt.Sscanf(path, "/story/%d", &n); err == nil && sitePath(n) == path {
		return n, true
	}
	return 0, false
}

// visitPage answers r with page n of a site of pages pages (sitePath)
// whose words are drawn from seed+n and whose links carry ?visit=v; with
// insist, a URL without a visit redirects to itself with v.
func visitPage(rw http.ResponseWriter, r *http.Request, pages int, v int64, seed uint64, insist bool) {
	n, ok := sitePage(r.URL.Path)
	if !ok || n >= pages {
		http.NotFound(rw, r)
		return
	}
	if insist && r.URL.Query().Get("visit") == "" {
		http.Redirect(rw, r, fmt.Sprintf("%s?visit=%d", r.URL.Path, v), http.StatusFound)
		return
	}
	rw.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(rw, "<html><body><img src=\"/logo.png\"><h1>Page %d</h1><p>%s</p>", n, words(seed+uint64(n), 120))
	for _, k := range []int{0, (n + 1) % pages, (n + 2) % pages, (n * 3) % pages, (n + 7) % pages} {
		fmt.Fprintf(rw, `<a href="%s?visit=%d">page %d</a> `, sitePath(k), v, k)
	}
	fmt.Fprint(rw, "</body></html>")
}
