package render

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// behaveJS is the page script the behaviours run through (behave.js):
// evaluated in each document before the page's own scripts, it records
// what a page makes clickable and the navigations it asks for, and
// scrolls, clicks and reads for the renderer.
//
//go:embed behave.js
var behaveJS string

// The bounds of the page script.
const (
	// maxFoundLinks bounds the links a page's DOM is read for, over all
	// its steps (the crawl keeps --max-links-per-page of them).
	maxFoundLinks = 10000
	// maxScan bounds the elements looked through for the next control to
	// click: a huge DOM is not styled whole at every click.
	maxScan = 5000
	// maxScrollSteps bounds the viewport steps of one scroll to the bottom.
	maxScrollSteps = 200
	// timerWait is the longest timeout, in milliseconds, a page's load
	// waits for: a script that writes its links a moment after the load
	// (a splash, a deferred render) is waited for, a poll every minute is
	// not.
	timerWait = 3000
)

// pageScript is behave.js with cfg's settings.
func pageScript(cfg Config) string {
	settings, _ := json.Marshal(map[string]any{
		"capture": cfg.MaxNavigations > 0, "maxNavs": max(cfg.MaxNavigations, 0), "maxLinks": maxFoundLinks,
		"maxScan": maxScan, "timerWait": timerWait,
	})
	return strings.Replace(behaveJS, "const cfg = WEFT_CONFIG;", "const cfg = "+string(settings)+";", 1)
}

// readJS reads the settled page: through the page script, which has kept
// the links of every step and the navigations it captured, or, in a
// document it is missing from, from the DOM alone.
const readJS = `(() => {
	if (window.__weft) return window.__weft.read();
	const links = [];
	for (const a of document.querySelectorAll('a[href], area[href]')) if (!a.relList.contains('nofollow')) links.push(a.href);
	for (const f of document.querySelectorAll('iframe[src], frame[src]')) links.push(f.src);
	const dt = document.doctype ? new XMLSerializer().serializeToString(document.doctype) + '\n' : '';
	const root = document.documentElement;
	return {url: location.href, links: links, navs: [], dom: root ? dt + root.outerHTML : ''};
})()`

type readout struct {
	URL   string   `json:"url"`
	Links []string `json:"links"`
	Navs  []string `json:"navs"`
	DOM   string   `json:"dom"`
}

// behave runs the bounded behaviours on the settled page: waiting for the
// timers it set to run soon, scrolling to its bottom while it grows, and
// clicking its controls; each behaviour stops at its count or after
// Config.BehaviourTime, and every step that asked for something settles
// again. It reports whether the page settled after the last of them.
func (p *Pool) behave(work context.Context, s *session, settled bool, res *Result) bool {
	// The behaviours end a tenth of the page's budget before it does:
	// the page is read then, with what they found, rather than cut and
	// its render lost.
	if dl, ok := work.Deadline(); ok {
		var cancel context.CancelFunc
		work, cancel = context.WithDeadline(work, dl.Add(-p.cfg.Timeout/10))
		defer cancel()
	}
	// step settles after an action if it made a request (or one is still
	// in flight); an action that only changed the DOM costs no idle time.
	step := func(ctx context.Context, before int) {
		s.mu.Lock()
		asked := s.requests != before || s.inflight > 0
		s.mu.Unlock()
		if asked {
			s.touch() // what the action asks for may not be paused yet
			settled = s.settle(ctx, p.cfg.Idle)
		}
	}
	run := func(do func(ctx context.Context) bool) {
		ctx, cancel := context.WithTimeout(work, p.cfg.BehaviourTime)
		defer cancel()
		for ctx.Err() == nil && do(ctx) {
		}
	}
	requests := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.requests
	}
	run(func(ctx context.Context) bool {
		before := requests()
		waited, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf("window.__weft ? window.__weft.timers(%d) : false", timerWait), chromedp.EvalAwaitPromise))
		if err == nil && waited {
			step(ctx, before)
		}
		return false
	})
	if p.cfg.MaxScrolls > 0 {
		run(func(ctx context.Context) bool {
			if res.Scrolls >= p.cfg.MaxScrolls {
				return false
			}
			before := requests()
			h0, err := chromedp.Run(ctx, chromedp.Evaluate[float64]("window.__weft ? window.__weft.height() : 0"))
			if err != nil {
				return false
			}
			grew, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf("window.__weft ? window.__weft.scroll(%d) : false", maxScrollSteps), chromedp.EvalAwaitPromise))
			if err != nil {
				return false
			}
			step(ctx, before)
			if !grew {
				// What the scroll asked for may have made the page grow
				// once it came.
				h1, err := chromedp.Run(ctx, chromedp.Evaluate[float64]("window.__weft ? window.__weft.height() : 0"))
				if err != nil || h1 <= h0 {
					return false
				}
			}
			res.Scrolls++
			return true
		})
	}
	if p.cfg.MaxClicks > 0 {
		run(func(ctx context.Context) bool {
			if res.Clicks >= p.cfg.MaxClicks {
				return false
			}
			before := requests()
			what, err := chromedp.Run(ctx, chromedp.Evaluate[string]("window.__weft ? window.__weft.click() : ''", chromedp.EvalAwaitPromise))
			if err != nil || what == "" {
				return false
			}
			res.Clicks++
			step(ctx, before)
			return true
		})
	}
	if res.Scrolls+res.Clicks > 0 && work.Err() == nil {
		// What the last step asked for may not have been paused by the
		// time it was looked for: a whole idle time after the last step,
		// with nothing in flight, before the page is read.
		s.touch()
		settled = s.settle(work, p.cfg.Idle)
	}
	return settled
}

// DefaultBehaviourTime bounds each behaviour on a page by default.
const DefaultBehaviourTime = 10 * time.Second
