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

	"github.com/weft-crawler/weft/internal/fetchlog"
)

// TestDeferredListsEachURLOnce: every page of one host links to the same
// ten pages of another, which answers 429 with a Retry-After of an hour,
// so the crawl ends deferred with those ten left queued. The links raise
// their estimates past power after power of two while they wait, so each
// is queued again, more than once (state.Batch.Requeue): the queues hold
// several entries for each. The summary, its host line and the fetch log
// name each URL once, and the server was asked for one page of the host.
func TestDeferredListsEachURLOnce(t *testing.T) {
	var (
		mu    sync.Mutex
		asked []string
	)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer slow.Close()
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("%s/q%d", slow.URL, i))
	}
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><head><title>t</title></head><body>\n")
		for i := range 60 { // words of its own: no page is a near-duplicate of another
			fmt.Fprintf(&b, "%s%d ", r.URL.Path, i*7919%1000)
		}
		if r.URL.Path == "/" {
			for i := range 30 {
				fmt.Fprintf(&b, "<a href=\"/p%d\">p%d</a>\n", i, i)
			}
		}
		for _, u := range want {
			fmt.Fprintf(&b, "<a href=%q>q</a>\n", u)
		}
		b.WriteString("</body></html>\n")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(b.String()))
	}))
	defer good.Close()

	cfg := bare(Config{Seeds: []string{good.URL + "/"}, DataDir: t.TempDir(), Workers: 2, UserAgent: "weft/test (+https://example.org/weft-crawler)"})
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.NoSitemaps = true
	sum := runCrawl(t, cfg)

	if sum.StoppedBy != "deferred" || sum.Pages != 32 {
		t.Fatalf("stopped by %q after %d pages, want deferred after the 31 of the good host and the 429", sum.StoppedBy, sum.Pages)
	}
	if sum.Requeued < 10 {
		t.Fatalf("%d URLs queued again: the world did not make the copies it tests", sum.Requeued)
	}
	if sum.Deferred != 10 || sum.Queued != 10 || sum.DeferredHostCount != 1 || len(sum.DeferredHosts) != 1 || sum.DeferredHosts[0].URLs != 10 {
		t.Errorf("summary: %d deferred, %d left queued, on %d hosts (%+v); want the 10 URLs once each, on one host",
			sum.Deferred, sum.Queued, sum.DeferredHostCount, sum.DeferredHosts)
	}
	if s := sum.DeferredHosts[0].Sample; len(s) != 3 || len(slices.Compact(slices.Sorted(slices.Values(s)))) != 3 {
		t.Errorf("the host's sample names a URL twice, or not three: %v", s)
	}
	var listed []string
	for _, r := range readFetchLog(t, cfg.DataDir) {
		if r.Outcome == fetchlog.OutcomeDeferred {
			listed = append(listed, r.URL)
		}
	}
	slices.Sort(listed)
	if !slices.Equal(listed, want) {
		t.Errorf("fetch log's deferred lines: %v, want each of %v once", listed, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 {
		t.Errorf("the throttled host was asked for %v, want one page", asked)
	}
}
