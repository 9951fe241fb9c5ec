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
	var (
		mu    sync.Mutex
		order []string
	)
	link := func(b *strings.Builder, href string) { fmt.Fprintf(b, "<a href=%q>%s</a>\n", href, href) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	defer srv.Close()
	cfg := bare(Config{Seeds: []string{srv.URL + "/"}, DataDir: t.TempDir(), Workers: 2, UserAgent: "weft/test (+https://example.org/weft-crawler)"})
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.NoSitemaps = true
	sum := runCrawl(t, cfg)

	mu.Lock()
	defer mu.Unlock()
	var pages []string
	for _, p := range order {
		if p != "/robots.txt" {
			pages = append(pages, p)
		}
	}
	if len(pages) != 52 {
		t.Fatalf("server saw %d page requests, want the 52 pages once each: %v", len(pages), pages)
	}
	at := slices.Index(pages, "/target")
	if at < 0 || at > 3 || slices.Index(pages[at+1:], "/target") >= 0 {
		t.Errorf("target asked for at %d (home, a hub, then it expected): %v", at, pages)
	}
	if sum.Requeued == 0 || sum.Rejected["requeued"] == 0 {
		t.Errorf("summary: %d requeued, %d stale copies dropped; want both counted", sum.Requeued, sum.Rejected["requeued"])
	}
}
