package crawl

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestImportantPageGoesFirst: a host's home page links to ten hub pages,
// forty plain pages and a target, in that order; every hub links to the
// target alone. First in, first out, the target would be the last page
// asked for. Its first hub's link makes it the most important URL the
// host has queued (one link from a page of one link is worth a hundred
// from the home page), so it is queued again, higher, and asked for next,
// as the server's log shows; the copy left in the queue is dropped
// unrequested, so the target is asked for once.
func TestImportantPageGoesFirst(t *testing.T) {
	pages, sum := importanceWorld(t, nil)
	at := slices.Index(pages, "/target")
	if at < 0 || at > 3 || slices.Index(pages[at+1:], "/target") >= 0 {
		t.Errorf("target asked for at %d (home, a hub, then it expected): %v", at, pages)
	}
	if sum.Requeued == 0 || sum.Rejected["requeued"] == 0 {
		t.Errorf("summary: %d requeued, %d stale copies dropped; want both counted", sum.Requeued, sum.Rejected["requeued"])
	}
}

// TestNodeThatMayLoseHostsQueuesNoCopy: the same web crawled by a node of a
// cluster, which may hand a host over at any time (Cluster.Keeps is
// false), queues no URL a second time: the node taking the host over could
// not tell such a copy stale. Every page is still asked for once.
func TestNodeThatMayLoseHostsQueuesNoCopy(t *testing.T) {
	tc := &testCluster{owns: func(string) bool { return true }, forward: func([]Offered) error { return nil }}
	if _, sum := importanceWorld(t, tc); sum.Requeued != 0 || sum.Rejected["requeued"] != 0 {
		t.Errorf("summary: %d requeued, %d stale copies dropped; want none", sum.Requeued, sum.Rejected["requeued"])
	}
}

// TestLeftQueuedCountsURLs: the same host, the crawl stopped after two
// pages, the home page and a hub whose link queued the target again: the
// target has two entries, and the URLs left queued are the 50 never
// asked for, not the 51 entries. The next run on the same directory
// takes up those 50 URLs, reads back 51 entries, and asks for each page
// once.
func TestLeftQueuedCountsURLs(t *testing.T) {
	srv, asked := importanceSite(t)
	cfg := bare(Config{Seeds: []string{srv.URL + "/"}, DataDir: t.TempDir(), Workers: 1, UserAgent: "weft/test (+https://example.org/weft-crawler)"})
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.NoSitemaps = true
	cfg.MaxPages = 2
	sum := runCrawl(t, cfg)
	pages := slices.DeleteFunc(asked(), func(p string) bool { return p == "/robots.txt" })
	if sum.StoppedBy != "max-pages" || !slices.Equal(pages, []string{"/", "/hub00"}) || sum.Requeued != 1 {
		t.Fatalf("stopped by %s after %v, %d queued again; want max-pages after the home page and the first hub, the target queued again", sum.StoppedBy, pages, sum.Requeued)
	}
	if sum.Queued != 50 {
		t.Errorf("left queued: %d, want the 50 URLs never asked for", sum.Queued)
	}
	cfg.MaxPages = 0
	sum = runCrawl(t, cfg)
	if sum.ResumedQueue != 50 || sum.Pages != 50 || sum.Queued != 0 {
		t.Errorf("the next run took up %d URLs and fetched %d pages, %d left; want 50, 50, 0", sum.ResumedQueue, sum.Pages, sum.Queued)
	}
	pages = slices.DeleteFunc(asked(), func(p string) bool { return p == "/robots.txt" })
	distinct := map[string]bool{}
	for _, p := range pages {
		distinct[p] = true
	}
	if len(pages) != 52 || len(distinct) != 52 {
		t.Errorf("the two runs asked for %d pages, %d of them distinct; want each of the 52 once", len(pages), len(distinct))
	}
}

// importanceWorld crawls TestImportantPageGoesFirst's host, as a node of
// tc if it is not nil, and returns the pages the server was asked for in
// order (each once, or the test fails) and the crawl's summary.
func importanceWorld(t *testing.T, tc *testCluster) ([]string, Summary) {
	t.Helper()
	srv, asked := importanceSite(t)
	cfg := bare(Config{Seeds: []string{srv.URL + "/"}, DataDir: t.TempDir(), Workers: 2, UserAgent: "weft/test (+https://example.org/weft-crawler)"})
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.NoSitemaps = true
	var sum Summary
	if tc != nil {
		var err error
		if sum, err = newNode(t, cfg, tc).Run(t.Context()); err != nil {
			t.Fatal(err)
		}
	} else {
		sum = runCrawl(t, cfg)
	}

	var pages []string
	for _, p := range asked() {
		if p != "/robots.txt" {
			pages = append(pages, p)
		}
	}
	if len(pages) != 52 {
		t.Fatalf("server saw %d page requests, want the 52 pages once each: %v", len(pages), pages)
	}
	return pages, sum
}

// importanceSite serves TestImportantPageGoesFirst's host, and returns it
// and what it was asked for, in order.
func importanceSite(t *testing.T) (srv *httptest.Server, asked func() []string) {
	var (
		mu    sync.Mutex
		order []string
	)
	link := func(b *strings.Builder, href string) { fmt.Fprintf(b, "<a href=%q>%s</a>\n", href, href) }
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		order = append(order, r.URL.Path)
		mu.Unlock()
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><head><title>t</title></head><body>\n")
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			http.NotFound(w, r)
			return
		case p == "/":
			for i := range 10 {
				link(&b, fmt.Sprintf("/hub%02d", i))
			}
			for i := range 40 {
				link(&b, fmt.Sprintf("/plain%02d", i))
			}
			link(&b, "/target")
		case strings.HasPrefix(p, "/hub"):
			link(&b, "/target")
		}
		b.WriteString("</body></html>\n")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(b.String()))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(order)
	}
}
