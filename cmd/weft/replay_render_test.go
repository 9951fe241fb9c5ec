package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/browsertest"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/warc"
)

// TestReplayRenderedScriptPage crawls the synthetic script app with
// --render always: its page has no link in its HTML, only scripts that
// make them (inline, from app.js, from fetched JSON). The browser's
// requests were weft's, archived as the page's requisites; packaged as
// WACZ and replayed offline in ReplayWeb.page, the page's scripts run
// again from the archive and build the same links, and the live web
// receives no request while it is replayed.
func TestReplayRenderedScriptPage(t *testing.T) {
	rwp := replayWebPage(t)
	bin := browsertest.Chromium(t)
	web, data, app := crawlRenderedApp(t, bin)
	wacz := filepath.Join(t.TempDir(), "crawl.wacz")
	if code, _, stderr := runWeft(t, "wacz", "--data", data, "-o", wacz); code != 0 {
		t.Fatalf("wacz: exit %d: %s", code, stderr)
	}
	archived := waczPayloads(t, wacz)
	for _, p := range []string{"app.js", "links.json"} {
		if _, ok := archived[app+p]; !ok {
			t.Errorf("%s%s not in the WACZ's index: the browser's request was not archived", app, p)
		}
	}
	before := len(web.Log())
	viewerURL := serveViewer(t, rwp, wacz, app)
	// Ready once the replayed document, in the viewer's iframe, holds the
	// links its scripts make from the archive (the replay rewrites each
	// href to an absolute URL: matched by its end).
	ready := replayedDoc(`["/s/inline", "/s/external", "/s/json-1", "/s/json-2"].every(h => d.querySelector('a[href$="' + h + '"]'))`)
	replay(t, bin, viewerURL, ready)
	if n := len(web.Log()) - before; n != 0 {
		t.Errorf("the live web received %d requests while the archive was replayed", n)
	}
}

// crawlRenderedApp crawls the synthetic script app with --render always
// into a new data directory, and returns the web, the directory and the
// app page's URL.
func crawlRenderedApp(t *testing.T, bin string) (web *synthweb.Web, data, app string) {
	t.Helper()
	web, err := synthweb.Start(synthweb.Config{Seed: 23, Hosts: 1, PagesPerHost: 12, HostileKinds: []string{synthweb.ScriptApp}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	app = web.HostileSeeds()[0]
	data = filepath.Join(t.TempDir(), "data")
	args := []string{"crawl", "--data", data, "--delay", "20ms", "--allow-cidr", "127.0.0.0/8",
		"--render", "always", "--render-chromium", bin, "--render-idle", "300ms", "--max-depth", "1", "--sitemaps=false"}
	for name, ip := range web.Resolve() {
		args = append(args, "--resolve", name+"="+ip)
	}
	code, stdout, stderr := runWeft(t, append(args, app)...)
	if code != 0 {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if out := stdout + stderr; !strings.Contains(out, "render:     always: ") || strings.Contains(out, "always: 0 pages rendered") {
		t.Fatalf("the crawl rendered nothing:\n%s\n%s", stdout, stderr)
	}
	return web, data, app
}

// warcio returns the command line of warcio's command-line tool (the
// warcio npm package, which .ci/run installs), or it skips.
func warcio(t *testing.T) []string {
	dir := os.Getenv("WEFT_WARCIO")
	if dir == "" {
		dir = filepath.Join("..", "..", ".ci", "cache", "warcio", "node_modules", "warcio")
	}
	cli, err := filepath.Abs(filepath.Join(dir, "dist", "cli.js"))
	if err == nil {
		_, err = os.Stat(cli)
	}
	if err != nil {
		t.Skipf("no warcio in %s (%v): .ci/run installs it with npm, or set WEFT_WARCIO to the warcio package's directory", dir, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("no node to run warcio: %v", err)
	}
	return []string{node, cli}
}

// TestRenderedPageIndexedByWarcio crawls the script app with --render
// always and indexes its WARC files with warcio's cdx-index, the indexer
// of Webrecorder's tools (pywb's cdx-indexer reads records alike): the
// page's URL is listed once, with its status, and the offset that line
// gives is the page's response record; the rendered DOM, a record named
// urn:dom:<page>, is listed apart under that name. An index of the WARC
// built by another tool, or a replay engine that indexes it itself, serves
// the response for the page's URL, never the DOM.
func TestRenderedPageIndexedByWarcio(t *testing.T) {
	cli := warcio(t)
	bin := browsertest.Chromium(t)
	_, data, app := crawlRenderedApp(t, bin)
	files, err := filepath.Glob(filepath.Join(data, "warc", "*.warc.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no WARC files in %s: %v", data, err)
	}
	cmd := exec.CommandContext(t.Context(), cli[0], append(append(cli[1:], "cdx-index"), files...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("warcio cdx-index: %v\n%s", err, stderr.String())
	}
	type line struct {
		URL, MIME, Status, Digest, Offset, Filename string
	}
	var page, dom []line
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(l, " ", 3)
		if len(parts) != 3 {
			t.Fatalf("warcio cdx-index wrote %q, not a CDXJ line", l)
		}
		var c line
		if err := json.Unmarshal([]byte(parts[2]), &c); err != nil {
			t.Fatalf("warcio cdx-index line %q: %v", l, err)
		}
		switch c.URL {
		case app:
			page = append(page, c)
		case "urn:dom:" + app:
			dom = append(dom, c)
		}
	}
	if len(page) != 1 {
		t.Fatalf("warcio lists %s %d times, want once: %+v", app, len(page), page)
	}
	if p := page[0]; p.Status != "200" || p.MIME != "text/html" {
		t.Errorf("warcio lists %s with status %q and type %q, want 200 and text/html", app, p.Status, p.MIME)
	}
	off, err := strconv.ParseInt(page[0].Offset, 10, 64)
	if err != nil {
		t.Fatalf("offset %q: %v", page[0].Offset, err)
	}
	rec, err := warc.ReadRecord(filepath.Join(data, "warc", page[0].Filename), off)
	if err != nil {
		t.Fatalf("the record warcio's index gives for %s: %v", app, err)
	}
	if rec.Type != "response" || rec.TargetURI != app || !strings.HasPrefix(string(rec.ResponseHeader), "HTTP/1.1 200 ") || rec.PayloadDigest != "sha1:"+page[0].Digest {
		t.Errorf("warcio's index gives for %s a %s record of %s, %q, digest %s", app, rec.Type, rec.TargetURI, strings.SplitN(string(rec.ResponseHeader), "\r\n", 2)[0], rec.PayloadDigest)
	}
	if len(dom) != 1 || !strings.HasPrefix(dom[0].MIME, "text/html") {
		t.Errorf("warcio lists the rendered DOM as %+v; want it once, under urn:dom:%s", dom, app)
	}
}
