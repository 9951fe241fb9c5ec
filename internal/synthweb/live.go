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
// it is answered 304. LiveChanges reports the true change times, for a
// test to measure how stale a crawler's copies were.

// liveClock is one live page's change times, drawn as the web runs.
type liveClock struct {
	mu       sync.Mutex
	interval time.Duration // mean; 0: never changes
	r        rng
	times    []time.Time // changes so far, and the next one drawn
}

// edition returns how many times the page changed up to t, and when it
// last did (the web's start if never).
func (c *liveClock) edition(start, t time.Time) (int, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.interval <= 0 {
		return 0, start
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
		return 0, start
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
		})
	}
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
