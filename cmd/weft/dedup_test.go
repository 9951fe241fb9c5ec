package main

import (
	"archive/zip"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/browsertest"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/report"
	"github.com/weft-crawler/weft/internal/store"
)

// changingSite is a small site crawled twice: between the crawls, page
// /b changes (changed), the rest stays byte for byte the same.
type changingSite struct {
	changed atomic.Bool
	files   map[string][2]string // path -> content type, body
}

func newChangingSite(t *testing.T) *changingSite {
	page := func(title, text string) [2]string {
		return [2]string{"text/html; charset=utf-8", `<!doctype html><html><head><meta charset="utf-8"><title>` + title + `</title></head>
<body><h1 id="text">` + text + `</h1><p><a href="/">home</a> <a href="/a">a</a> <a href="/b">b</a> <a href="/c">c</a></p>
<img src="/img/logo.png" width="40" height="40" alt=""></body></html>`}
	}
	return &changingSite{files: map[string][2]string{
		"/":             page("home", "the home page, the same in both crawls"),
		"/a":            page("a", "page a, the same in both crawls"),
		"/b":            page("b", "page b as the first crawl saw it"),
		"/c":            page("c", "page c, the same in both crawls"),
		"/img/logo.png": {"image/png", string(solidPNG(t, 40, 40, color.RGBA{0x1f, 0x4e, 0x79, 0xff}))},
		"/robots.txt":   {"text/plain", "User-agent: *\nAllow: /\n"},
	}}
}

func (s *changingSite) body(path string) ([2]string, bool) {
	f, ok := s.files[path]
	if ok && path == "/b" && s.changed.Load() {
		f[1] = strings.Replace(f[1], "as the first crawl saw it", "changed since the first crawl", 1)
	}
	return f, ok
}

func (s *changingSite) start(t *testing.T) (host, root string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := s.body(r.URL.Path)
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f[0])
		fmt.Fprint(w, f[1])
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	host = "dedup.weft.test"
	return host, "http://" + host + ":" + port
}

// crawlSite crawls the site at root into data, with more flags, and
// returns its summary.
func crawlSite(t *testing.T, host, root, data string, more ...string) map[string]any {
	t.Helper()
	sumFile := filepath.Join(t.TempDir(), "summary.json")
	args := append([]string{"crawl", "--data", data, "--delay", "2ms", "--allow-cidr", "127.0.0.0/8", "--resolve", host + "=127.0.0.1",
		"--summary", sumFile}, more...)
	if code, stdout, stderr := runWeft(t, append(args, root+"/")...); code != 0 {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(sumFile)
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	return sum
}

// captures returns the 2xx captures of the crawl in data, by URL.
func captures(t *testing.T, data string) map[string]store.CaptureRecord {
	t.Helper()
	a, err := archive.Open(data, canon.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	out := map[string]store.CaptureRecord{}
	if err := a.Captures(func(r store.CaptureRecord) bool {
		if r.Status/100 == 2 {
			out[r.URL] = r
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// warcHeader is the WARC header block of the record at offset in file.
func warcHeader(t *testing.T, file string, offset int64) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	b, _ := io.ReadAll(io.LimitReader(zr, 8<<10))
	head, _, _ := strings.Cut(string(b), "\r\n\r\n")
	return head
}

func headerField(head, name string) string {
	for _, line := range strings.Split(head, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// A crawl run twice over the same site, the second pointed at the first
// by --dedup-from in each of its three forms (the CDXJ weft cdx writes,
// the WACZ weft wacz writes, the data directory), writes a revisit record
// for every response that did not change, under the identical-payload-
// digest profile, referring to the first crawl's capture by URI and date;
// the page that changed is archived whole. The summary counts the
// revisits of the earlier crawl and the bytes they saved.
func TestDedupAgainstEarlierCrawl(t *testing.T) {
	site := newChangingSite(t)
	host, root := site.start(t)
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	crawlSite(t, host, root, first)
	earlier := captures(t, first)
	for _, p := range []string{"/", "/a", "/b", "/c", "/img/logo.png", "/robots.txt"} {
		if _, ok := earlier[root+p]; !ok {
			t.Fatalf("the first crawl did not capture %s: %v", p, earlier)
		}
	}
	code, cdxj, stderr := runWeft(t, "cdx", "--data", first)
	if code != 0 {
		t.Fatalf("cdx: exit %d: %s", code, stderr)
	}
	cdxjFile := filepath.Join(dir, "first.cdxj")
	os.WriteFile(cdxjFile, []byte(cdxj), 0o644)
	waczFile := filepath.Join(dir, "first.wacz")
	if code, _, stderr := runWeft(t, "wacz", "--data", first, "-o", waczFile); code != 0 {
		t.Fatalf("wacz: exit %d: %s", code, stderr)
	}

	site.changed.Store(true)
	for _, form := range []struct {
		name, src string
		exact     bool // the earlier capture's date to the nanosecond, not the index's second
	}{
		{"cdxj", cdxjFile, false},
		{"wacz", waczFile, false},
		{"data", first, true},
	} {
		t.Run(form.name, func(t *testing.T) {
			second := filepath.Join(t.TempDir(), "second")
			sum := crawlSite(t, host, root, second, "--dedup-from", form.src)
			var revisits, saved int64
			for url, c := range captures(t, second) {
				was, ok := earlier[url]
				if !ok {
					t.Errorf("%s: captured now, not by the first crawl", url)
					continue
				}
				head := warcHeader(t, filepath.Join(second, "warc", c.File), c.Offset)
				if strings.HasSuffix(url, "/b") {
					if c.Kind != store.CaptureResponse || headerField(head, "WARC-Type") != "response" {
						t.Errorf("%s changed: archived as a %s record, want the response whole", url, headerField(head, "WARC-Type"))
					}
					continue
				}
				refDate, err := time.Parse(time.RFC3339Nano, headerField(head, "WARC-Refers-To-Date"))
				wantDate := was.Date.UTC().Truncate(time.Second)
				if form.exact {
					wantDate = was.Date.UTC().Truncate(time.Microsecond) // as WARC-Date writes it
				}
				if c.Kind != store.CaptureRevisit || headerField(head, "WARC-Type") != "revisit" ||
					headerField(head, "WARC-Profile") != "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest" ||
					headerField(head, "WARC-Refers-To-Target-URI") != url || err != nil || !refDate.Equal(wantDate) {
					t.Errorf("%s unchanged: want a revisit of its capture at %s; the record:\n%s", url, wantDate.Format(time.RFC3339Nano), head)
					continue
				}
				revisits++
				f, _ := site.body(strings.TrimPrefix(url, root))
				saved += int64(len(f[1]))
			}
			if revisits != int64(len(earlier)-1) {
				t.Errorf("%d revisits, want one for each of the %d unchanged captures", revisits, len(earlier)-1)
			}
			// weft get reads a revisit's payload from the earlier crawl's
			// files: its data directory, its WACZ, or beside its CDXJ.
			code, body, stderr := runWeft(t, "get", "--data", second, root+"/a")
			if form.name == "cdxj" {
				if code == 0 || !strings.Contains(stderr, cdxjFile) {
					t.Errorf("get a revisit of a capture whose WARC file is not beside the CDXJ: exit %d, %s", code, stderr)
				}
			} else if code != 0 || !strings.Contains(body, "page a, the same in both crawls") || !strings.Contains(stderr, "a revisit of "+root+"/a") {
				t.Errorf("get a revisit of the earlier crawl: exit %d\n%s\n%s", code, stderr, body)
			}
			if sum["earlier_revisits"] != float64(revisits) || sum["earlier_revisit_bytes"] != float64(saved) || sum["dedup_imported"].(float64) < float64(len(earlier)) {
				t.Errorf("summary: earlier_revisits %v, earlier_revisit_bytes %v, dedup_imported %v; want %d, %d, at least %d",
					sum["earlier_revisits"], sum["earlier_revisit_bytes"], sum["dedup_imported"], revisits, saved, len(earlier))
			}
		})
	}
}

// Bad input to --dedup-from is an error that names the flag and the file,
// and, for a malformed index, its line.
func TestDedupFromBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.cdxj")
	os.WriteFile(bad, []byte("com,example)/ 20261130102030 {\"url\":\"http://example.com/\",\"digest\":\"sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}\ncom,example)/x 20261130102030 {\"url\": \"http://example.com/x\", oops}\n"), 0o644)
	missing := filepath.Join(dir, "missing.wacz")
	for _, tc := range []struct {
		src  string
		code int
		want []string
	}{
		{missing, 2, []string{"--dedup-from", missing}},
		{bad, 1, []string{bad, "line 2"}},
	} {
		code, _, stderr := runWeft(t, "crawl", "--data", filepath.Join(dir, "data"), "--dedup-from", tc.src, "http://127.0.0.1:1/")
		if code != tc.code {
			t.Errorf("--dedup-from %s: exit %d, want %d: %s", tc.src, code, tc.code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("--dedup-from %s: %q does not name %q", tc.src, stderr, w)
			}
		}
	}
}

// TestReplayDedupedCrawlWithEarlier is the proof that revisits of an
// earlier crawl replay: a site is crawled, then crawled again with
// --dedup-from the first crawl's WACZ, and both are packaged; the second
// package holds only revisit records for the unchanged pages (it names
// the first under relation.requires). ReplayWeb.page (wabac.js), given
// both as one multi-WACZ collection, replays the second crawl's capture
// of an unchanged page with the first crawl's payload, offline, and the
// changed page with the second crawl's.
func TestReplayDedupedCrawlWithEarlier(t *testing.T) {
	rwp := replayWebPage(t)
	bin := browsertest.Chromium(t)
	site := newChangingSite(t)
	host, root := site.start(t)
	dir := t.TempDir()
	firstData, secondData := filepath.Join(dir, "first"), filepath.Join(dir, "second")
	firstWACZ, secondWACZ := filepath.Join(dir, "first.wacz"), filepath.Join(dir, "second.wacz")
	crawlSite(t, host, root, firstData)
	if code, _, stderr := runWeft(t, "wacz", "--data", firstData, "-o", firstWACZ); code != 0 {
		t.Fatalf("wacz: exit %d: %s", code, stderr)
	}
	site.changed.Store(true)
	// A replay engine keys captures by URL and a timestamp to the second
	// (wabac.js keeps one record per key across every WACZ it loads), so a
	// second crawl within the first one's last second would overwrite its
	// captures there: start it in a later second, as any real recrawl is.
	var last time.Time
	for _, c := range captures(t, firstData) {
		if c.Date.After(last) {
			last = c.Date
		}
	}
	time.Sleep(time.Until(last.Truncate(time.Second).Add(time.Second)))
	crawlSite(t, host, root, secondData, "--dedup-from", firstWACZ)
	if code, _, stderr := runWeft(t, "wacz", "--data", secondData, "-o", secondWACZ); code != 0 {
		t.Fatalf("wacz: exit %d: %s", code, stderr)
	}
	second := captures(t, secondData)
	pageA := root + "/a"
	if c := second[pageA]; c.Kind != store.CaptureRevisit {
		t.Fatalf("the second crawl archived %s as kind %d, want a revisit", pageA, c.Kind)
	}
	if _, ok := waczPayloads(t, secondWACZ)[pageA]; ok {
		t.Fatalf("the second WACZ holds a payload of %s: the replay would not need the first", pageA)
	}
	if dp := waczFile(t, secondWACZ, "datapackage.json"); !strings.Contains(dp, `"filename": "first.wacz"`) {
		t.Errorf("the second WACZ's datapackage.json does not require first.wacz:\n%s", dp)
	}

	mux := http.NewServeMux()
	for _, p := range []string{"/ui.js", "/replay/ui.js"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, filepath.Join(rwp, "ui.js")) })
	}
	mux.HandleFunc("/replay/sw.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, filepath.Join(rwp, "sw.js")) })
	mux.HandleFunc("/first.wacz", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, firstWACZ) })
	mux.HandleFunc("/second.wacz", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, secondWACZ) })
	// wabac.js's multi-WACZ collection: one JSON listing the packages.
	mux.HandleFunc("/crawls.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"profile": "multi-wacz-package", "resources": [{"name": "first.wacz", "path": "first.wacz"}, {"name": "second.wacz", "path": "second.wacz"}]}`)
	})
	var target atomic.Pointer[[2]string] // the URL and timestamp the viewer replays
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		tg := target.Load()
		fmt.Fprintf(w, `<!doctype html><html><head><script src="/ui.js"></script>
<style>html,body{margin:0;height:100%%;overflow:hidden} replay-web-page{display:block;width:100vw;height:100vh}</style></head>
<body><replay-web-page source="/crawls.json" url="%s" ts="%s" embed="replayonly" replayBase="/replay/"></replay-web-page></body></html>`, tg[0], tg[1])
	})
	vln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	viewer := &http.Server{Handler: mux}
	go viewer.Serve(vln)
	defer viewer.Close()
	viewerURL := "http://" + vln.Addr().String() + "/"

	for _, tc := range []struct{ url, text string }{
		{pageA, "page a, the same in both crawls"},            // a revisit: the first crawl's payload
		{root + "/b", "page b changed since the first crawl"}, // archived whole by the second
	} {
		c := second[tc.url]
		target.Store(&[2]string{tc.url, c.Date.UTC().Format("20060102150405")})
		ready := replayedDoc(fmt.Sprintf(`d.getElementById("text") && d.getElementById("text").textContent === %q`, tc.text))
		replay(t, bin, viewerURL, ready)
	}
}

// waczFile is the file name inside the WACZ at path.
func waczFile(t *testing.T, path, name string) string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	rc, err := zr.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The progress line says what deduplication saved, once it saved any.
func TestProgressLineSaysDedupSaved(t *testing.T) {
	p := report.Progress{Elapsed: time.Minute, Pages: 10}
	if line := progressLine(p, 1); strings.Contains(line, "dedup") {
		t.Errorf("no revisits yet: %q", line)
	}
	p.RevisitBytes = 3 << 20
	if line := progressLine(p, 1); !strings.Contains(line, "dedup saved 3.0 MiB") {
		t.Errorf("3 MiB of revisits: %q", line)
	}
}
