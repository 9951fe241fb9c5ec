package crawl

import (
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/browsertest"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// At the rendering tier's defaults (--render auto, every bound left to
// its default), a crawl of the single-page app fetches all thirteen pages
// its scripts lead to: written at load or after a timeout, by infinite
// scroll, behind buttons and click listeners, through pushState and
// replaceState, location and window.open. It asks for none that
// robots.txt disallows or that a log-out button leads to, every request
// bears weft's User-Agent (none is the browser's), and each host had one
// request at a time, the delay apart.
func TestRenderDefaultsCrawlEveryScriptPage(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 9, Hosts: 1, PagesPerHost: 4, HostileKinds: []string{synthweb.ScriptSPA}})
	cfg := testConfig(t, web, 2, renderDelay)
	cfg.Seeds = web.HostileSeeds()
	cfg.NoRequisites = false
	cfg.Render = RenderConfig{Mode: RenderAuto, Chromium: browsertest.Chromium(t)}
	sum := runCrawl(t, cfg)
	if b := sum.Browser; b == nil || b.Pages == 0 {
		t.Fatalf("nothing rendered: %+v", b)
	} else {
		t.Logf("pages %d; render %+v", sum.Pages, *b)
	}
	app := strings.TrimSuffix(strings.TrimPrefix(web.HostileSeeds()[0], "http://"), "/")
	asked := map[string]bool{}
	per := map[string][]synthweb.Request{}
	for _, r := range web.Log() {
		per[r.Host] = append(per[r.Host], r)
		if r.Host == app {
			asked[r.Path] = true
		}
		if r.UserAgent != cfg.UserAgent {
			t.Errorf("%s%s asked by %q, not weft's fetcher", r.Host, r.Path, r.UserAgent)
		}
	}
	n := 0
	for _, p := range synthweb.ScriptSPAPages {
		if asked[p] {
			n++
		} else {
			t.Errorf("%s never fetched", p)
		}
	}
	t.Logf("%d of %d script-only pages fetched", n, len(synthweb.ScriptSPAPages))
	for _, p := range synthweb.ScriptSPAForbidden {
		if asked[p] {
			t.Errorf("%s fetched: robots.txt disallows it, or only a log-out button leads there", p)
		}
	}
	if !asked["/robots.txt"] {
		t.Errorf("robots.txt never fetched")
	}
	checkPolite(t, web, per)
}
