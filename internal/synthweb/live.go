package synthweb

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Live pages (Config.LivePages) change while the web runs, each as a
// Poisson process of a known mean interval, and honour conditional
// requests: their ETag is their edition, and an If-None-Match that names
// it is answered 304. Their Last-Modified is the time of their last
// change, and they existed before the web started, as a web a crawler
// comes upon has been running: the last change before the start lies an
// exponential time back at the page's own rate (a page that never
// changes was last changed neverChanged ago). LiveChanges reports the
// true change times since the start, for a test to measure how stale a
// crawler's copies were.

// neverChanged is how long before the web's start a live page that
// never changes was last modified.
const neverChanged = 400 * 24 * time.Hour

// liveClock is one live page's change times, drawn as the web runs.
type liveClock struct {
	mu       sync.Mutex
	interval time.Duration // mean; 0: never changes
	r        rng
	age      float64     // the page's age at the start, in mean intervals (an exponential draw)
	times    []time.Time // changes so far, and the next one drawn
}

// before is the page's last change before the web started at start.
func (c *liveClock) before(start time.Time) time.Time {
	if c.interval <= 0 {
		return start.Add(-neverChanged)
	}
	return start.Add(-time.Duration(c.age * float64(c.interval)))
}

// edition returns how many times the page changed up to t, and when it
// last did (before the start if it has not since).
func (c *liveClock) edition(start, t time.Time) (int, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.interval <= 0 {
		return 0, c.before(start)
	}
	for len(c.times) == 0 || !c.times[len(c.times)-1].After(t) {
		prev := start
		if n := len(c.times); n > 0 {
			prev = c.times[n-1]
		}
		gap := time.Duration(c.r.exp() * float64(c.interval))
		c.times = append(c.times, prev.Add(max(gap, time.Millisecond)))
	}
	n := len(c.times) - 1 // the last one drawn is in the future
	if n == 0 {
		return 0, c.before(start)
	}
	return n, c.times[n-1]
}

// addLivePages appends an ordinary host's live pages.
func (w *Web) addLivePages(h *host) {
	for k := range w.cfg.LivePages {
		h.pages = append(h.pages, page{path: "/live/" + strconv.Itoa(k), role: roleLive, status: http.StatusOK, family: int32(k)})
		h.live = append(h.live, &liveClock{
			interval: w.cfg.LiveIntervals[(h.idx*w.cfg.LivePages+k)%len(w.cfg.LiveIntervals)],
			r:        newRNG(w.cfg.Seed, streamLive, uint64(h.idx), uint64(k)),
			age:      ageRNG(w.cfg.Seed, h.idx, k),
		})
	}
}

// ageRNG is live page k of host h's age at the web's start, in mean
// change intervals: an exponential draw of its own stream, so that it
// shifts none of the page's change times.
func ageRNG(seed int64, h, k int) float64 {
	r := newRNG(seed, streamLiveAge, uint64(h), uint64(k))
	return r.exp()
}

// renderLive appends the body of live page p as it is at t: its edition's
// story, and a link home.
func (w *Web) renderLive(dst []byte, h *host, p int32, edition int) []byte {
	k := h.pages[p].family
	r := newRNG(w.cfg.Seed, streamLive, uint64(h.idx), uint64(k)<<32|uint64(edition)+1)
	dst = append(dst, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Live "...)
	dst = strconv.AppendInt(dst, int64(k), 10)
	dst = append(dst, "</title>\n</head>\n<body>\n<p><a href=\"/\">home</a></p>\n<h1>Edition "...)
	dst = strconv.AppendInt(dst, int64(edition), 10)
	dst = append(dst, "</h1>\n<p>"...)
	dst = w.text.appendWords(dst, &r, 200)
	return append(dst, ".</p>\n</body>\n</html>\n"...)
}

// serveLive answers a live page, 304 to an If-None-Match naming its
// current edition.
func (w *Web) serveLive(rw *logWriter, r *http.Request, h *host, p int32) {
	edition, at := h.live[h.pages[p].family].edition(w.started, time.Now())
	etag := `"e` + strconv.Itoa(edition) + `"`
	rw.Header().Set("ETag", etag)
	rw.Header().Set("Last-Modified", at.UTC().Format(http.TimeFormat))
	if r.Header.Get("If-None-Match") == etag {
		rw.WriteHeader(http.StatusNotModified)
		return
	}
	writeBody(rw, r, http.StatusOK, "text/html; charset=utf-8", w.renderLive(nil, h, p, edition))
}

// LiveChanges returns the times a live page changed up to until, and its
// mean change interval (0: it never changes); false if url is not a live
// page.
func (w *Web) LiveChanges(canonicalURL string, until time.Time) ([]time.Time, time.Duration, bool) {
	t, ok := w.lookup(canonicalURL)
	if !ok {
		return nil, 0, false
	}
	h := w.hosts[t.h]
	if h.pages[t.p].role != roleLive {
		return nil, 0, false
	}
	c := h.live[h.pages[t.p].family]
	n, _ := c.edition(w.started, until)
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.times[:n]...), c.interval, true
}
