package synthweb

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLivePages: live pages are linked and reachable, change at their
// rates (as LiveChanges reports), carry their edition as ETag and answer a
// conditional request for it with 304.
func TestLivePages(t *testing.T) {
	t.Parallel()
	w := startWeb(t, Config{Seed: 5, Hosts: 2, PagesPerHost: 12, LivePages: 4, RobotsKinds: []RobotsKind{RobotsNotFound},
		LiveIntervals: []time.Duration{20 * time.Millisecond, 0}})
	c := newClient(t, w)
	var live []PageInfo
	for _, p := range w.AllPages() {
		if p.Role == "live" {
			live = append(live, p)
			if !p.Reachable || len(p.Links) != 1 {
				t.Errorf("%s: reachable %v, links %v", p.URL, p.Reachable, p.Links)
			}
		}
	}
	if len(live) != 8 {
		t.Fatalf("%d live pages, want 4 per host", len(live))
	}
	fast, never := live[0].URL, live[1].URL
	first := get(t, c, fast)
	time.Sleep(300 * time.Millisecond)
	changes, interval, ok := w.LiveChanges(fast, time.Now())
	if !ok || interval != 20*time.Millisecond || len(changes) < 3 {
		t.Fatalf("LiveChanges(%s) = %d changes, %v, %v; want several in 300 ms", fast, len(changes), interval, ok)
	}
	second := get(t, c, fast)
	if string(first.body) == string(second.body) || first.header.Get("ETag") == second.header.Get("ETag") {
		t.Error("a page changing every 20 ms did not change in 300 ms")
	}
	if ch, iv, ok := w.LiveChanges(never, time.Now()); !ok || iv != 0 || len(ch) != 0 {
		t.Errorf("a page that never changes: %d changes, interval %v", len(ch), iv)
	}
	// Last-Modified dates the last change, to the second (the page may
	// have changed again since LiveChanges was asked); a page that never
	// changes was last changed long before the start (the web was running
	// before the crawler came).
	if lm, err := http.ParseTime(second.header.Get("Last-Modified")); err != nil || lm.Before(changes[len(changes)-1].Truncate(time.Second)) {
		t.Errorf("Last-Modified of a page changing every 20 ms: %q (%v), its last change %v", second.header.Get("Last-Modified"), err, changes[len(changes)-1])
	}
	a := get(t, c, never)
	if lm, err := http.ParseTime(a.header.Get("Last-Modified")); err != nil || time.Since(lm) < 300*24*time.Hour {
		t.Errorf("Last-Modified of a page that never changes: %q (%v); want a date over 300 days back", a.header.Get("Last-Modified"), err)
	}
	req := newConditional(t, never, a.header.Get("ETag"))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 304 || !strings.HasPrefix(a.header.Get("ETag"), `"e`) {
		t.Errorf("conditional request for the current edition: %d, ETag %q", resp.StatusCode, a.header.Get("ETag"))
	}
	if _, _, ok := w.LiveChanges(w.Seeds()[0], time.Now()); ok {
		t.Error("LiveChanges answers for a page that is not live")
	}
}

func newConditional(t *testing.T, url, etag string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("If-None-Match", etag)
	return req
}
