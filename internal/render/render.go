// Package render renders pages in headless Chromium whose every request
// goes through the caller's own fetch path.
//
// A Pool holds at most Config.Workers browsers. Each render opens a tab
// with the CDP Fetch domain enabled for every URL at the request stage:
// each request the page makes (the document, scripts, style sheets,
// XHR/fetch, images, fonts, frames, redirects) is paused and handed to the
// caller's Fetcher, and answered with Fetch.fulfillRequest from what it
// returns, or failed with Fetch.failRequest when it refuses. The browser
// itself can reach nothing: it is launched with a proxy that goes nowhere
// (a loopback listener that closes every connection, loopback included,
// since Chromium bypasses proxies for loopback by default), without QUIC,
// with WebRTC limited to proxied UDP, without DNS prefetch, background
// networking or component updates; service workers are hidden from
// pages and bypassed, and a WebSocket (which the Fetch domain does not
// see) dies at the proxy. So a request that escapes interception fails,
// and is counted (Pool.DeadEnds), as the page's when it goes to a host
// the page named, else as the browser's own (Chromium's calls home,
// which its switches do not all turn off).
//
// A page is settled when no request has been in flight for Config.Idle
// after its load event, or when its time budget (Config.Timeout) is
// spent; then bounded behaviours run (a wait for timers due soon,
// scrolling to the bottom while the page grows, clicking its controls),
// each settling again, while a script evaluated before the page's own
// captures the navigations the page asks for and keeps it on the page;
// then the links of every step, the captured navigations, the serialised
// DOM and an optional screenshot are read. A browser whose
// page overruns its budget, or that dies, is killed and replaced by a new
// one for the next render; the render returns an error, and its caller
// keeps what it had without the browser.
package render

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"time"
)

// Request is one request a rendering page makes.
type Request struct {
	URL    string      // absolute, without fragment
	Method string      // GET, POST, ...
	Header http.Header // as the browser would send them
	// Type is what the page wants it for, as CDP names it: Document,
	// Script, Stylesheet, Image, Font, XHR, Fetch, Media, Other, ...
	Type string
	// Main is true for the top frame's document (the page itself).
	Main bool
}

// Response is the answer a Fetcher gives the browser.
type Response struct {
	Status int
	Header http.Header
	Body   []byte // decoded (no Content-Encoding)
}

// Fetcher makes a rendering page's requests: the one seam through which a
// browser reaches any server. An error refuses the request, and the page
// sees a network failure.
type Fetcher interface {
	Fetch(ctx context.Context, r Request) (*Response, error)
}

// Config tunes a Pool.
type Config struct {
	// Chromium is the browser's executable; "" looks for chromium and
	// chromium-browser on the PATH.
	Chromium string
	// Workers is the most browsers alive at once, each rendering one page
	// at a time. Zero means 1.
	Workers int
	// Timeout is a page's time budget, behaviours included. Zero means 30s.
	Timeout time.Duration
	// Idle is how long no request must be in flight for the page to count
	// as settled. Zero means 500ms.
	Idle time.Duration
	// The behaviours run on a settled page, each bounded by its count and
	// by BehaviourTime; for each count zero means its default and a
	// negative number turns the behaviour off. MaxScrolls is the most
	// scrolls to the bottom, a viewport at a time, that made the page
	// grow (infinite scroll, lazy content); default 10. MaxClicks is the
	// most controls clicked that are not links to follow (buttons,
	// elements with a click handler, role=button or tab, "more" and
	// "next", menu toggles, a pointer cursor); default 20.
	// MaxNavigations is the most navigations the page's scripts ask for
	// that are captured as its links and cancelled, so that the render
	// stays on the page (history.pushState and replaceState, setting
	// location, location.assign and replace, window.open); default 100.
	// Turned off, the page navigates as a browser would, and what it
	// navigates to is not a link of it.
	MaxScrolls, MaxClicks, MaxNavigations int
	// BehaviourTime bounds each behaviour on a page (the wait for timers
	// due soon after the load, scrolling, clicking), within Timeout;
	// zero means 10s.
	BehaviourTime time.Duration
	// Screenshot captures the settled viewport as PNG.
	Screenshot bool
	// MemoryMB caps each browser's JavaScript heap
	// (--js-flags=--max-old-space-size); zero leaves V8's default.
	MemoryMB int
	// Width and Height are the viewport; zero means 1280×800.
	Width, Height int
	// Log receives browser replacements; nil discards.
	Log *slog.Logger
}

// Result is what rendering a page gave.
type Result struct {
	URL string // the document's final URL
	// Links are the absolute URLs of a[href], area[href] and
	// iframe/frame[src] the DOM had after any step (the view a click
	// replaced keeps its links), and of the navigations captured.
	Links       []string
	DOM         []byte // the settled DOM, serialised (doctype and outer HTML)
	Screenshot  []byte // PNG, with Config.Screenshot
	Requests    int    // requests the page made (every one through the Fetcher)
	Refused     int    // of which the Fetcher refused
	Settled     bool   // the network went idle within the budget (else the budget cut it)
	Clicks      int    // controls clicked
	Scrolls     int    // scrolls that grew the page
	Navigations int    // navigations captured (not followed)
}

// ErrNoChromium is returned by New when no browser can be found.
var ErrNoChromium = errors.New("render: no Chromium found (install Debian's chromium package, or give its path)")

// Find returns the path of Chromium: path if it is executable, else
// chromium or chromium-browser on the PATH.
func Find(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrNoChromium, path, err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// The defaults of Config's bounds.
const (
	DefaultWorkers = 1
	DefaultTimeout = 30 * time.Second
	DefaultIdle    = 500 * time.Millisecond

	DefaultMaxScrolls     = 10
	DefaultMaxClicks      = 20
	DefaultMaxNavigations = 100
)

func (cfg *Config) setDefaults() {
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultIdle
	}
	if cfg.MaxScrolls == 0 {
		cfg.MaxScrolls = DefaultMaxScrolls
	}
	if cfg.MaxClicks == 0 {
		cfg.MaxClicks = DefaultMaxClicks
	}
	if cfg.MaxNavigations == 0 {
		cfg.MaxNavigations = DefaultMaxNavigations
	}
	if cfg.BehaviourTime <= 0 {
		cfg.BehaviourTime = DefaultBehaviourTime
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		cfg.Width, cfg.Height = 1280, 800
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
}
