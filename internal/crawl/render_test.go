package crawl

import (
	"context"
	"log/slog"
	"net/netip"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/browsertest"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

const renderDelay = 150 * time.Millisecond

// renderWeb starts the script hosts (and one ordinary host, which the
// crawl does not seed), with the app's page trying probe.
func renderWeb(t *testing.T, probe string) *synthweb.Web {
	t.Helper()
	return startWeb(t, synthweb.Config{Seed: 5, Hosts: 1, PagesPerHost: 12, HostileKinds: []string{synthweb.ScriptApp, synthweb.ScriptNone}, ScriptProbe: probe})
}

func renderConfig(t *testing.T, web *synthweb.Web, mode string) Config {
	cfg := testConfig(t, web, 4, renderDelay)
	cfg.Seeds = web.HostileSeeds()
	cfg.Render = RenderConfig{Mode: mode, Chromium: browsertest.Chromium(t), Workers: 2, Timeout: 60 * time.Second, Idle: 300 * time.Millisecond, MaxClicks: 2}
	return cfg
}

// checkServerSide reads the web's request log: every page script made a
// link to was fetched; no host had two requests in flight, or a request
// that began within the delay of the end of the one before; and every
// request came from weft's fetcher (its User-Agent), none from a browser.
func checkServerSide(t *testing.T, web *synthweb.Web, ua string) {
	t.Helper()
	app := web.HostileSeeds()[0]
	asked := map[string]bool{}
	per := map[string][]synthweb.Request{}
	for _, r := range web.Log() {
		per[r.Host] = append(per[r.Host], r)
		if strings.HasPrefix(app, "http://"+r.Host+"/") {
			asked[r.Path] = true
		}
		if r.UserAgent != ua {
			t.Errorf("%s%s asked by %q, not weft's fetcher", r.Host, r.Path, r.UserAgent)
		}
	}
	for _, p := range append(slices.Clone(synthweb.ScriptAppLinks), "/app.js", "/links.json", "/more.json", "/logo.png") {
		if !asked[p] {
			t.Errorf("%s never requested (asked: %v)", p, asked)
		}
	}
	// The app's script of the other host was asked of that host, under
	// its clock, among that host's own pages (checked below).
	lib := false
	for _, r := range per[strings.TrimSuffix(strings.TrimPrefix(web.HostileSeeds()[1], "http://"), "/")] {
		lib = lib || r.Path == "/lib.js"
	}
	if !lib {
		t.Errorf("the app's script of the other host, /lib.js, never requested")
	}
	checkPolite(t, web, per)
}

// checkPolite reads the requests of each host (per, from the web's log):
// none had two requests in flight, or a request that began within the
// delay of the end of the one before.
func checkPolite(t *testing.T, web *synthweb.Web, per map[string][]synthweb.Request) {
	t.Helper()
	for host, reqs := range per {
		sort.Slice(reqs, func(i, j int) bool { return reqs[i].Start.Before(reqs[j].Start) })
		for i := 1; i < len(reqs); i++ {
			prev, next := reqs[i-1], reqs[i]
			if gap := next.Start.Sub(prev.End); gap < renderDelay {
				t.Errorf("%s: %s began %v after %s ended, want at least %v", host, next.Path, gap, prev.Path, renderDelay)
			}
		}
	}
	audit := synthweb.Audit(web, renderDelay)
	for _, s := range audit.Breaches() {
		t.Errorf("politeness: %s", s)
	}
}

// With --render always, a crawl finds every page the app's scripts link
// to, inline, from app.js, from fetched JSON and behind a click; every
// request the browser needed was weft's, polite to the host as any other,
// and the page script's attempts at a forbidden address reached nothing.
func TestRenderAlwaysFindsScriptLinksPolitely(t *testing.T) {
	forbidden := listenTally(t, "127.0.4.1:0")
	web := renderWeb(t, forbidden.ln.Addr().String())
	cfg := renderConfig(t, web, RenderAlways)
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Fetch.DenyCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.4.0/24")}
	sum := runCrawl(t, cfg)
	b := sum.Browser
	if b == nil || b.Pages == 0 {
		t.Fatalf("nothing rendered: %+v", b)
	}
	t.Logf("pages %d; render %+v", sum.Pages, *b)
	checkServerSide(t, web, cfg.UserAgent)
	if n := forbidden.accepted.Load(); n != 0 {
		t.Errorf("the forbidden server accepted %d connections", n)
	}
	if b.Refused < 2 {
		t.Errorf("%d browser requests refused, want the script's fetch and image of the forbidden address at least", b.Refused)
	}
	if b.NewLinks < int64(len(synthweb.ScriptAppLinks)) {
		t.Errorf("%d new links from rendering, want at least %d", b.NewLinks, len(synthweb.ScriptAppLinks))
	}
	checkDOMRecord(t, cfg, sum, web.HostileSeeds()[0])
}

// checkDOMRecord finds, in the crawl's WARC files, the app page's
// rendered DOM: a resource record named urn:dom:<page>, concurrent to the
// page's response record, holding the links its scripts made; and the
// exact bytes of app.js and links.json, archived as the page's
// requisites. No record but the page's own capture (its request,
// response or revisit, and its metadata) is named by the page's URL.
func checkDOMRecord(t *testing.T, cfg Config, sum Summary, app string) {
	t.Helper()
	responses := map[string]string{} // record ID -> target URI
	var doms []warcRecord
	requisites := map[string]bool{}
	for _, f := range sum.WARCFiles {
		for _, r := range readWARC(t, filepath.Join(cfg.warcDir(), f)) {
			uri, typ := r.header.Get("WARC-Target-URI"), r.header.Get("WARC-Type")
			switch typ {
			case "response":
				responses[r.header.Get("WARC-Record-ID")] = uri
				requisites[strings.TrimPrefix(uri, strings.TrimSuffix(app, "/"))] = true
			case "resource":
				if uri == domURN+app {
					doms = append(doms, r)
				}
			}
			if uri == app && typ != "request" && typ != "response" && typ != "revisit" && typ != "metadata" {
				t.Errorf("a %s record is named by the page's URL %s: an index would take it for a capture of the page", typ, app)
			}
		}
	}
	for _, p := range []string{"/app.js", "/links.json", "/more.json", "/logo.png"} {
		if !requisites[p] {
			t.Errorf("no response record for the app's %s", p)
		}
	}
	if len(doms) != 1 {
		t.Fatalf("%d records named %s%s, want the one rendered DOM", len(doms), domURN, app)
	}
	r := doms[0]
	if got := responses[r.header.Get("WARC-Concurrent-To")]; got != app {
		t.Errorf("the DOM record is concurrent to %q's response, want %q's", got, app)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("the DOM record's Content-Type is %q", ct)
	}
	for _, p := range synthweb.ScriptAppLinks {
		if !strings.Contains(string(r.block), `href="`+p+`"`) {
			t.Errorf("the rendered DOM lacks the link to %s", p)
		}
	}
}

// With --render auto, the app's shell is rendered (a <noscript>, little
// text) and its static pages are not; the host whose scripts add no link
// is rendered GiveUpAfter times, then no more; every script-made page is
// found, and the browser's requests keep the delay.
func TestRenderAutoLearnsPerHost(t *testing.T) {
	web := renderWeb(t, "")
	cfg := renderConfig(t, web, RenderAuto)
	cfg.Render.Screenshot = true
	sum := runCrawl(t, cfg)
	b := sum.Browser
	if b == nil {
		t.Fatal("no render summary")
	}
	checkScreenshot(t, cfg, sum, web.HostileSeeds()[0])
	t.Logf("pages %d; render %+v", sum.Pages, *b)
	checkServerSide(t, web, cfg.UserAgent)
	// The app's "/" and three of script-none's nine pages.
	if b.Pages != 1+3 || b.HostsStopped != 1 {
		t.Errorf("rendered %d pages and stopped %d hosts, want 4 and 1", b.Pages, b.HostsStopped)
	}
	if want := int64(1 + len(synthweb.ScriptAppLinks) + 1 + synthweb.ScriptNonePages); sum.Pages < want {
		t.Errorf("%d pages fetched, want at least %d", sum.Pages, want)
	}
}

// With no Chromium the crawl goes on as --render never, and says why.
func TestRenderWithoutChromiumCrawlsAsNever(t *testing.T) {
	web := renderWeb(t, "")
	cfg := testConfig(t, web, 2, 10*time.Millisecond)
	cfg.Seeds = web.HostileSeeds()
	cfg.Render = RenderConfig{Mode: RenderAuto, Chromium: "/nonexistent/chromium"}
	sum := runCrawl(t, cfg)
	if b := sum.Browser; b == nil || b.Mode != RenderNever || !strings.Contains(b.Off, "no Chromium") || b.Pages != 0 {
		t.Fatalf("render summary %+v", b)
	}
	if want := int64(1 + 1 + synthweb.ScriptNonePages); sum.Pages != want {
		t.Fatalf("%d pages, want %d: the app's shell and script-none's pages, by their HTML", sum.Pages, want)
	}
}

// checkScreenshot finds the app page's screenshot: a PNG in a resource
// record named urn:view:<page>, concurrent to the page's response.
func checkScreenshot(t *testing.T, cfg Config, sum Summary, app string) {
	t.Helper()
	for _, f := range sum.WARCFiles {
		for _, r := range readWARC(t, filepath.Join(cfg.warcDir(), f)) {
			if r.header.Get("WARC-Type") == "resource" && r.header.Get("WARC-Target-URI") == viewURN+app {
				if r.header.Get("Content-Type") != "image/png" || !strings.HasPrefix(string(r.block), "\x89PNG") || r.header.Get("WARC-Concurrent-To") == "" {
					t.Errorf("screenshot record %v, %d bytes", r.header, len(r.block))
				}
				return
			}
		}
	}
	t.Errorf("no screenshot of %s", app)
}

// A page whose script never yields costs its browser (killed at the
// budget and replaced) but not its lease: the page keeps the link of its
// HTML, which is crawled.
func TestRenderHungPageKeepsItsStaticLinks(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 6, Hosts: 1, PagesPerHost: 12, HostileKinds: []string{synthweb.ScriptHang}})
	cfg := testConfig(t, web, 2, 10*time.Millisecond)
	cfg.Seeds = web.HostileSeeds()
	cfg.Render = RenderConfig{Mode: RenderAlways, Chromium: browsertest.Chromium(t), Timeout: 3 * time.Second, Idle: 200 * time.Millisecond}
	sum := runCrawl(t, cfg)
	b := sum.Browser
	if b == nil || b.Fallbacks != 1 || b.Restarts != 1 {
		t.Fatalf("render summary %+v, want one fallback and one browser replaced", b)
	}
	asked := false
	for _, r := range web.Log() {
		asked = asked || r.Path == "/p/1"
	}
	if !asked {
		t.Fatal("the hung page's static link was not crawled")
	}
}

// What a page's own requests answer moves its host's clock as any
// request's answer does: a 429 with a Retry-After to the browser's
// fetch() holds the host's next request back that long, seen from the
// server's side.
func TestRenderKeepsTheRetryAfterOfItsRequests(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 7, Hosts: 1, PagesPerHost: 12, HostileKinds: []string{synthweb.ScriptThrottle}})
	cfg := testConfig(t, web, 2, 10*time.Millisecond)
	cfg.Seeds = web.HostileSeeds()
	cfg.Render = RenderConfig{Mode: RenderAlways, Chromium: browsertest.Chromium(t), Timeout: 20 * time.Second, Idle: 200 * time.Millisecond}
	cfg.Politeness.MaxRetryAfter = time.Minute // the tests' cap would cut the Retry-After short
	sum := runCrawl(t, cfg)
	if b := sum.Browser; b == nil || b.Pages != 2 {
		t.Fatalf("render summary %+v, want both pages rendered", b)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(web.HostileSeeds()[0], "http://"), "/")
	var reqs []synthweb.Request
	for _, r := range web.Log() {
		if r.Host == host {
			reqs = append(reqs, r)
		}
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].Start.Before(reqs[j].Start) })
	throttled := 0
	for i, r := range reqs {
		if r.Path != "/api.json" || i+1 == len(reqs) {
			continue
		}
		throttled++
		want := synthweb.ScriptThrottleRetry * time.Second
		if gap := reqs[i+1].Start.Sub(r.End); gap < want {
			t.Errorf("%s began %v after the 429 to /api.json with Retry-After: %v", reqs[i+1].Path, gap, want)
		}
	}
	if throttled == 0 {
		t.Fatalf("no request after the browser's 429: %+v", reqs)
	}
}

// docsWeb starts the static documentation site of kind (ScriptDocs or
// ScriptDocsApp), and one ordinary host, which the crawl does not seed.
func docsWeb(t *testing.T, kind string) *synthweb.Web {
	t.Helper()
	return startWeb(t, synthweb.Config{Seed: 8, Hosts: 1, PagesPerHost: 12, HostileKinds: []string{kind}})
}

// checkDocsOnce reads the documentation site's request log: every page
// and every requisite was asked for, each once, politely, by weft's
// fetcher alone; the search index, which its search script reads only
// for a query, was never asked for.
func checkDocsOnce(t *testing.T, web *synthweb.Web, ua string, more ...string) {
	t.Helper()
	asked := map[string]int{}
	per := map[string][]synthweb.Request{}
	for _, r := range web.Log() {
		per[r.Host] = append(per[r.Host], r)
		asked[r.Path]++
		if r.UserAgent != ua {
			t.Errorf("%s%s asked by %q, not weft's fetcher", r.Host, r.Path, r.UserAgent)
		}
	}
	want := append([]string{"/robots.txt", "/", "/search.html", "/_static/searchtools.js", synthweb.DocsSheetOnly}, synthweb.DocsPages...)
	for _, p := range append(append(want, synthweb.DocsShared...), more...) {
		if asked[p] != 1 {
			t.Errorf("%s requested %d times, want once", p, asked[p])
		}
	}
	if n := asked["/searchindex.json"]; n != 0 {
		t.Errorf("the search index, read only for a query, requested %d times", n)
	}
	checkPolite(t, web, per)
}

// With --render auto, a static documentation site starts no browser: its
// short index and its search page (a <noscript> for the search box) have
// scripts, but their static navigation is complete, and nothing on the
// host has shown otherwise. Each page and requisite is fetched once.
func TestRenderAutoSparesStaticDocs(t *testing.T) {
	web := docsWeb(t, synthweb.ScriptDocs)
	cfg := renderConfig(t, web, RenderAuto)
	cfg.NoRequisites = false
	sum := runCrawl(t, cfg)
	b := sum.Browser
	if b == nil {
		t.Fatal("no render summary")
	}
	if b.Pages != 0 || b.Fallbacks != 0 || b.Requests != 0 {
		t.Errorf("rendered %d pages (%d failed), %d browser requests: want none", b.Pages, b.Fallbacks, b.Requests)
	}
	if want := int64(2 + len(synthweb.DocsPages)); sum.Pages < want {
		t.Errorf("%d pages fetched, want at least %d", sum.Pages, want)
	}
	checkDocsOnce(t, web, cfg.UserAgent)
}

// With --render always, every page of the documentation site is rendered,
// and still each requisite is fetched once in the crawl: a browser's
// request for what the crawl has fetched is answered from the archive,
// and what a render fetched is not fetched again by the requisite pass,
// whichever asks first. What the sheet names that no page shows is
// fetched once too.
func TestRenderFetchesEachRequisiteOnce(t *testing.T) {
	web := docsWeb(t, synthweb.ScriptDocs)
	cfg := renderConfig(t, web, RenderAlways)
	cfg.NoRequisites = false
	sum := runCrawl(t, cfg)
	b := sum.Browser
	if b == nil {
		t.Fatal("no render summary")
	}
	t.Logf("pages %d; render %+v", sum.Pages, *b)
	if want := int64(2 + len(synthweb.DocsPages)); b.Pages != want || b.Fallbacks != 0 {
		t.Errorf("rendered %d pages (%d failed), want %d", b.Pages, b.Fallbacks, want)
	}
	// No page of the site opens a connection interception does not see:
	// whatever reached the dead-end proxy was Chromium's own.
	if b.Escapes != 0 {
		t.Errorf("%d connections counted as the pages' at the dead-end proxy, want none (Chromium's own: %d, to %v)", b.Escapes, b.BrowserConns, b.BrowserTargets)
	}
	checkDocsOnce(t, web, cfg.UserAgent)
}

// With --render auto, the documentation site's playground (an app shell)
// and its examples are rendered, and still each requisite is fetched
// once, whichever asks first: the playground, leased before the index's
// requisites, fetches the style sheet, the logo and the icon, whose
// leases are then done without a request; the examples, rendered after
// the requisite pass fetched the note's image, are answered from the
// archive, as they are for what the playground's render fetched.
func TestRenderAutoFetchesEachRequisiteOnceWhicheverAsksFirst(t *testing.T) {
	web := docsWeb(t, synthweb.ScriptDocsApp)
	cfg := renderConfig(t, web, RenderAuto)
	cfg.NoRequisites = false
	sum := runCrawl(t, cfg)
	b := sum.Browser
	if b == nil {
		t.Fatal("no render summary")
	}
	t.Logf("pages %d; render %+v", sum.Pages, *b)
	if b.Pages < int64(1+len(synthweb.DocsExamples)) || b.NewLinks < int64(len(synthweb.DocsExamples)) {
		t.Errorf("rendered %d pages, found %d new links: want the playground and its examples, and their links", b.Pages, b.NewLinks)
	}
	if b.Spared == 0 || b.Recalled == 0 {
		t.Errorf("%d requisites' leases done without a request, %d browser requests answered from the archive: want both (the playground is leased before the index's requisites, the examples after)", b.Spared, b.Recalled)
	}
	checkDocsOnce(t, web, cfg.UserAgent, append([]string{synthweb.DocsPlayground, "/playground/examples.json"}, synthweb.DocsExamples...)...)
}

// Interrupted while a page renders (Ctrl-C: the crawl's context ends,
// and --grace later its fetches), the render is cut short and says so:
// no line speaks of a budget the page did not spend, the browser is not
// taken for broken, and the page keeps its static links.
func TestRenderInterruptedSaysSo(t *testing.T) {
	web := docsWeb(t, synthweb.ScriptDocs)
	cfg := renderConfig(t, web, RenderAlways)
	cfg.Delay = time.Second // the index's render asks for its requisites a second apart
	cfg.Grace = 200 * time.Millisecond
	var logged syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, interrupt := context.WithCancel(t.Context())
	defer interrupt()
	done := make(chan struct{})
	var sum Summary
	var runErr error
	go func() {
		defer close(done)
		sum, runErr = c.Run(ctx)
	}()
	testwait.Eventually(t, time.Minute, "the index's render asking for its style sheet", func() bool {
		return slices.ContainsFunc(web.Log(), func(r synthweb.Request) bool { return r.Path == "/_static/theme.css" })
	})
	interrupt()
	<-done
	if runErr != nil {
		t.Fatal(runErr)
	}
	b := sum.Browser
	if b == nil || b.Fallbacks != 1 || b.Pages != 0 || b.Restarts != 0 {
		t.Errorf("render summary %+v, want one render cut short, no browser replaced", b)
	}
	log := logged.String()
	if strings.Contains(log, "budget") || !strings.Contains(log, "render cut short: the crawl is stopping") {
		t.Errorf("the interruption is not told as it happened:\n%s", log)
	}
}
