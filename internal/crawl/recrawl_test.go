package crawl

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"weft/internal/recrawl"
	"weft/internal/warc"
)

// TestServeRecrawls runs the continuous mode for a few seconds over a host
// with a page that never changes (it has an ETag and answers a matching
// If-None-Match with 304) and one that changes at every request (no
// validators), and one whose first request fails. From the server's
// side: the failed page is asked for again, the unchanged page is asked for
// again conditionally and answered 304, the changing one is fetched more
// often (its learnt rate is higher), and the host's delay holds
// throughout. The 304s are server-not-modified revisits in the WARC files
// and in the capture index.
func TestServeRecrawls(t *testing.T) {
	var changes, flaky atomic.Int64
	var mu sync.Mutex
	conditional := map[string]int{} // path -> requests with If-None-Match
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"r.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/static", "/changing", "/flaky")
			case "/flaky":
				// The first request gets its connection cut: an error,
				// not a response. The URL must stay in the recrawl.
				if flaky.Add(1) == 1 {
					conn, _, err := rw.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
					return
				}
				page(rw)
			case "/static":
				if r.Header.Get("If-None-Match") != "" {
					mu.Lock()
					conditional[r.URL.Path]++
					mu.Unlock()
				}
				rw.Header().Set("ETag", `"v1"`)
				if r.Header.Get("If-None-Match") == `"v1"` {
					rw.WriteHeader(http.StatusNotModified)
					return
				}
				rw.Header().Set("Content-Type", "text/html")
				rw.Write([]byte("<html><body><p>the same words for ever</p></body></html>"))
			case "/changing":
				rw.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(rw, "<html><body><p>edition %d</p></body></html>", changes.Add(1))
			default:
				http.NotFound(rw, r)
			}
		},
	})
	const delay = 20 * time.Millisecond
	cfg := mw.config(t, delay, mw.url("r.test", "/"))
	// Compressed time: a page is due again after 0.7 s at the prior rate,
	// never sooner than 150 ms nor later than 1.5 s.
	cfg.Recrawl = &recrawl.Policy{Min: 150 * time.Millisecond, Max: 1500 * time.Millisecond, Prior: 1}
	cfg.RecrawlScan = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
	defer cancel()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, p := range mw.paths("r.test") {
		counts[p]++
	}
	mu.Lock()
	cond := conditional["/static"]
	mu.Unlock()
	t.Logf("in 4 s: %v; %d conditional requests for /static; summary: %d recrawls, %d not modified", counts, cond, sum.Recrawls, sum.NotModified)
	if counts["/static"] < 2 || cond != counts["/static"]-1 || sum.NotModified != int64(cond) {
		t.Errorf("/static: %d requests, %d conditional, %d answered 304 by the summary; want every one after the first conditional, each a 304",
			counts["/static"], cond, sum.NotModified)
	}
	if counts["/changing"] <= counts["/static"] {
		t.Errorf("/changing fetched %d times, /static %d: the page that changes at every visit is not fetched more often", counts["/changing"], counts["/static"])
	}
	if counts["/flaky"] < 3 || len(sum.Errors) == 0 {
		t.Errorf("/flaky: %d requests, errors %v; want its failed first fetch, and recrawls after it", counts["/flaky"], sum.Errors)
	}
	if sum.Recrawls == 0 || sum.StoppedBy == "drained" {
		t.Errorf("summary: stopped by %s after %d recrawls; want a crawl that goes on until stopped", sum.StoppedBy, sum.Recrawls)
	}
	mw.checkPolite(t, delay)

	// The WARC files: each 304 a server-not-modified revisit of /static's
	// first capture.
	var revisits, first int
	var firstID string
	for _, name := range sum.WARCFiles {
		for _, r := range readWARC(t, filepath.Join(cfg.DataDir, "warc", name)) {
			if !strings.HasSuffix(r.header.Get("WARC-Target-URI"), "/static") {
				continue
			}
			switch r.header.Get("WARC-Type") {
			case "response":
				first++
				firstID = r.header.Get("WARC-Record-ID")
			case "revisit":
				revisits++
				if r.header.Get("WARC-Profile") != warc.ProfileServerNotModified || r.header.Get("WARC-Refers-To") != firstID ||
					!strings.HasPrefix(string(r.block), "HTTP/1.1 304") {
					t.Errorf("revisit of /static: %v", r.header)
				}
			}
		}
	}
	if first != 1 || revisits != cond {
		t.Errorf("/static in the WARC files: %d responses and %d revisits; want 1 and %d", first, revisits, cond)
	}
	a, err := OpenArchive(cfg.DataDir, cfg.Canon)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	got, err := a.Get(mw.url("r.test", "/static"), time.Time{})
	if err != nil || got.Capture.Status != 304 || string(got.Record.Payload) != "<html><body><p>the same words for ever</p></body></html>" {
		t.Errorf("weft get of /static, latest: status %d, payload %q, %v; want the 304 resolved to the page", got.Capture.Status, got.Record.Payload, err)
	}
}

// TestDueHeap keeps the n greatest of what it is offered, and nothing
// when there is no room.
func TestDueHeap(t *testing.T) {
	h := &dueHeap[int]{less: func(a, b int) bool { return a < b }}
	for _, x := range []int{5, 1, 9, 3, 7, 2, 8} {
		h.offer(x, 3)
	}
	got := slices.Sorted(slices.Values(h.items))
	if !slices.Equal(got, []int{7, 8, 9}) {
		t.Errorf("kept %v, want the three greatest", got)
	}
	empty := &dueHeap[int]{less: func(a, b int) bool { return a < b }}
	empty.offer(1, 0)
	if len(empty.items) != 0 {
		t.Errorf("kept %v with no room", empty.items)
	}
}
