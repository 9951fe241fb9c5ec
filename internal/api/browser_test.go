package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weft-crawler/weft/internal/browsertest"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

// TestDashboardInBrowser opens the dashboard in headless Chromium against
// weft serve crawling the synthetic web: the page updates live (its pages
// count grows), its host filter works, and once the crawl is paused its
// numbers are those of /v1/stats. With WEFT_SCREENSHOT=FILE it saves a
// screenshot of the page there.
func TestDashboardInBrowser(t *testing.T) {
	bin := browsertest.Chromium(t)
	web, err := synthweb.Start(synthweb.Config{Seed: 15, Hosts: 8, PagesPerHost: 60, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound, synthweb.RobotsRules}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	cfg := crawl.Config{Seeds: web.Seeds(), DataDir: t.TempDir(), Workers: 4, Delay: 100 * time.Millisecond,
		UserAgent: "weft/test (+https://example.org/weft-crawler)", NoSitemaps: true,
		Recrawl: &recrawl.Policy{Min: time.Hour}} // continuous, and nothing comes due while it runs
	cfg.Fetch.Resolve = web.Resolve()
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	c, err := crawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Shown as a node of a cluster of one: the cluster panel draws what
	// GET /v1/cluster says.
	srv, err := New(Config{Addr: "127.0.0.1:0", Cluster: fakeNode{members: []ClusterMember{{Node: "n1", Partitions: []int{2, 7}}}}}, c.Operator())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := c.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	defer func() { stop(); <-done }()

	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), browsertest.Options(t, bin, 1400, 1000)...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	bctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
	defer cancelTimeout()

	base := "http://" + srv.Addr()
	num := func(expr string) float64 {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](`String(`+expr+`)`))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		v, _ := strconv.ParseFloat(s, 64)
		return v
	}
	stat := func(name string) float64 {
		return num(`(document.querySelector('[data-stat="` + name + `"]') || {dataset: {}}).dataset.value`)
	}
	waitUpdates := func(n float64) {
		t.Helper()
		start := num(`document.body.dataset.updates || 0`)
		testwait.Eventually(t, time.Minute, fmt.Sprintf("%v updates of the page", n), func() bool { return num(`document.body.dataset.updates || 0`) >= start+n })
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	waitUpdates(2)
	first := stat("pages")
	waitUpdates(3)
	if later := stat("pages"); later <= first {
		t.Errorf("the page did not update: pages %v then %v", first, later)
	}
	if rows := num(`document.querySelectorAll('#hosts tr').length`); rows < 2 {
		t.Errorf("%v rows in the hosts table", rows)
	}

	// Paused, the numbers hold still: the page's must be the API's.
	c.Operator().Pause()
	testwait.Eventually(t, 30*time.Second, "the fetches in flight to end", func() bool { return c.Operator().Live().Frontier.InFlight == 0 })
	waitUpdates(2)
	resp, err := http.Get(base + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	var st Stats
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	for name, want := range map[string]float64{
		"pages": float64(st.Pages), "queued": float64(st.Frontier.Queued), "in_flight": float64(st.Frontier.InFlight),
		"active_hosts": float64(st.Frontier.ActiveHosts), "bytes": float64(st.Bytes), "warc_bytes": float64(st.WARCBytes),
	} {
		if got := stat(name); got != want {
			t.Errorf("dashboard %s = %v, /v1/stats says %v", name, got, want)
		}
	}
	for class, n := range st.ByStatus {
		if got := num(`document.querySelector('[data-status="` + class + `"]').dataset.value`); got != float64(n) {
			t.Errorf("dashboard status %s = %v, /v1/stats says %d", class, got, n)
		}
	}
	for reason, n := range st.Rejected {
		if got := num(`document.querySelector('[data-rejected="` + reason + `"]').dataset.value`); got != float64(n) {
			t.Errorf("dashboard rejected %s = %v, /v1/stats says %d", reason, got, n)
		}
	}
	if parts, pages := num(`document.querySelector('#cluster tr[data-node="n1"]').dataset.partitions`),
		num(`document.querySelector('#cluster tr[data-node="n1"]').dataset.pages`); parts != 2 || pages != float64(st.Pages) {
		t.Errorf("cluster panel: node n1 with %v partitions and %v pages, want 2 and %d", parts, pages, st.Pages)
	}
	if state := num(`document.getElementById('state').textContent === 'paused' ? 1 : 0`); state != 1 {
		t.Error("the page does not say the crawl is paused")
	}
	// The host filter narrows the table to one host.
	host := web.Hosts()[0].Authority
	if err := chromedp.Do(bctx, chromedp.SendKeys("#host-filter", host)); err != nil {
		t.Fatal(err)
	}
	if rows := num(`document.querySelectorAll('#hosts tr').length`); rows != 1 {
		t.Errorf("filtered by %s: %v rows", host, rows)
	}
	if path := os.Getenv("WEFT_SCREENSHOT"); path != "" {
		if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(document.getElementById('host-filter').value = '', renderHosts(), true)`)); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
}
