package crawl

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/testwait"
)

// eventLog keeps every event it is given.
type eventLog struct {
	mu  sync.Mutex
	all []events.Event
}

func (s *eventLog) Capture(e events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, e)
	return nil
}

func (s *eventLog) Close() error { return nil }

func (s *eventLog) events() []events.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]events.Event(nil), s.all...)
}

// twinBody is the one page two URLs of titleWeb serve: the second fetched
// is a revisit of the first, not read again.
const twinBody = `<!doctype html><html><head><title>Twice
  Served</title></head><body><a href="/leaf">leaf</a></body></html>`

// titleWeb serves a home page linking to /a and /b, which serve twinBody
// with an ETag (a 304 to a request naming it), and /leaf.
func titleWeb(t *testing.T) *miniWeb {
	return newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"t.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/a", "/b")
			case "/a", "/b":
				rw.Header().Set("ETag", `"twin"`)
				if r.Header.Get("If-None-Match") == `"twin"` {
					rw.WriteHeader(http.StatusNotModified)
					return
				}
				rw.Header().Set("Content-Type", "text/html")
				rw.Write([]byte(twinBody))
			default:
				page(rw)
			}
		},
	})
}

// checkTwinTitles fails unless every capture of /a and /b in the index,
// and every event of one, names the page's title, and at least one of
// each is a revisit whose status is one of statuses.
func checkTwinTitles(t *testing.T, mw *miniWeb, cfg Config, got []events.Event, statuses ...int) {
	t.Helper()
	const want = "Twice Served"
	twin := map[string]bool{mw.url("t.test", "/a"): true, mw.url("t.test", "/b"): true}
	revisit := func(status int, is bool) bool { return is && slices.Contains(statuses, status) }
	var seenEvent bool
	for _, e := range got {
		if !twin[e.URL] {
			continue
		}
		if e.Title != want {
			t.Errorf("event of %s (status %d, revisit %v): title %q, want %q", e.URL, e.Status, e.Revisit, e.Title, want)
		}
		seenEvent = seenEvent || revisit(e.Status, e.Revisit)
	}
	a, err := archive.Open(cfg.DataDir, cfg.Canon)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var seenCapture bool
	if err := a.Captures(func(r store.CaptureRecord) bool {
		if twin[r.URL] {
			if r.Title != want {
				t.Errorf("capture of %s (status %d, kind %d): title %q, want %q", r.URL, r.Status, r.Kind, r.Title, want)
			}
			seenCapture = seenCapture || revisit(r.Status, r.Kind == store.CaptureRevisit)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if !seenEvent || !seenCapture {
		t.Errorf("no revisit with status %v among the events (%v) or the captures (%v)", statuses, seenEvent, seenCapture)
	}
}

// TestRevisitNamesItsTitle: a copy of a page captured already is written
// as a revisit and not parsed again (its links were followed), but its
// capture record and its page event still carry the page's title, the
// one its first capture has.
func TestRevisitNamesItsTitle(t *testing.T) {
	mw := titleWeb(t)
	cfg := mw.config(t, time.Millisecond, mw.url("t.test", "/"))
	sink := &eventLog{}
	cfg.Sinks = []events.Sink{sink}
	sum := runCrawl(t, cfg)
	if sum.Revisits != 1 {
		t.Fatalf("%d revisits, want /a or /b's", sum.Revisits)
	}
	checkTwinTitles(t, mw, cfg, sink.events(), http.StatusOK)
}

// TestNotModifiedNamesItsTitle: a 304 to a recrawl's conditional request
// is archived as a revisit with no body to read; its capture record and
// its page event carry the title of the capture it confirms.
func TestNotModifiedNamesItsTitle(t *testing.T) {
	mw := titleWeb(t)
	cfg := mw.config(t, time.Millisecond, mw.url("t.test", "/"))
	cfg.Recrawl = &recrawl.Policy{Min: 100 * time.Millisecond, Max: time.Hour, Prior: 1}
	cfg.RecrawlScan = 20 * time.Millisecond
	sink := &eventLog{}
	cfg.Sinks = []events.Sink{sink}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx)
		ran <- err
	}()
	// Events are given once their batch is durable: a 304's event means
	// its capture record is in the index.
	testwait.Eventually(t, time.Minute, "a 304 to /a or /b delivered as an event", func() bool {
		for _, e := range sink.events() {
			if e.Status == http.StatusNotModified {
				return true
			}
		}
		return false
	})
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	checkTwinTitles(t, mw, cfg, sink.events(), http.StatusNotModified)
}
