package crawl

import (
	"errors"
	"html"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// recordingSink keeps what it is given; after failAfter events it fails
// every call, as a message log that went away.
type recordingSink struct {
	mu        sync.Mutex
	got       map[string]int    // file@offset -> deliveries
	titles    map[string]string // of the pages, not revisits
	failAfter int               // 0: never fails
	calls     int
}

func (s *recordingSink) Capture(e events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.failAfter > 0 && s.calls > s.failAfter {
		return errors.New("sink unavailable")
	}
	if s.got == nil {
		s.got, s.titles = map[string]int{}, map[string]string{}
	}
	if e.Status == 200 && !e.Revisit { // a revisit's title is its first capture's
		s.titles[e.URL] = e.Title
	}
	s.got[e.WARCFile+"@"+strconv.FormatInt(e.Offset, 10)]++
	return nil
}

func (s *recordingSink) Close() error { return nil }

// TestOutboxDeliversAtLeastOnce: a sink that fails part way stops the
// crawl with events made durable but not delivered; the next start
// delivers them before anything else, so that every capture in the index
// reaches a sink at least once, and a clean run leaves the outbox empty.
func TestOutboxDeliversAtLeastOnce(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 26, Hosts: 3, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	cfg := testConfig(t, web, 4, 2*time.Millisecond)
	first := &recordingSink{failAfter: 15}
	cfg.Sinks = []events.Sink{first}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err == nil {
		t.Fatal("a failing sink did not stop the crawl")
	}

	second := &recordingSink{}
	cfg.Sinks = []events.Sink{second}
	runCrawl(t, cfg)

	a, err := archive.Open(cfg.DataDir, cfg.Canon)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	captures, missing := 0, 0
	if err := a.Captures(func(r store.CaptureRecord) bool {
		captures++
		k := r.File + "@" + strconv.FormatInt(r.Offset, 10)
		if first.got[k]+second.got[k] == 0 {
			missing++
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if captures < 20 || missing != 0 {
		t.Errorf("%d of %d captures never reached a sink", missing, captures)
	}
	if left, err := a.Undelivered(); err != nil || left != 0 {
		t.Errorf("%d events left in the outbox after a clean run", left)
	}
	// A page's event carries its title, including after a restart.
	titled := 0
	for _, s := range []*recordingSink{first, second} {
		for u, title := range s.titles {
			m := regexp.MustCompile(`<title>([^<]*)</title>`).FindSubmatch(web.Body(u))
			if m == nil {
				continue
			}
			if want := strings.Join(strings.Fields(html.UnescapeString(string(m[1]))), " "); title != want {
				t.Errorf("the event of %s has title %q, want %q", u, title, want)
			}
			titled++
		}
	}
	if titled < 20 {
		t.Errorf("%d events of titled pages, want every page's", titled)
	}
}
