package crawl

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
)

// Ctrl-C in the middle of a fetch is not the host's error.
func TestInterruptedFetchIsNotAnError(t *testing.T) {
	started := make(chan struct{}, 1)
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			select {
			case started <- struct{}{}:
			default:
			}
			<-r.Context().Done() // hang until the client gives up
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	cfg.Grace = 100 * time.Millisecond // then the hanging fetch is cut
	sum := runInterrupted(t, cfg, started)
	if sum.StoppedBy != "interrupted" || len(sum.Errors) != 0 {
		t.Errorf("stopped by %q with errors %v; want interrupted and no errors", sum.StoppedBy, sum.Errors)
	}
}

// runInterrupted runs a crawl and cancels its context when started fires.
func runInterrupted(t *testing.T, cfg Config, started <-chan struct{}) Summary {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		select {
		case <-started:
			cancel()
		case <-ctx.Done():
		}
	}()
	sum, err := c.Run(ctx)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	return sum
}

// A fetch in flight when the crawl is interrupted may finish within the
// grace period, and is archived like any other.
func TestInterruptLetsFetchesInFlightFinish(t *testing.T) {
	started := make(chan struct{}, 1)
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			select {
			case started <- struct{}{}:
			default:
			}
			time.Sleep(300 * time.Millisecond) // a slow page, still answered
			page(rw, "/next")
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	cfg.Grace = 5 * time.Second
	sum := runInterrupted(t, cfg, started)
	if sum.StoppedBy != "interrupted" || sum.Pages != 1 || sum.ByStatus["2xx"] != 1 {
		t.Fatalf("stopped by %q after %d pages (%v); want the page in flight finished", sum.StoppedBy, sum.Pages, sum.ByStatus)
	}
	if got := mw.paths("a.test"); slices.Contains(got, "/next") {
		t.Errorf("requests %v: a new lease was taken after the interrupt", got)
	}
	recs := 0
	for _, name := range sum.WARCFiles {
		for _, r := range readWARC(t, cfg.DataDir+"/warc/"+name) {
			if r.header.Get("WARC-Type") == "response" && strings.HasSuffix(r.header.Get("WARC-Target-URI"), "/") {
				recs++
			}
		}
	}
	if recs != 1 {
		t.Errorf("%d response records for the page finished in the grace period, want 1", recs)
	}
}

// A host fetched just before a restart keeps its clock in the next run even
// with nothing left in its queue: a link to it found at once must wait.
func TestRestartKeepsClockOfHostWithNothingQueued(t *testing.T) {
	const crawlDelay = 2 * time.Second // a.test's; --delay is much shorter
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, "User-agent: *\nCrawl-delay: 2\n")
			case "/":
				page(rw, w.url("b.test", "/"))
			default:
				page(rw)
			}
		},
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			page(rw, w.url("a.test", "/x"))
		},
	})
	cfg := mw.config(t, 50*time.Millisecond, mw.url("a.test", "/"))
	cfg.Scope.Mode = "any"
	cfg.MaxPages = 1 // a.test/ only; b.test/ stays queued, a.test has nothing left
	runCrawl(t, cfg)
	cfg.MaxPages = 0
	runCrawl(t, cfg) // b.test/ at once, and its link to a.test/x
	reqs := mw.requests("a.test")
	if len(reqs) < 3 {
		t.Fatalf("a.test requests %v; want the second run to reach it", mw.paths("a.test"))
	}
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].start.Sub(reqs[i-1].start); gap < crawlDelay {
			t.Errorf("a.test: %s started %v after %s, want >= its Crawl-delay %v", reqs[i].path, gap, reqs[i-1].path, crawlDelay)
		}
	}
}

// A run of 429s goes on across a restart: a host that answers nothing but
// 429 is given up after GiveUpAfter of them in a row over both runs, as
// the server counts them, not after that many more in the second run.
func TestThrottleRunSurvivesRestart(t *testing.T) {
	const giveUpAfter = 4
	started := make(chan struct{}, 1)
	var pages atomic.Int32
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			if pages.Add(1) == 2 { // the first run stops with its second 429 in flight
				started <- struct{}{}
			}
			rw.WriteHeader(http.StatusTooManyRequests)
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	cfg.Grace = 5 * time.Second
	cfg.Politeness = frontier.Politeness{GiveUpAfter: giveUpAfter, MinBackoff: 20 * time.Millisecond, MaxBackoff: 40 * time.Millisecond}
	runInterrupted(t, cfg, started)
	first := pages.Load()
	if first < 1 || first >= giveUpAfter {
		t.Fatalf("first run: %d 429s, want at least one and fewer than %d", first, giveUpAfter)
	}
	sum := runCrawl(t, cfg)
	if got := pages.Load(); got != giveUpAfter || sum.GaveUp != 1 {
		t.Errorf("429s over both runs: %d (%d in the first), host given up: %d; want it given up after %d in a row",
			got, first, sum.GaveUp, giveUpAfter)
	}
}
