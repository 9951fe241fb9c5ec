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
	"time"

	"github.com/weft-crawler/weft/internal/fetchlog"
)

// TestDeferredListsEachURLOnce: every page of one host links to the same
// ten pages of another, which answers its first two requests for a page
// and then 429 with a Retry-After of an hour, so the crawl ends deferred
// with eight of the ten left queued. The links raise their estimates past
// power after power of two while they wait, so each is queued again, more
// than once (state.Batch.Requeue): the queues hold several entries for
// each, and the second page fetched was a copy, its first entry left
// behind stale (the first is the URL whose lease fetched robots.txt,
// which goes back first in its host's queue). The summary, its host line
// and the fetch log name each of the eight once.
func TestDeferredListsEachURLOnce(t *testing.T) {
	w := startCopiesWorld(t, func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	sum := runCrawl(t, w.cfg)

	asked := w.asked()
	if sum.StoppedBy != "deferred" || sum.Pages != 34 || len(asked) != 3 {
		t.Fatalf("stopped by %q after %d pages, the other host asked for %v; want deferred after the 31 of the good host, the two it answered and the 429", sum.StoppedBy, sum.Pages, asked)
	}
	if sum.Requeued < 10 {
		t.Fatalf("%d URLs queued again: the world did not make the copies it tests", sum.Requeued)
	}
	want := slices.DeleteFunc(slices.Clone(w.want), func(u string) bool {
		return strings.HasSuffix(u, asked[0]) || strings.HasSuffix(u, asked[1])
	})
	if sum.Deferred != 8 || sum.Queued != 8 || sum.DeferredHostCount != 1 || len(sum.DeferredHosts) != 1 || sum.DeferredHosts[0].URLs != 8 {
		t.Errorf("summary: %d deferred, %d left queued, on %d hosts (%+v); want the 8 URLs not fetched, once each, on one host",
			sum.Deferred, sum.Queued, sum.DeferredHostCount, sum.DeferredHosts)
	}
	if s := sum.DeferredHosts[0].Sample; len(s) != 3 || len(slices.Compact(slices.Sorted(slices.Values(s)))) != 3 {
		t.Errorf("the host's sample names a URL twice, or not three: %v", s)
	}
	var listed []string
	for _, r := range readFetchLog(t, w.cfg.DataDir) {
		if r.Outcome == fetchlog.OutcomeDeferred {
			listed = append(listed, r.URL)
		}
	}
	slices.Sort(listed)
	if !slices.Equal(listed, want) {
		t.Errorf("fetch log's deferred lines: %v, want each of %v once", listed, want)
	}
}

// TestGivenUpHostDropsItsCopies: the same web, the other host failing
// after its first two pages until it is given up, which drops its queued
// URLs without a request. Those leased after another entry of their URL
// went (the first entry of the second page it answered, whose copy was
// fetched; the copies of URLs the drop took first) are found stale as
// they are leased, as in any mode: once the crawl has drained, as many
// copies are gone as were made.
func TestGivenUpHostDropsItsCopies(t *testing.T) {
	w := startCopiesWorld(t, func(w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	w.cfg.Politeness.GiveUpAfter, w.cfg.Politeness.ParkAfter = 2, -1
	w.cfg.Politeness.MinBackoff, w.cfg.Politeness.LatencyFactor = 10*time.Millisecond, -1
	c, sum := runCrawler(t, w.cfg)
	if sum.StoppedBy != "drained" || sum.Requeued < 10 || len(w.asked()) != 4 {
		t.Fatalf("stopped by %q, %d queued again, the other host asked for %v; want drained, copies made, and two pages and two failures before it is given up",
			sum.StoppedBy, sum.Requeued, w.asked())
	}
	if made, gone := c.stats.requeued.Load(), c.stats.droppedCopies.Load(); made != gone {
		t.Errorf("%d copies made and %d gone in a drained crawl, want as many", made, gone)
	}
}

// copiesWorld is TestDeferredListsEachURLOnce's web: a host whose 31
// pages each link to ten pages of another, which answers its first two
// requests for a page with a page and every later one with fail. The
// other host's robots.txt is answered once the first host has served all
// its pages, so that by then the ten are queued again, and the page asked
// for second (after the one whose lease fetched robots.txt) is a copy.
type copiesWorld struct {
	cfg   Config
	want  []string // the other host's ten URLs, sorted
	asked func() []string
}

func startCopiesWorld(t *testing.T, fail func(http.ResponseWriter)) copiesWorld {
	var (
		mu     sync.Mutex
		asked  []string
		served int
		read   = make(chan struct{}) // the first host has served its pages
	)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			select {
			case <-read:
			case <-r.Context().Done():
			}
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		asked = append(asked, r.URL.Path)
		answer := len(asked) <= 2
		mu.Unlock()
		if answer {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!DOCTYPE html><html><head><title>q</title></head><body>q</body></html>\n"))
			return
		}
		fail(w)
	}))
	t.Cleanup(slow.Close)
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("%s/q%d", slow.URL, i))
	}
	slices.Sort(want)
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
		mu.Lock()
		if served++; served == 31 {
			close(read)
		}
		mu.Unlock()
	}))
	t.Cleanup(good.Close)

	cfg := bare(Config{Seeds: []string{good.URL + "/"}, DataDir: t.TempDir(), Workers: 2, UserAgent: "weft/test (+https://example.org/weft-crawler)"})
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.NoSitemaps = true
	return copiesWorld{cfg: cfg, want: want, asked: func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}}
}
