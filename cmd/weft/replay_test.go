package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/chromedp/chromedp"

	"github.com/weft-crawler/weft/internal/browsertest"
	"github.com/weft-crawler/weft/internal/warc"
)

// styledSite is a page that needs its requisites to look as it does: a
// style sheet (layout, colours, a web font, a background image named by
// url()), an image chosen by srcset, and a script that fetches JSON
// (preloaded, as sites do) and writes it into the page. It logs every
// request it receives.
type styledSite struct {
	// coding, when set ("br"), is the Content-Encoding in which the
	// site sends its text files (HTML, CSS, scripts, JSON) whatever the
	// request asks for, as a server that answers only in brotli does;
	// images and fonts go as they are, as with nginx's brotli_types.
	coding string

	mu       sync.Mutex
	requests []string
	files    map[string][2]string // path -> content type, body
	wire     map[string]string    // path -> the body as sent, when coding applies
}

func (s *styledSite) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func solidPNG(t *testing.T, w, h int, c color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func (s *styledSite) handler(t *testing.T) http.Handler {
	files := map[string][2]string{
		"/": {"text/html; charset=utf-8", `<!doctype html><html><head><meta charset="utf-8"><title>styled</title>
<link rel="stylesheet" href="/css/site.css">
<link rel="preload" href="/data/items.json" as="fetch" crossorigin>
<script src="/js/app.js" defer></script></head>
<body><header class="bar">weft replay</header>
<main><img class="hero" src="/img/hero-1x.png" srcset="/img/hero-1x.png 1x, /img/hero-2x.png 2x" width="200" height="100" alt="">
<ul id="items"></ul><p class="note">a page that needs its requisites</p></main></body></html>`},
		"/css/site.css": {"text/css", `@import "/css/base.css";
@font-face { font-family: Weft; src: url(/fonts/weft.woff2) format("woff2"); }
body { margin: 0; background: #f4efe6 url("/img/tile.png") repeat-x; font-family: Weft, sans-serif; }
.bar { background: #1f4e79; color: #fff; padding: 24px 32px; font-size: 28px; }
main { padding: 24px 32px; } .hero { display: block; border: 6px solid #c0392b; }
#items li { display: inline-block; width: 90px; height: 40px; margin: 8px; background: #27ae60; color: #fff; }`},
		"/css/base.css":     {"text/css", `ul { list-style: none; padding: 0 } .note { color: #8e44ad; font-size: 20px; }`},
		"/fonts/weft.woff2": {"font/woff2", "wOF2 not a real font: a browser falls back, alike live and replayed"},
		"/js/app.js": {"text/javascript", `fetch("/data/items.json").then(r => r.json()).then(items => {
  const ul = document.getElementById("items");
  for (const it of items) { const li = document.createElement("li"); li.textContent = it; ul.appendChild(li); }
  document.body.dataset.ready = "1";
});`},
		"/data/items.json": {"application/json", `["one","two","three","four"]`},
		"/img/hero-1x.png": {"image/png", string(solidPNG(t, 200, 100, color.RGBA{0xe6, 0x7e, 0x22, 0xff}))},
		"/img/hero-2x.png": {"image/png", string(solidPNG(t, 400, 200, color.RGBA{0xe6, 0x7e, 0x22, 0xff}))},
		"/img/tile.png":    {"image/png", string(solidPNG(t, 8, 300, color.RGBA{0xdd, 0xd5, 0xc8, 0xff}))},
		"/favicon.ico":     {"image/png", string(solidPNG(t, 16, 16, color.RGBA{0x1f, 0x4e, 0x79, 0xff}))},
		"/robots.txt":      {"text/plain", "User-agent: *\nAllow: /\n"},
	}
	s.files = files
	s.wire = map[string]string{}
	for path, f := range files {
		if s.coding == "" || !textual(f[0]) {
			continue
		}
		var b bytes.Buffer
		bw := brotli.NewWriterLevel(&b, 5)
		io.WriteString(bw, f[1])
		if err := bw.Close(); err != nil {
			t.Fatal(err)
		}
		s.wire[path] = b.String()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.URL.Path)
		s.mu.Unlock()
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f[0])
		w.Header().Set("Cache-Control", "no-store")
		if wire, ok := s.wire[r.URL.Path]; ok {
			w.Header().Set("Content-Encoding", s.coding)
			w.Header().Set("Vary", "Accept-Encoding")
			fmt.Fprint(w, wire)
			return
		}
		fmt.Fprint(w, f[1])
	})
}

// textual reports whether a file of content type ct is one a server
// compresses.
func textual(ct string) bool {
	return strings.HasPrefix(ct, "text/") || strings.Contains(ct, "json")
}

// replayWebPage is the directory of ReplayWeb.page's ui.js and sw.js
// (the replaywebpage package, which .ci/run fetches), or it skips.
func replayWebPage(t *testing.T) string {
	dir := os.Getenv("WEFT_REPLAYWEBPAGE")
	if dir == "" {
		dir = filepath.Join("..", "..", ".ci", "cache", "replaywebpage")
	}
	for _, f := range []string{"ui.js", "sw.js"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Skipf("no ReplayWeb.page in %s (%v): .ci/run fetches it with npm, or set WEFT_REPLAYWEBPAGE", dir, err)
		}
	}
	return dir
}

// browse opens url in a fresh headless Chromium with its window w×h,
// waits until ready (a JS expression) is true, and returns a screenshot
// of the viewport. flags are more of Chromium's flags: host rules for
// the live page, a proxy for the replay.
//
// If settle is not "", the page is loaded until settle (a JS expression)
// is true, then once more: a replay's service worker serves only the
// loads that come after it is active, and the first may reach the
// network before it is.
func browse(t *testing.T, bin, url, ready, settle string, flags ...chromedp.ExecAllocatorOption) image.Image {
	t.Helper()
	opts := browsertest.Options(t, bin, 900, 600,
		append([]chromedp.ExecAllocatorOption{chromedp.Flag("hide-scrollbars", true), chromedp.Flag("force-device-scale-factor", "1")}, flags...)...)
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	bctx, cancelTimeout := context.WithTimeout(bctx, 2*time.Minute)
	defer cancelTimeout()
	if err := chromedp.Do(bctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	if settle != "" {
		waitJS(t, bctx, url, settle)
		if err := chromedp.Do(bctx, chromedp.Reload()); err != nil {
			t.Fatalf("reload %s: %v", url, err)
		}
	}
	waitJS(t, bctx, url, ready)
	shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// recordingProxy is the replaying browser's HTTP proxy: it passes on the
// requests to allow (the viewer's host:port) and refuses and records
// every other, a CONNECT included. Chromium's own services (component
// updates, network time, accounts), which Debian's build asks for whatever
// its flags, are refused and kept apart: they are the browser's, not the
// replay's.
type recordingProxy struct {
	allow   string
	mu      sync.Mutex
	passed  int
	outside []string
	own     []string
}

// chromiumOwn reports whether host (host[:port]) is one of Google's
// service domains, which only Chromium itself asks.
func chromiumOwn(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	for _, d := range []string{"google.com", "googleapis.com", "gvt1.com", "gstatic.com"} {
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}

func (p *recordingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.URL.Host
	if r.Method == http.MethodConnect {
		target = r.Host
	}
	p.mu.Lock()
	ok := r.Method != http.MethodConnect && target == p.allow
	switch {
	case ok:
		p.passed++
	case chromiumOwn(target):
		p.own = append(p.own, target)
	default:
		p.outside = append(p.outside, r.Method+" "+r.URL.String()+" (host "+target+")")
	}
	p.mu.Unlock()
	if !ok {
		http.Error(w, "outside the archive", http.StatusForbidden)
		return
	}
	(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(&url.URL{Scheme: "http", Host: p.allow})
		pr.Out.Host = pr.In.Host
	}}).ServeHTTP(w, r)
}

func (p *recordingProxy) counts() (passed int, outside, own []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.passed, append([]string(nil), p.outside...), append([]string(nil), p.own...)
}

// waczPayloads reads every capture a WACZ's index lists, by byte range
// within its WARC file inside the package, as a replay does (digests
// checked), holds each record to its index line, and returns the
// payloads by URL (revisits left out).
func waczPayloads(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for u, rec := range waczRecords(t, path) {
		out[u] = string(rec.Payload)
	}
	return out
}

// waczRecords is waczPayloads, returning the records.
func waczRecords(t *testing.T, path string) map[string]warc.Stored {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]*zip.File{}
	for _, e := range zr.File {
		entries[e.Name] = e
	}
	idx, err := entries["indexes/index.cdxj"].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	out := map[string]warc.Stored{}
	sc := bufio.NewScanner(idx)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), " ", 3)
		var l struct{ URL, MIME, Filename, Offset, Length string }
		if len(parts) != 3 || json.Unmarshal([]byte(parts[2]), &l) != nil {
			t.Fatalf("index line %q", sc.Text())
		}
		e := entries["archive/"+l.Filename]
		if e == nil {
			t.Fatalf("%s: the index names %s, not in the package", l.URL, l.Filename)
		}
		base, err := e.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		off, _ := strconv.ParseInt(l.Offset, 10, 64)
		n, _ := strconv.ParseInt(l.Length, 10, 64)
		rec, err := warc.ReadRecordFrom(io.NewSectionReader(f, base+off, n), l.Filename, off)
		if err != nil {
			t.Fatalf("%s: %v", l.URL, err)
		}
		if rec.TargetURI != l.URL {
			t.Errorf("the record at %s %d is %s, the index says %s", l.Filename, off, rec.TargetURI, l.URL)
		}
		if l.MIME != "warc/revisit" {
			out[rec.TargetURI] = rec
		}
	}
	return out
}

// waitJS polls the JS expression cond in the page at url until it is
// true, for at most a minute; then it fails t, saying what the page holds.
func waitJS(t *testing.T, bctx context.Context, url, cond string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, err := chromedp.Run(bctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			state, _ := chromedp.Run(bctx, chromedp.Evaluate[string](describeFrames))
			t.Fatalf("the page at %s: not ready in a minute (%v); its frames: %s", url, err, state)
		}
		if err := chromedp.Do(bctx, chromedp.Sleep(200*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
}

// describeFrames says what the page holds, for a test that failed: its
// frames, nested in replay-web-page's shadow root, and their bodies.
const describeFrames = `(() => {
  const out = [];
  const walk = (doc, depth) => {
    if (!doc) { out.push(depth + ": no document"); return; }
    out.push(depth + ": " + doc.location + " " + (doc.body ? doc.body.innerHTML.slice(0, 300) : "no body"));
    const frames = [];
    const deep = (root) => { for (const e of root.querySelectorAll("*")) { if (e.tagName === "IFRAME") frames.push(e); if (e.shadowRoot) deep(e.shadowRoot); } };
    deep(doc);
    for (const f of frames) { let d = null; try { d = f.contentDocument; } catch (e) {} walk(d, depth + 1); }
  };
  walk(document, 0);
  return out.join(" | ");
})()`

// differing is the share of pixels whose colour differs by more than 16
// in a channel (a screenshot's anti-aliasing differs by a few).
func differing(a, b image.Image) float64 {
	r := a.Bounds().Intersect(b.Bounds())
	diff := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			d := func(p, q uint32) bool { return max(p, q)-min(p, q) > 16<<8 }
			if d(r1, r2) || d(g1, g2) || d(b1, b2) {
				diff++
			}
		}
	}
	return float64(diff) / float64(r.Dx()*r.Dy())
}

// maxReplayDiff is the share of pixels the replayed page may differ by
// from the live one.
const maxReplayDiff = 0.01

// TestReplayInReplayWebPage is the archive's proof: a styled page is
// crawled with its requisites and packaged as WACZ; ReplayWeb.page
// (wabac.js's service worker) replays it offline in headless Chromium,
// from a loopback server that serves only the WACZ and the viewer. The
// replayed page looks like the live one (at most maxReplayDiff of its
// pixels differ), and the live site receives no request while it is
// replayed. Every record was read back by the WACZ test (TestWACZ).
func TestReplayInReplayWebPage(t *testing.T) { testReplayStyled(t, "") }

// TestReplayBrotliInReplayWebPage is TestReplayInReplayWebPage for a site
// that answers in brotli only: the archive holds its bodies as they came,
// in brotli, with their Content-Encoding, and the replay engine decodes
// them. (wabac.js decodes br and gzip, not zstd or deflate: see
// docs/encodings.md.) The live page it is held to is the same site
// sent plain, which looks the same.
func TestReplayBrotliInReplayWebPage(t *testing.T) { testReplayStyled(t, "br") }

func testReplayStyled(t *testing.T, coding string) {
	rwp := replayWebPage(t)
	bin := browsertest.Chromium(t)

	site := &styledSite{coding: coding}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: site.handler(t)}
	go srv.Serve(ln)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	host := "styled.weft.test"
	pageURL := "http://" + host + ":" + port + "/"

	data := filepath.Join(t.TempDir(), "data")
	code, stdout, stderr := runWeft(t, "crawl", "--data", data, "--delay", "5ms", "--allow-cidr", "127.0.0.0/8",
		"--resolve", host+"=127.0.0.1", "--requisites="+cmp.Or(os.Getenv("WEFT_REPLAY_REQUISITES"), "true"), pageURL)
	if code != 0 {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, stdout, stderr)
	}
	wacz := filepath.Join(t.TempDir(), "crawl.wacz")
	if code, _, stderr := runWeft(t, "wacz", "--data", data, "-o", wacz); code != 0 {
		t.Fatalf("wacz: exit %d: %s", code, stderr)
	}

	// Every response archived, read back through the WACZ's own index by
	// byte range with the nlnwa reader (digests checked), is the body the
	// site served; and every file the page needs is there.
	archived := waczPayloads(t, wacz)
	records := waczRecords(t, wacz)
	for path, f := range site.files {
		if path == "/robots.txt" {
			continue
		}
		sent, coded := site.wire[path]
		if !coded {
			sent = f[1]
		}
		if got, ok := archived[pageURL+path[1:]]; !ok || got != sent {
			t.Errorf("%s: archived %t, %d bytes; served %d", path, ok, len(got), len(sent))
		}
		if h := string(records[pageURL+path[1:]].ResponseHeader); coded && !strings.Contains(h, "\r\nContent-Encoding: "+coding+"\r\n") {
			t.Errorf("%s: the record's header does not say it came in %s:\n%s", path, coding, h)
		}
	}
	if coding != "" && len(site.wire) < 5 {
		t.Fatalf("%d files sent in %s: the page, its sheets, script and JSON should be", len(site.wire), coding)
	}
	requisites := 0
	for u := range archived {
		if p := strings.TrimPrefix(u, pageURL[:len(pageURL)-1]); p != "/" && p != "/robots.txt" && p != "/sitemap.xml" {
			requisites++
		}
	}
	t.Logf("%d responses in the WACZ: the page, robots.txt, the missing sitemap and %d requisites", len(archived), requisites)

	livePage := pageURL
	if coding != "" {
		// Chromium asks for br only over HTTPS: the live page is the
		// same site, sent plain, at the same host name.
		plain := &styledSite{}
		pln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		psrv := &http.Server{Handler: plain.handler(t)}
		go psrv.Serve(pln)
		defer psrv.Close()
		_, pport, _ := net.SplitHostPort(pln.Addr().String())
		livePage = "http://" + host + ":" + pport + "/"
	}
	live := browse(t, bin, livePage, `document.body.dataset.ready === "1" && document.images[0].complete`, "",
		chromedp.Flag("host-resolver-rules", "MAP "+host+" 127.0.0.1"))

	viewerURL := serveViewer(t, rwp, wacz, pageURL)

	before := site.count()
	// The replayed document is in the viewer's iframe (inside the
	// component's shadow root): ready once the script's JSON is in it.
	ready := replayedDoc(`d.body && d.body.dataset.ready === "1" && d.images[0] && d.images[0].complete`)
	replayed := replay(t, bin, viewerURL, ready)
	if n := site.count() - before; n != 0 {
		t.Errorf("the live site received %d requests while the archive was replayed", n)
	}
	d := differing(live, replayed)
	t.Logf("replayed page: %.2f%% of its pixels differ from the live one's", 100*d)
	if d > maxReplayDiff || os.Getenv("WEFT_REPLAY_SHOTS") != "" {
		dir := cmp.Or(os.Getenv("WEFT_REPLAY_SHOTS"), t.TempDir())
		for name, img := range map[string]image.Image{"live.png": live, "replayed.png": replayed} {
			var b bytes.Buffer
			png.Encode(&b, img)
			os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644)
		}
		if d > maxReplayDiff {
			t.Errorf("%.2f%% of the pixels differ, more than %.0f%%: screenshots in %s", 100*d, 100*maxReplayDiff, dir)
		}
	}
}

// replayedDoc is a script that is true once some document in the viewer,
// its iframes' and shadow roots' included (the replayed page is in the
// component's iframe), makes cond true of d.
func replayedDoc(cond string) string {
	return `(() => {
  const docs = [];
  const walk = (doc) => { if (!doc) return; docs.push(doc);
    const deep = (root) => { for (const e of root.querySelectorAll("*")) { if (e.tagName === "IFRAME") { try { walk(e.contentDocument); } catch (x) {} } if (e.shadowRoot) deep(e.shadowRoot); } };
    deep(doc); };
  walk(document);
  return docs.some(d => ` + cond + `); })()`
}

// swActive is true once the viewer's replay service worker is active.
const swActive = `(navigator.serviceWorker.getRegistration("/replay/").then(r => { window.weftSW = !!(r && r.active); }), window.weftSW === true)`

// replay opens the viewer at viewerURL once its service worker is active,
// waits for ready, and returns a screenshot. Every request of the
// replaying browser, its service worker's included, goes through a proxy
// that passes on only those to the viewer and records the rest: the test
// fails if the replay made any.
func replay(t *testing.T, bin, viewerURL, ready string) image.Image {
	t.Helper()
	u, err := url.Parse(viewerURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &recordingProxy{allow: u.Host}
	pln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	psrv := &http.Server{Handler: proxy}
	go psrv.Serve(pln)
	defer psrv.Close()
	shot := browse(t, bin, viewerURL, ready, swActive,
		chromedp.ProxyServer("http://"+pln.Addr().String()), chromedp.Flag("proxy-bypass-list", "<-loopback>"))
	passed, outside, own := proxy.counts()
	if passed == 0 {
		t.Errorf("no request of the replaying browser went through the proxy: the check saw nothing")
	}
	if len(outside) > 0 {
		t.Errorf("the replay made %d requests outside the archive: %v", len(outside), outside)
	}
	t.Logf("the replaying browser made %d requests to the viewer, %d outside the archive, and %d of Chromium's own (refused): %v", passed, len(outside), len(own), own)
	return shot
}

// serveViewer serves ReplayWeb.page's files, the WACZ, and a page that
// embeds the replay of pageURL at the window's size, with no chrome of
// its own, on loopback; it returns the viewer's URL.
func serveViewer(t *testing.T, rwp, wacz, pageURL string) string {
	t.Helper()
	mux := http.NewServeMux()
	for _, p := range []string{"/ui.js", "/replay/ui.js"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, filepath.Join(rwp, "ui.js")) })
	}
	mux.HandleFunc("/replay/sw.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, filepath.Join(rwp, "sw.js")) })
	mux.HandleFunc("/crawl.wacz", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, wacz) })
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><html><head><script src="/ui.js"></script>
<style>html,body{margin:0;height:100%%;overflow:hidden} replay-web-page{display:block;width:100vw;height:100vh}</style></head>
<body><replay-web-page source="/crawl.wacz" url="%s" embed="replayonly" replayBase="/replay/"></replay-web-page></body></html>`, pageURL)
	})
	vln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	viewer := &http.Server{Handler: mux}
	go viewer.Serve(vln)
	t.Cleanup(func() { viewer.Close() })

	return "http://" + vln.Addr().String() + "/"
}
