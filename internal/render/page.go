package render

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// noWorkers hides service workers from pages: their requests would come
// from another target, outside this tab's interception.
const noWorkers = `try { Object.defineProperty(Navigator.prototype, 'serviceWorker', {get() { return undefined; }, configurable: true}); } catch (e) {}`

// Render loads pageURL in a browser of the pool, every request of it made
// by f, and returns what the settled page holds. It waits for a free
// browser for at most Config.Timeout (ErrBusy then); the page then has
// Config.Timeout. A browser that fails, or a page that overruns its
// budget with none of its requests waiting on f (a script in a loop),
// costs the browser, which is replaced.
func (p *Pool) Render(ctx context.Context, pageURL string, f Fetcher) (Result, error) {
	wait, cancel := context.WithTimeoutCause(ctx, p.cfg.Timeout, ErrBusy)
	b, err := p.take(wait)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(context.Cause(wait), ErrBusy) {
			return Result{}, ErrBusy
		}
		return Result{}, err
	}
	res, broken, err := p.renderIn(ctx, b, pageURL, f)
	if err != nil && ctx.Err() != nil {
		// The caller gave up (its crawl is stopping): whatever failed
		// then failed for that, not for the page's budget, and the
		// browser is sound.
		broken = false
		err = fmt.Errorf("render: %s: cut short by its caller: %w", pageURL, context.Cause(ctx))
	}
	if broken {
		p.cfg.Log.Warn("render: browser killed and replaced", "url", pageURL, "err", err)
	}
	p.give(b, broken)
	return res, err
}

// session is one page's interception state.
type session struct {
	f         Fetcher
	pageURL   string
	tab       context.Context
	wg        sync.WaitGroup
	mu        sync.Mutex
	inflight  int
	last      time.Time
	changed   chan struct{}
	requests  int
	refused   int
	mainID    fetch.RequestID // the page's document request (the last of its redirects)
	mainFrame cdp.FrameID     // the frame the page's document is loaded in
	// capture says the top frame's navigations away from the page are
	// aborted, and the URLs of the first maxNavs of them kept in navs.
	capture bool
	maxNavs int
	navs    []string
	// cutFetching: the page's budget ran out while the fetcher worked on
	// one of its requests (which may have ended since).
	cutFetching bool
}

func (s *session) poke() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// renderIn renders in browser b. broken says b must be replaced.
func (p *Pool) renderIn(ctx context.Context, b *browser, pageURL string, f Fetcher) (res Result, broken bool, err error) {
	tab, closeTab := chromedp.NewContext(b.ctx)
	defer closeTab()
	// The tab is opened without a deadline (a deadline on a context's
	// first run would close it), then everything runs under the budget.
	if err := chromedp.Do(tab); err != nil {
		return res, true, fmt.Errorf("render: open a tab: %w", err)
	}
	work, cancel := context.WithTimeout(tab, p.cfg.Timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	s := &session{f: f, pageURL: pageURL, tab: work, last: time.Now(), changed: make(chan struct{}, 1),
		capture: p.cfg.MaxNavigations > 0, maxNavs: p.cfg.MaxNavigations}
	// The hosts the page names tell its connections at the dead-end
	// proxy from the browser's own.
	p.name(pageURL)
	paused := chromedp.Events(work, fetch.RequestPaused)
	sockets := chromedp.Events(work, network.WebSocketCreated)
	var loop sync.WaitGroup
	loop.Go(func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			p.name(ev.Request.URL)
			s.begin()
			s.wg.Go(func() { s.answer(work, ev) })
		}
	})
	loop.Go(func() {
		// A WebSocket is not paused: its connection goes to the
		// dead-end proxy, where its host tells it is the page's.
		for ev, err := range sockets {
			if err != nil {
				return
			}
			p.name(ev.URL)
		}
	})
	defer func() {
		cancel()
		loop.Wait()
		s.wg.Wait()
		res.Requests, res.Refused = s.requests, s.refused
	}()
	setup := []chromedp.Action[chromedp.Void]{
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}}})
			return err
		}),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, t, network.SetBypassServiceWorker, network.SetBypassServiceWorkerParams{Bypass: true})
			return err
		}),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			if _, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: noWorkers}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: pageScript(p.cfg)})
			return err
		}),
	}
	if err := chromedp.Do(work, setup...); err != nil {
		return res, true, fmt.Errorf("render: set up interception: %w", err)
	}
	navErr := chromedp.Do(work, chromedp.Navigate(pageURL))
	if navErr != nil && work.Err() == nil {
		var le *chromedp.LoadError
		if !errors.As(navErr, &le) {
			return res, true, fmt.Errorf("render: load %s: %w", pageURL, navErr)
		}
		// The document itself failed (refused, say): nothing to read.
		return res, false, fmt.Errorf("render: load %s: %s", pageURL, le.ErrorText)
	}
	s.touch()
	res.Settled = navErr == nil && s.settle(work, p.cfg.Idle)
	res.Settled = p.behave(work, s, res.Settled, &res)
	if work.Err() != nil {
		// Over budget. A page with none of its requests waiting on the
		// fetcher may hold its browser's renderer in a loop: the browser
		// goes. One that waits on the fetcher (a busy host's clock) is
		// only slow: its tab goes, the browser stays.
		s.mu.Lock()
		waiting := s.inflight > 0 || s.cutFetching
		s.mu.Unlock()
		return res, !waiting, fmt.Errorf("render: %s: over its %v budget: %w", pageURL, p.cfg.Timeout, work.Err())
	}
	read, err := chromedp.Run(work, chromedp.Evaluate[readout](readJS))
	if err != nil {
		return res, work.Err() != nil, fmt.Errorf("render: read %s: %w", pageURL, err)
	}
	res.URL, res.DOM = read.URL, []byte(read.DOM)
	s.mu.Lock()
	navs := append(read.Navs, s.navs...)
	s.mu.Unlock()
	res.Links, res.Navigations = mergeLinks(read.Links, navs, p.cfg.MaxNavigations)
	if p.cfg.Screenshot {
		shot, err := chromedp.Run(work, chromedp.CaptureScreenshot())
		if err != nil {
			return res, work.Err() != nil, fmt.Errorf("render: screenshot of %s: %w", pageURL, err)
		}
		res.Screenshot = shot
	}
	return res, false, nil
}

// mergeLinks is the DOM's links and, after them, the navigations
// captured (at most maxNavs of those), each once; n counts the
// navigations kept.
func mergeLinks(links, navs []string, maxNavs int) (all []string, n int) {
	seen := make(map[string]bool, len(links)+len(navs))
	for _, l := range links {
		if !seen[l] {
			seen[l] = true
			all = append(all, l)
		}
	}
	for _, l := range navs {
		if n >= maxNavs {
			break
		}
		if !seen[l] {
			seen[l] = true
			all = append(all, l)
		}
		n++
	}
	return all, n
}

func (s *session) begin() {
	s.mu.Lock()
	s.inflight++
	s.requests++
	s.mu.Unlock()
	s.poke()
}

// touch counts an action as activity: settling waits a whole idle time
// after it.
func (s *session) touch() {
	s.mu.Lock()
	s.last = time.Now()
	s.mu.Unlock()
}

func (s *session) end(refused bool) {
	s.mu.Lock()
	s.inflight--
	s.last = time.Now()
	if refused {
		s.refused++
	}
	s.mu.Unlock()
	s.poke()
}

// settle waits until no request has been in flight for idle, and reports
// whether it came before ctx ended.
func (s *session) settle(ctx context.Context, idle time.Duration) bool {
	t := time.NewTimer(idle)
	defer t.Stop()
	for {
		s.mu.Lock()
		n, quiet := s.inflight, time.Since(s.last)
		s.mu.Unlock()
		if n == 0 && quiet >= idle {
			return true
		}
		wait := idle
		if n == 0 {
			wait = idle - quiet
		}
		t.Reset(wait)
		select {
		case <-t.C:
		case <-s.changed:
		case <-ctx.Done():
			return false
		}
	}
}

// answer has the Fetcher make one paused request and gives the browser its
// answer, or fails the request.
func (s *session) answer(ctx context.Context, ev fetch.EventRequestPaused) {
	r := Request{URL: ev.Request.URL, Method: ev.Request.Method, Header: http.Header{}, Type: string(ev.ResourceType)}
	for k, v := range ev.Request.Headers {
		r.Header.Set(k, fmt.Sprint(v))
	}
	if ev.ResourceType == network.ResourceTypeDocument {
		// The first document asked for is the page; a redirect of it is
		// still the page. Any other document of its frame is the page
		// navigating away, which its script did not cancel (or could
		// not): captured, and aborted, which leaves the page where it is
		// (an aborted navigation commits no error page). The browser
		// never asks for it: the crawl does, if it admits the link.
		s.mu.Lock()
		away := false
		switch {
		case s.mainID == "" || ev.RedirectedRequestID == s.mainID:
			s.mainID, s.mainFrame, r.Main = ev.RequestID, ev.FrameID, true
		case ev.FrameID == s.mainFrame && s.capture:
			away = true
			if ev.Request.Method == http.MethodGet && len(s.navs) < s.maxNavs {
				if u, err := url.Parse(ev.Request.URL); err == nil {
					u.Fragment = ""
					s.navs = append(s.navs, u.String())
				}
			}
		}
		s.mu.Unlock()
		if away {
			_, _ = cdp.Call(ctx, chromedp.FromContext(ctx).Target, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonAborted})
			s.end(false)
			return
		}
	}
	resp, err := s.f.Fetch(ctx, r)
	if ctx.Err() != nil {
		s.mu.Lock()
		s.cutFetching = true // the budget ran out while the fetcher worked
		s.mu.Unlock()
	}
	t := chromedp.FromContext(ctx).Target
	if err != nil || resp == nil {
		_, _ = cdp.Call(ctx, t, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		s.end(true)
		return
	}
	hdr := make([]*fetch.HeaderEntry, 0, len(resp.Header))
	for k, vs := range resp.Header {
		switch strings.ToLower(k) {
		case "content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive":
			continue // the body given is decoded and whole
		}
		for _, v := range vs {
			hdr = append(hdr, &fetch.HeaderEntry{Name: k, Value: v})
		}
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	_, _ = cdp.Call(ctx, t, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: ev.RequestID, ResponseCode: int64(status), ResponseHeaders: hdr, Body: resp.Body})
	s.end(false)
}
