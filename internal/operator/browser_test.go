package operator

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weft-crawler/weft/internal/api"
	"github.com/weft-crawler/weft/internal/browsertest"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

// TestDashboardInBrowser opens the dashboard in headless Chromium against a
// crawl of the synthetic web that started before the page was opened: its
// history charts have data on the first load (the crawl keeps them, not
// the tab), the page updates live, its host filter works, the token form
// signs in and Pause and Resume then work, once paused its numbers are
// those of /v1/stats, the host page says what /v1/hosts/{host} says, and
// nothing is written to the console as an error. With
// WEFT_SCREENSHOTS=DIR it saves dashboard.png and host.png there (the
// README's pictures: WEFT_SCREENSHOTS=$PWD/docs go test -run
// DashboardInBrowser ./internal/operator).
// soleNode is the node of a cluster of one, for the dashboard's cluster
// panel: it holds partitions 2 and 7 of 8.
type soleNode struct{}

func (soleNode) Name() string          { return "n1" }
func (soleNode) Owned() map[int]uint64 { return map[int]uint64{2: 9, 7: 3} }
func (soleNode) Handoffs() int         { return 4 }
func (soleNode) Snapshots() int64      { return 6 }
func (soleNode) PartitionCount() int   { return 8 }
func (soleNode) Members(context.Context) ([]api.ClusterMember, error) {
	return []api.ClusterMember{{Node: "n1", Partitions: []int{2, 7}}}, nil
}

func TestDashboardInBrowser(t *testing.T) {
	bin := browsertest.Chromium(t)
	web, err := synthweb.Start(synthweb.Config{Seed: 15, Hosts: 8, PagesPerHost: 60, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound, synthweb.RobotsRules}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	cfg := crawl.Config{Seeds: web.Seeds(), DataDir: t.TempDir(), Workers: 4, Delay: 100 * time.Millisecond,
		UserAgent: "weft/test (+https://example.org/weft-crawler)", NoSitemaps: true, NoRequisites: true, Render: crawl.RenderConfig{Mode: crawl.RenderNever},
		Recrawl: &recrawl.Policy{Min: time.Hour}} // continuous, and nothing comes due while it runs
	cfg.Fetch.Resolve = web.Resolve()
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	const token = "dashboard-test-token"
	// Shown as a node of a cluster of one: the cluster panel draws what
	// GET /v1/cluster says. History every 200 ms, so that the test has
	// samples soon.
	c, base := start(t, cfg, api.Config{Token: token, HistoryInterval: 200 * time.Millisecond, Cluster: soleNode{}})
	done := run(t, c)
	getJSON := func(path string, v any) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	// An operator's policy on one host: the page marks it.
	policyHost := web.Hosts()[1].Authority
	select {
	case <-c.Ready():
	case <-done:
		t.Fatal("the crawl ended before it took work")
	}
	if err := c.Policies().Set(policyHost, policy.Policy{Delay: policy.Duration(time.Second), Disallow: []string{"/private/"}}); err != nil {
		t.Fatal(err)
	}
	// The crawl runs for a while before the page opens: its history has
	// samples with pages in them.
	testwait.Eventually(t, time.Minute, "five samples of history with pages", func() bool {
		var h api.History
		getJSON("/v1/history", &h)
		pages := int64(0)
		for _, s := range h.Fine {
			pages += s.Pages
		}
		return len(h.Fine) >= 5 && pages > 0
	})

	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), browsertest.Options(t, bin, 1400, 1000)...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	bctx, cancelTimeout := context.WithTimeout(bctx, 2*time.Minute)
	defer cancelTimeout()

	// Every console error, uncaught exception and browser log error.
	var (
		consoleMu   sync.Mutex
		consoleErrs []string
	)
	lctx, stopListen := context.WithCancel(bctx)
	messages := chromedp.Console(lctx)
	listened := make(chan struct{})
	go func() {
		defer close(listened)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				consoleMu.Lock()
				consoleErrs = append(consoleErrs, m.String())
				consoleMu.Unlock()
			}
		}
	}()
	defer func() { stopListen(); <-listened }()

	num := func(expr string) float64 {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](`String(`+expr+`)`))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		v, _ := strconv.ParseFloat(s, 64)
		return v
	}
	str := func(expr string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](`String(`+expr+`)`))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return s
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
	// The first update draws the history the crawl kept before the page
	// was opened: every chart has its samples, and the rate's have pages.
	waitUpdates(1)
	for _, id := range []string{"chart-rate", "chart-errors", "chart-latency", "chart-queue"} {
		if pts := num(`document.getElementById('` + id + `').dataset.points`); pts < 5 {
			t.Errorf("%s: %v points on the first load, want the 5 or more samples kept before it", id, pts)
		}
		if canvas := num(`document.querySelectorAll('#` + id + ` canvas').length`); canvas != 1 {
			t.Errorf("%s: %v canvases, want uPlot's one", id, canvas)
		}
	}
	if got := num(`weft.charts['chart-rate'].data[1].filter(v => v > 0).length`); got < 1 {
		t.Errorf("the rate chart's first data has no pages")
	}
	if got := num(`weft.charts['chart-latency'].data[2].filter(v => v > 0).length`); got < 1 {
		t.Errorf("the latency chart's first data has no p95")
	}
	first := stat("pages")
	waitUpdates(3)
	if later := stat("pages"); later <= first {
		t.Errorf("the page did not update: pages %v then %v", first, later)
	}
	if rows := num(`document.querySelectorAll('#hosts tr').length`); rows < 2 {
		t.Errorf("%v rows in the hosts table", rows)
	}
	if got := str(`document.querySelector('#hosts tr[data-host="` + policyHost + `"] td.policy').textContent`); got != "delay 1s, disallow /private/" {
		t.Errorf("the host with a policy shows %q", got)
	}

	// Pause and Resume need the token: sign in with the form, and the
	// token is kept for the session.
	if hidden := str(`document.getElementById('login').hidden`); hidden != "false" {
		t.Fatalf("no token form: hidden %s", hidden)
	}
	if err := chromedp.Do(bctx, chromedp.SendKeys("#token", token), chromedp.Click(`#login button[type="submit"]`)); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 30*time.Second, "the form to sign in", func() bool {
		return str(`document.getElementById('signed-in').offsetHeight > 0`) == "true" && str(`sessionStorage.getItem('weft-token')`) == token
	})
	if shown := num(`document.getElementById('login').offsetHeight`); shown != 0 {
		t.Errorf("the token form is still shown (%v px) once signed in", shown)
	}
	if err := chromedp.Do(bctx, chromedp.Click("#pause")); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 30*time.Second, "the crawl to pause", func() bool { return c.Live().Paused })
	// Paused, the numbers hold still: the page's must be the API's.
	testwait.Eventually(t, 30*time.Second, "the fetches in flight to end", func() bool { return c.Live().Frontier.InFlight == 0 })
	waitUpdates(2)
	var st api.Stats
	getJSON("/v1/stats", &st)
	if st.Frontier.Stored == nil {
		t.Fatal("/v1/stats has no queue count (frontier.stored) for a new crawl")
	}
	for name, want := range map[string]float64{
		"pages": float64(st.Pages), "queued": float64(st.Frontier.Queued), "stored": float64(*st.Frontier.Stored), "in_flight": float64(st.Frontier.InFlight),
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
	// The seeds panel: a row per seed, its state and pages the API's,
	// which add up to the crawl's pages.
	var sl api.SeedList
	getJSON("/v1/seeds?limit=100", &sl)
	if rows := num(`document.querySelectorAll('#seeds tr').length`); len(sl.Seeds) != len(web.Seeds()) || rows != float64(len(sl.Seeds)) {
		t.Errorf("seeds panel: %v rows, /v1/seeds %d seeds, the crawl %d", rows, len(sl.Seeds), len(web.Seeds()))
	}
	if sl.Totals.Pages != st.Pages {
		t.Errorf("/v1/seeds: %d pages in all, /v1/stats %d", sl.Totals.Pages, st.Pages)
	}
	for _, s := range sl.Seeds {
		row := `document.querySelector('#seeds tr[data-seed="` + s.URL + `"]').dataset`
		if pages, state := num(row+`.pages`), str(row+`.state`); pages != float64(s.Pages) || state != s.State {
			t.Errorf("seeds panel: %s %s with %v pages, /v1/seeds says %s with %d", s.URL, state, pages, s.State, s.Pages)
		}
	}
	if state := str(`document.getElementById('state').textContent`); state != "paused" {
		t.Errorf("the page says the crawl is %q, want paused", state)
	}
	// The host filter narrows the table to one host.
	host := web.Hosts()[0].Authority
	if err := chromedp.Do(bctx, chromedp.SendKeys("#host-filter", host)); err != nil {
		t.Fatal(err)
	}
	if rows := num(`document.querySelectorAll('#hosts tr').length`); rows != 1 {
		t.Errorf("filtered by %s: %v rows", host, rows)
	}
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(document.getElementById('host-filter').value = '', renderHosts(), true)`)); err != nil {
		t.Fatal(err)
	}
	shots := os.Getenv("WEFT_SCREENSHOTS")
	if shots != "" {
		screenshot(t, bctx, filepath.Join(shots, "dashboard.png"))
	}

	// The host page, opened from its row, says what /v1/hosts/{host} says.
	if err := chromedp.Do(bctx, chromedp.Click(`#hosts tr[data-host="`+policyHost+`"] a`)); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 30*time.Second, "the host page", func() bool {
		return str(`document.getElementById('host-view').dataset.loaded`) == policyHost
	})
	if shown := num(`document.getElementById('overview').offsetHeight`); shown != 0 {
		t.Errorf("the overview is still shown (%v px) on the host page", shown)
	}
	var h api.Host
	testwait.Eventually(t, 30*time.Second, "the host page to show what /v1/hosts/{host} says", func() bool {
		getJSON("/v1/hosts/"+policyHost, &h)
		return str(`document.getElementById('host-state').dataset.value`) == h.State &&
			num(`document.querySelector('[data-host="fetched"]').dataset.value`) == float64(h.Activity.Fetched)
	})
	if h.Activity == nil || h.Activity.Fetched == 0 || len(h.Activity.Last) == 0 || h.Policy == nil || h.Robots == nil {
		t.Fatalf("/v1/hosts/%s: %+v", policyHost, h)
	}
	for field, want := range map[string]string{
		"urls_accepted": strconv.FormatInt(h.URLsAccepted, 10), "errors": strconv.FormatInt(h.Activity.Errors, 10),
		"robots": h.Robots.Outcome, "error_streak": strconv.Itoa(h.ErrorStreak), "parks": strconv.Itoa(h.Parks),
		"next_allowed_why": h.NextAllowedWhy,
	} {
		if got := str(`document.querySelector('[data-host="` + field + `"]').dataset.value`); got != want {
			t.Errorf("host page %s = %q, /v1/hosts/%s says %q", field, got, policyHost, want)
		}
	}
	if got := str(`document.querySelector('[data-host="policy"]').textContent`); got != "delay 1s, disallow /private/" {
		t.Errorf("host page policy %q", got)
	}
	if rows := num(`document.querySelectorAll('#host-fetches tr').length`); rows != float64(len(h.Activity.Last)) {
		t.Errorf("host page: %v fetches listed, /v1/hosts/%s has %d", rows, policyHost, len(h.Activity.Last))
	}
	if got := str(`document.querySelector('#host-fetches tr td.url').textContent`); got != h.Activity.Last[0].URL {
		t.Errorf("host page: last fetch %q, /v1/hosts/%s says %q", got, policyHost, h.Activity.Last[0].URL)
	}
	// It lists the host's URLs as GET /v1/urls gives them (the crawl is
	// paused: their estimates hold still), queued first, by estimate.
	var us api.URLs
	getJSON("/v1/urls?limit=100&host="+policyHost, &us)
	if len(us.URLs) == 0 {
		t.Fatalf("/v1/urls?host=%s lists nothing", policyHost)
	}
	testwait.Eventually(t, 30*time.Second, "the host page to list its URLs", func() bool {
		return num(`document.getElementById('host-urls').dataset.count || 0`) == float64(len(us.URLs))
	})
	queuedFirst := func(u api.URL) int { return btoi(u.Status != "queued") }
	slices.SortStableFunc(us.URLs, func(a, b api.URL) int {
		return cmp.Or(cmp.Compare(queuedFirst(a), queuedFirst(b)), cmp.Compare(b.Estimate.Rank, a.Estimate.Rank))
	})
	var want, got []string
	for _, u := range us.URLs[:min(len(us.URLs), 50)] {
		want = append(want, fmt.Sprint(u.URL, " ", u.Estimate.Rank))
	}
	if err := json.Unmarshal([]byte(str(`JSON.stringify([...document.querySelectorAll('#host-urls tr')].map(tr => tr.dataset.url + " " + tr.children[2].dataset.value))`)), &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("host page URLs and estimates:\n%v\n/v1/urls says, in that order:\n%v", got, want)
	}
	if shots != "" {
		screenshot(t, bctx, filepath.Join(shots, "host.png"))
	}
	// Hold the host from its page, and release it: the state is "held",
	// whatever its clock says, then not.
	if err := chromedp.Do(bctx, chromedp.Click("#host-hold")); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 30*time.Second, "the host page to say held", func() bool {
		return str(`document.getElementById('host-state').dataset.value`) == api.StateHeld
	})
	if getJSON("/v1/hosts/"+policyHost, &h); h.State != api.StateHeld || !h.Held {
		t.Errorf("/v1/hosts/%s after Hold: state %q, held %v", policyHost, h.State, h.Held)
	}
	if err := chromedp.Do(bctx, chromedp.Click("#host-release")); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 30*time.Second, "the host page to say it is not held", func() bool {
		return str(`document.getElementById('host-state').dataset.value`) != api.StateHeld
	})

	// Back to the overview, and Resume.
	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/#"), chromedp.Click("#resume")); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 30*time.Second, "the crawl to resume", func() bool { return !c.Live().Paused })
	testwait.Eventually(t, 30*time.Second, "the page to say running", func() bool {
		return str(`document.getElementById('state').textContent`) == "running"
	})
	waitUpdates(1)
	consoleMu.Lock()
	defer consoleMu.Unlock()
	for _, e := range consoleErrs {
		t.Errorf("console: %s", e)
	}
}

// screenshot saves the browser's viewport as a PNG file.
func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(window.scrollTo(0, 0), true)`)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d KB)", path, len(png)>>10)
}
