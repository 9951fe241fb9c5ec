package crawl

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"
)

// ampSite is a site of ampNodes articles, /node/N, listed twenty a page,
// each linking its AMP view under its own path, /node/N/amp/: the
// article's text again in other markup, linking back to it, as an AMP
// plug-in's "reader mode" writes it.
const ampNodes = 200

func ampSite(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
	words := func(n int) string {
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		var b strings.Builder
		for range 150 {
			for l := 3 + rng.IntN(6); l > 0; l-- {
				b.WriteByte(byte('a' + rng.IntN(26)))
			}
			b.WriteByte(' ')
		}
		return b.String()
	}
	html := func(title, text string, links ...string) {
		rw.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(rw, "<html><head><title>%s</title></head><body><h1>%s</h1><p>%s</p>", title, title, text)
		for _, l := range links {
			fmt.Fprintf(rw, `<a href="%s">%s</a> `, l, l)
		}
		fmt.Fprint(rw, "</body></html>")
	}
	var n int
	switch p := r.URL.Path; {
	case p == "/robots.txt":
		http.NotFound(rw, r)
	case p == "/" || strings.HasPrefix(p, "/list/"):
		fmt.Sscanf(p, "/list/%d", &n)
		var links []string
		for i := n * 20; i < min(n*20+20, ampNodes); i++ {
			links = append(links, fmt.Sprintf("/node/%d", i))
		}
		if (n+1)*20 < ampNodes {
			links = append(links, fmt.Sprintf("/list/%d", n+1))
		}
		html(fmt.Sprintf("Articles, page %d", n+1), words(-1-n), links...)
	case strings.HasSuffix(p, "/amp/"):
		fmt.Sscanf(p, "/node/%d/amp/", &n)
		html(fmt.Sprintf("Article %d", n), words(n), "/", fmt.Sprintf("/node/%d", n))
	default:
		if _, err := fmt.Sscanf(p, "/node/%d", &n); err != nil || n >= ampNodes {
			http.NotFound(rw, r)
			return
		}
		html(fmt.Sprintf("Article %d", n), words(n), "/", fmt.Sprintf("/node/%d/amp/", n), fmt.Sprintf("/node/%d", (n+1)%ampNodes))
	}
}

// TestAMPViewsUnderTheirPages: an article's AMP view under its own path,
// a copy of the article that links it, is a tool of it (judge.Echo):
// after a few, the rest are held, and every article is fetched. Before,
// the copies, each under its own article's directory, filled the host's
// near-duplicate window and cut off /node/: 28 of 200 articles fetched.
func TestAMPViewsUnderTheirPages(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){"amp.test": ampSite})
	cfg := mw.config(t, time.Millisecond, mw.url("amp.test", "/"))
	sum := runCrawl(t, cfg)
	articles, amps := 0, 0
	for _, p := range mw.paths("amp.test") {
		switch {
		case strings.HasSuffix(p, "/amp/"):
			amps++
		case strings.HasPrefix(p, "/node/"):
			articles++
		}
	}
	t.Logf("%d articles, %d AMP views; held %v; %d cut off", articles, amps, sum.Held, sum.Traps)
	if articles != ampNodes || sum.Traps != 0 {
		t.Errorf("%d of %d articles fetched, %d hosts or directories cut off; want every article, and none cut off", articles, ampNodes, sum.Traps)
	}
	if amps > 30 {
		t.Errorf("%d AMP views asked for; want at most 30 (%d are linked)", amps, ampNodes)
	}
}

// closedSite is a site whose 60 pages under /x/, linked from "/", are
// distinct but say noindex,nofollow (members' pages, say), each a shape
// of its own and a tool of no page.
func closedSite(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Content-Type", "text/html")
	if r.URL.Path == "/robots.txt" {
		http.NotFound(rw, r)
		return
	}
	if r.URL.Path == "/" {
		fmt.Fprint(rw, "<html><body><h1>Members</h1>")
		for i := range 60 {
			fmt.Fprintf(rw, `<a href="/x/member-%c%c">m</a> `, 'a'+i%26, 'a'+i/26)
		}
		fmt.Fprint(rw, "</body></html>")
		return
	}
	rng := rand.New(rand.NewPCG(uint64(len(r.URL.Path))*31+uint64(r.URL.Path[len(r.URL.Path)-1]), uint64(r.URL.Path[len(r.URL.Path)-2])))
	var b strings.Builder
	for range 150 {
		for l := 3 + rng.IntN(6); l > 0; l-- {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
		b.WriteByte(' ')
	}
	fmt.Fprintf(rw, `<html><head><meta name="robots" content="noindex,nofollow"></head><body><p>%s</p><a href="/">home</a></body></html>`, b.String())
}

// TestClosedPagesCutNothing: pages that say noindex and nofollow are
// evidence for walls and family budgets, not for the near-duplicate
// window: a directory of them, distinct, is fetched whole and cut off by
// nothing.
func TestClosedPagesCutNothing(t *testing.T) {
	t.Parallel()
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){"closed.test": closedSite})
	cfg := mw.config(t, time.Millisecond, mw.url("closed.test", "/"))
	cfg.NearDupTrapWindow = 20
	sum := runCrawl(t, cfg)
	pages := 0
	for _, p := range mw.paths("closed.test") {
		if strings.HasPrefix(p, "/x/") {
			pages++
		}
	}
	if pages != 60 || sum.Traps != 0 {
		t.Errorf("%d of 60 closed pages fetched, %d cut off; want all, none cut off", pages, sum.Traps)
	}
}
