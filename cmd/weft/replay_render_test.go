package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/browsertest"
	"github.com/weft-crawler/weft/internal/synthweb"
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
	web, err := synthweb.Start(synthweb.Config{Seed: 23, Hosts: 1, PagesPerHost: 12, HostileKinds: []string{synthweb.ScriptApp}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	app := web.HostileSeeds()[0]
	args := []string{"crawl", "--data", filepath.Join(t.TempDir(), "data"), "--delay", "20ms", "--allow-cidr", "127.0.0.0/8",
		"--render", "always", "--render-chromium", bin, "--render-idle", "300ms", "--max-depth", "1", "--sitemaps=false"}
	for name, ip := range web.Resolve() {
		args = append(args, "--resolve", name+"="+ip)
	}
	data := args[2]
	code, stdout, stderr := runWeft(t, append(args, app)...)
	if code != 0 {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if out := stdout + stderr; !strings.Contains(out, "render:     always: ") || strings.Contains(out, "always: 0 pages rendered") {
		t.Fatalf("the crawl rendered nothing:\n%s\n%s", stdout, stderr)
	}
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
