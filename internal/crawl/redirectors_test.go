package crawl

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/judge"
)

// A site whose every article links to ten outside shops through its own
// click tracker (/out?url=...): once ten of the tracker's URLs have all
// redirected out of the scope, to several hosts, its other URLs are
// neither asked for nor queued, but a few, asked for to probe it.
// Every article is fetched, for a few tracker requests rather than ten an
// article.
func TestOffsiteRedirectorLearnt(t *testing.T) {
	const articles = 60
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"news.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/out" {
				http.Redirect(rw, r, r.URL.Query().Get("url"), http.StatusFound)
				return
			}
			var n int
			if _, err := fmt.Sscanf(r.URL.Path, "/article/%d", &n); err != nil || n >= articles {
				http.NotFound(rw, r)
				return
			}
			rw.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(rw, "<html><body><p>%s</p>", words(uint64(2000+n), 120))
			for _, k := range []int{(n + 1) % articles, (n + 2) % articles, (n * 7) % articles} {
				fmt.Fprintf(rw, `<a href="/article/%d">more</a> `, k)
			}
			for i := range 10 {
				fmt.Fprintf(rw, `<a href="/out?url=http%%3A%%2F%%2Fshop%d.example%%2Fitem%%2F%d">buy</a> `, (n+i)%7, n*10+i)
			}
			fmt.Fprint(rw, "</body></html>")
		},
	})
	// portal.test's home page links its front controller's sponsor
	// tracker first, then its topics: of one path, but another shape, all
	// fetched.
	mw2 := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"portal.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if r.URL.Path != "/index.php" && r.URL.Path != "/" {
				http.NotFound(rw, r)
				return
			}
			if q.Get("action") == "out" {
				http.Redirect(rw, r, q.Get("url"), http.StatusFound)
				return
			}
			rw.Header().Set("Content-Type", "text/html")
			topic := -1 // the home page
			fmt.Sscanf(q.Get("topic"), "%d", &topic)
			fmt.Fprintf(rw, "<html><body><p>%s</p>", words(uint64(3001+topic), 120)) // each topic its own text
			if r.URL.Path == "/" {
				for i := range 20 {
					fmt.Fprintf(rw, `<a href="/index.php?action=out&amp;url=http%%3A%%2F%%2Fsponsor%d.example%%2F">ad</a> `, i)
				}
				for i := range 30 {
					fmt.Fprintf(rw, `<a href="/index.php?topic=%d">topic</a> `, i)
				}
			}
			fmt.Fprint(rw, "</body></html>")
		},
	})
	sum2 := runCrawl(t, mw2.config(t, 0, mw2.url("portal.test", "/")))
	topics := 0
	for _, p := range mw2.paths("portal.test") {
		if strings.Contains(p, "topic=") {
			topics++
		}
	}
	if topics != 30 {
		t.Errorf("portal.test: %d of its 30 topics fetched (%d shapes learnt); want all", topics, sum2.OffsiteRedirectors)
	}

	sum := runCrawl(t, mw.config(t, 0, mw.url("news.test", "/article/0")))
	got, outs := map[string]bool{}, 0
	for _, p := range mw.paths("news.test") {
		switch {
		case strings.HasPrefix(p, "/article/"):
			got[p] = true
		case strings.HasPrefix(p, "/out"):
			outs++
		}
	}
	t.Logf("%d articles, %d tracker requests", len(got), outs)
	if len(got) != articles {
		t.Errorf("%d of the %d articles fetched", len(got), articles)
	}
	if outs > 40 { // 11 seen (ten, then a probe or two); 15 to 23 when one in fifty probed; 600 without the rule
		t.Errorf("%d tracker requests; want ten, the evidence, and a few probes", outs)
	}
	// The shops (.example, reserved, resolved by nothing) are never asked:
	// every redirect there is refused by the scope, and no request fails.
	if sum.Rejected[judge.Scope] != int64(outs) || len(sum.Errors) != 0 || sum2.Rejected[judge.Scope] == 0 || len(sum2.Errors) != 0 {
		t.Errorf("scope refusals %d and %d, errors %v and %v; want every tracker's target refused, none asked for",
			sum.Rejected[judge.Scope], sum2.Rejected[judge.Scope], sum.Errors, sum2.Errors)
	}
	if sum.OffsiteRedirectors != 1 || sum.Rejected[judge.OffsiteRedirect] == 0 {
		t.Errorf("%d shapes learnt, rejected %v; want the tracker's", sum.OffsiteRedirectors, sum.Rejected)
	}
}
