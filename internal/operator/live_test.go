package operator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/api"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

// TestPauseAndStatsLive runs a crawl of the synthetic web with the API on
// loopback: /v1/stats follows it as it goes; a pause through the API stops
// every request from the servers' side (their log) until a resume, with
// politeness kept throughout; and the final /v1/stats agrees with the
// crawl's summary.
func TestPauseAndStatsLive(t *testing.T) {
	const delay = 30 * time.Millisecond
	web, cfg := liveWeb(t, 11, 6, 25, 4, delay)
	cfg.Fetch.ResponseHeaderTimeout = 3 * time.Second
	c, base := start(t, cfg, api.Config{})
	client := &http.Client{Timeout: 5 * time.Second}
	stats := func() api.Stats {
		t.Helper()
		resp, err := client.Get(base + "/v1/stats")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st api.Stats
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != 200 {
			t.Fatalf("stats: %d %v", resp.StatusCode, err)
		}
		return st
	}
	post := func(path string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, nil)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("POST %s: %d", path, resp.StatusCode)
		}
	}

	done := run(t, c)
	testwait.Eventually(t, 20*time.Second, "20 pages crawled", func() bool { return stats().Pages >= 20 })
	post("/v1/pause")
	testwait.Eventually(t, 20*time.Second, "the fetches in flight to end", func() bool { return c.Live().Frontier.InFlight == 0 })
	quietFrom := time.Now()
	before := stats()
	time.Sleep(700 * time.Millisecond) // the pause's span, in which no request may start
	quietTo := time.Now()
	during := stats()
	post("/v1/resume")
	if !before.Paused || !during.Paused || during.Pages != before.Pages {
		t.Errorf("paused: %v then %v, pages %d then %d; want paused and no page fetched", before.Paused, during.Paused, before.Pages, during.Pages)
	}
	for _, r := range web.Log() {
		if r.Start.After(quietFrom) && r.Start.Before(quietTo) {
			t.Errorf("a request during the pause: %s %s at %v", r.Host, r.Path, r.Start.Sub(quietFrom))
		}
	}
	sum := ended(t, done, "the crawl did not end after the resume")
	end := stats()
	if sum.StoppedBy != "drained" || end.Paused || end.Pages != sum.Pages || end.Pages <= before.Pages || end.ByStatus["2xx"] != sum.ByStatus["2xx"] {
		t.Errorf("after the resume: stopped by %s, API pages %d (paused %v), summary %d, %d before the pause", sum.StoppedBy, end.Pages, end.Paused, sum.Pages, before.Pages)
	}
	if rep := synthweb.Audit(web, delay); !rep.OK() {
		t.Errorf("politeness: %+v", rep)
	}
	// The metrics measured the same crawl: one fetch duration per page,
	// and the seeds' high priority.
	m := c.Metrics()
	if m.FetchDuration.Count != uint64(sum.Pages) || m.QueueDelay.Count != uint64(sum.Pages) || m.LastHighPriority.IsZero() || m.BloomFill <= 0 {
		t.Errorf("metrics: %d fetch durations and %d queue delays for %d pages, last high-priority fetch %v, Bloom fill %v",
			m.FetchDuration.Count, m.QueueDelay.Count, sum.Pages, m.LastHighPriority, m.BloomFill)
	}
}

// TestSeedsLive adds seeds to a running crawl through the API: a new URL
// is crawled (the server's log shows it), a known one is "seen", an
// address the SSRF guard forbids and URLs that do not parse are refused
// before any request, and the same Idempotency-Key again adds nothing.
func TestSeedsLive(t *testing.T) {
	web, err := synthweb.Start(synthweb.Config{Seed: 12, Hosts: 3, PagesPerHost: 20, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	seeds := web.Seeds()
	cfg := crawl.Config{Seeds: seeds[:1], DataDir: t.TempDir(), Workers: 4, Delay: 20 * time.Millisecond, UserAgent: "weft/test (+https://example.org/weft-crawler)", NoSitemaps: true,
		NoRequisites: true, Render: crawl.RenderConfig{Mode: crawl.RenderNever}}
	cfg.Fetch.Resolve = web.Resolve()
	// Only the web's own addresses are allowed: any other loopback
	// address stands for a forbidden one.
	for _, ip := range web.Resolve() {
		cfg.Fetch.AllowCIDRs = append(cfg.Fetch.AllowCIDRs, netip.PrefixFrom(netip.MustParseAddr(ip), 32))
	}
	forbidden := "127.0.99.99"
	for _, ip := range web.Resolve() {
		if ip == forbidden {
			t.Fatalf("the web uses %s", forbidden)
		}
	}
	c, base := start(t, cfg, api.Config{})
	c.Pause() // nothing is fetched until the seeds are in
	done := run(t, c)
	fresh := strings.TrimSuffix(seeds[2], "/") + "/?from=api"
	// The forbidden address also in hex, with user info, and as one
	// decimal number: the canonicaliser writes each as 127.0.99.99 first.
	body := `{"urls": ["` + fresh + `", "` + seeds[0] + `", "http://` + forbidden + `:9/x", "http://0x7f.0.0x63.0143:9/hex", "http://user:pw@2130731875:9/dec", "http://[::1", "ftp://a.test/"], "priority": "high"}`
	send := func() (int, api.SeedsResponse) {
		t.Helper()
		var resp api.SeedsResponse
		code := 0
		testwait.EventuallyNil(t, 20*time.Second, "the crawl taking seeds", func() error {
			req, _ := http.NewRequest("POST", base+"/v1/seeds", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer tok")
			req.Header.Set("Idempotency-Key", "batch-1")
			r, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp = api.SeedsResponse{}
			json.NewDecoder(r.Body).Decode(&resp)
			r.Body.Close()
			if code = r.StatusCode; code == http.StatusServiceUnavailable { // Run not yet taking seeds
				return fmt.Errorf("POST /v1/seeds: %d", code)
			}
			return nil
		})
		return code, resp
	}
	code, first := send()
	reasons := map[string]string{}
	for _, r := range first.Rejected {
		reasons[r.URL] = r.Reason
	}
	if code != 202 || len(first.Accepted) != 1 || !strings.Contains(first.Accepted[0], "from=api") ||
		reasons[seeds[0]] != "seen" || reasons["http://"+forbidden+":9/x"] != "forbidden" || reasons["http://[::1"] != "invalid" || reasons["ftp://a.test/"] != "invalid" ||
		reasons["http://"+forbidden+":9/hex"] != "forbidden" || reasons["http://"+forbidden+":9/dec"] != "forbidden" {
		t.Errorf("first request: %d %+v", code, first)
	}
	if code, again := send(); code != 202 || !reflect.DeepEqual(again, first) {
		t.Errorf("the same key again: %d %+v", code, again)
	}
	c.Resume()
	sum := ended(t, done, "the crawl did not end")
	asked := 0
	for _, r := range web.Log() {
		if strings.Contains(r.Path, "from=api") {
			asked++
		}
	}
	if asked != 1 || sum.StoppedBy != "drained" {
		t.Errorf("the seed added through the API was requested %d times (stopped by %s), want once", asked, sum.StoppedBy)
	}
	if sum.Rejected["forbidden"] != 3 || len(sum.Errors) != 0 {
		t.Errorf("rejections %v, errors %v: want the three forbidden seeds refused before any request", sum.Rejected, sum.Errors)
	}
}

// TestHostPauseLive holds one host through the API before the crawl
// starts: the others are crawled while it gets no request at all (its
// server's log), GET /v1/hosts shows it held with its queue; released, it
// is crawled, politely, and the crawl drains.
func TestHostPauseLive(t *testing.T) {
	const delay = 20 * time.Millisecond
	web, cfg := liveWeb(t, 13, 3, 15, 4, delay)
	c, base := start(t, cfg, api.Config{})
	held := web.Hosts()[1]
	call := func(method, path string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes()
	}
	// Named as an operator may type it: the host is held under the name
	// its URLs have.
	if code, _ := call("POST", "/v1/hosts/"+strings.ToUpper(held.Authority)+"/pause"); code != 200 {
		t.Fatalf("pause: %d", code)
	}
	done := run(t, c)
	// The other hosts drain; the held one waits with its seed queued.
	testwait.EventuallyNil(t, 30*time.Second, "the other hosts to drain", func() error {
		if st := c.Live(); st.Pages == 0 || st.Frontier.InFlight != 0 || st.Frontier.Queued == 0 || st.Frontier.ReadyHosts != 0 || st.Frontier.WaitingHost != 0 {
			return fmt.Errorf("%d pages; %+v", st.Pages, st.Frontier)
		}
		return nil
	})
	code, body := call("GET", "/v1/hosts/"+held.Authority)
	var h api.Host
	if err := json.Unmarshal(body, &h); code != 200 || err != nil || !h.Held || h.QueuedInMemory+btoi(h.MoreOnDisk) == 0 {
		t.Errorf("held host: %d %s", code, body)
	}
	for _, r := range web.Log() {
		if r.Addr == held.Addr {
			t.Fatalf("the held host got %s", r.Path)
		}
	}
	// GET /v1/urls: the held host's seed is queued; paging through every
	// URL, five at a time, meets each once and ends.
	code, body = call("GET", "/v1/urls?status=queued&host="+held.Authority)
	var queued api.URLs
	if err := json.Unmarshal(body, &queued); code != 200 || err != nil || len(queued.URLs) == 0 || queued.URLs[0].Host != held.Authority {
		t.Errorf("the held host's queued URLs: %d %s", code, body)
	}
	seenURL := map[string]bool{}
	nDone := 0
	for cursor := ""; ; {
		code, body := call("GET", "/v1/urls?limit=5&cursor="+cursor)
		var page api.URLs
		if err := json.Unmarshal(body, &page); code != 200 || err != nil {
			t.Fatalf("a page of URLs: %d %s", code, body)
		}
		for _, u := range page.URLs {
			if seenURL[u.URL] {
				t.Errorf("%s listed twice", u.URL)
			}
			seenURL[u.URL] = true
			if u.Status == "done" {
				if nDone == 0 { // its page shows where its bytes are
					code, body := call("GET", "/v1/pages/"+u.URLHash)
					var p api.PageInfo
					if err := json.Unmarshal(body, &p); code != 200 || err != nil || p.URL != u.URL || p.BodyKey == nil || p.BodyKey.Length == 0 {
						t.Errorf("the page of %s: %d %s", u.URL, code, body)
					} else if m := regexp.MustCompile(`<title>([^<]*)</title>`).FindSubmatch(web.Body(u.URL)); p.HTTPStatus == 200 && len(p.Captures) > 0 && !p.Captures[0].Revisit && ((m == nil && p.Title != "") || (m != nil && p.Title != string(m[1]))) {
						t.Errorf("the page of %s has title %q; its body has %q", u.URL, p.Title, m)
					} else if _, err := os.Stat(filepath.Join(cfg.DataDir, "warc", p.BodyKey.WARCFile)); err != nil {
						// The file being written is named so once closed;
						// until then it carries ".open".
						if _, err := os.Stat(filepath.Join(cfg.DataDir, "warc", p.BodyKey.WARCFile+".open")); err != nil {
							t.Errorf("its WARC file: %v", err)
						}
					}
				}
				nDone++
			}
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	// A page whose first answer was a server error was fetched twice, and
	// is one URL done.
	var asked, firstTries int
	for _, r := range web.Log() {
		if !strings.HasPrefix(r.Path, "/robots") {
			asked++
		}
	}
	for _, r := range synthweb.FirstTries(web.Log()) {
		if !strings.HasPrefix(r.Path, "/robots") {
			firstTries++
		}
	}
	if live := c.Live(); nDone != int(live.Pages)-(asked-firstTries) {
		t.Errorf("%d URLs listed done, the crawl fetched %d pages, %d of them second tries", nDone, live.Pages, asked-firstTries)
	}
	if code, _ := call("POST", "/v1/hosts/"+held.Authority+"/resume"); code != 200 {
		t.Fatalf("resume: %d", code)
	}
	sum := ended(t, done, "the crawl did not end after the host was resumed")
	n := 0
	for _, r := range web.Log() {
		if r.Addr == held.Addr {
			n++
		}
	}
	if sum.StoppedBy != "drained" || n < 2 {
		t.Errorf("after the resume: stopped by %s, %d requests to the held host", sum.StoppedBy, n)
	}
	if rep := synthweb.Audit(web, delay); !rep.OK() {
		t.Errorf("politeness: %+v", rep)
	}
}

// liveWeb starts a synthetic web of hosts hosts (robots.txt absent) and
// returns it with a crawl configuration for it: loopback allowed, its
// names resolved, sitemaps off.
func liveWeb(t *testing.T, seed int64, hosts, pages, workers int, delay time.Duration) (*synthweb.Web, crawl.Config) {
	t.Helper()
	web, err := synthweb.Start(synthweb.Config{Seed: seed, Hosts: hosts, PagesPerHost: pages, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	cfg := crawl.Config{Seeds: web.Seeds(), DataDir: t.TempDir(), Workers: workers, Delay: delay, UserAgent: "weft/test (+https://example.org/weft-crawler)", NoSitemaps: true,
		NoRequisites: true, Render: crawl.RenderConfig{Mode: crawl.RenderNever}}
	cfg.Fetch.Resolve = web.Resolve()
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	return web, cfg
}

// start makes the crawl of cfg and serves its operator API (serve),
// and returns the crawl and the API's base URL.
func start(t *testing.T, cfg crawl.Config, acfg api.Config) (*crawl.Crawler, string) {
	t.Helper()
	c, err := crawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, serve(t, c, acfg)
}

// serve starts the operator API of c on loopback until the test ends,
// with cfg's settings and the token "tok" unless cfg has one, and
// returns its base URL.
func serve(t *testing.T, c *crawl.Crawler, cfg api.Config) string {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	if cfg.Token == "" {
		cfg.Token = "tok"
	}
	srv, err := api.New(cfg, Resources(c))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	return "http://" + srv.Addr()
}

// run runs c until it ends or the test does (its context is the
// test's), which waits for it; its summary comes on the channel
// returned.
func run(t *testing.T, c *crawl.Crawler) <-chan crawl.Summary {
	done := make(chan crawl.Summary, 1)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		sum, err := c.Run(t.Context())
		if err != nil {
			t.Error(err)
		}
		done <- sum
	}()
	t.Cleanup(func() { <-returned })
	return done
}

// ended returns the summary of a crawl that run started, once it ends;
// if it has not in 90 s, the test fails saying so.
func ended(t *testing.T, done <-chan crawl.Summary, saying string) crawl.Summary {
	t.Helper()
	select {
	case sum := <-done:
		return sum
	case <-time.After(90 * time.Second):
		t.Fatal(saying)
		return crawl.Summary{}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestExternalFetchers: four fetchers outside the crawl lease URLs, fetch
// them and complete the leases, alongside one worker of weft's own; one
// lease is left to expire. From the servers' side: no host ever has two
// requests at once or a gap under the delay, and the expired lease's URL
// is fetched after all; the crawl drains. Sitemaps are weft's own: no
// fetcher is handed one, whose listing it could not give back.
func TestExternalFetchers(t *testing.T) {
	const delay = 25 * time.Millisecond
	web, cfg := liveWeb(t, 14, 4, 15, 1, delay)
	cfg.NoSitemaps = false
	c, base := start(t, cfg, api.Config{LeaseTTL: 300 * time.Millisecond})
	call := func(path string, in, out any) int {
		b, _ := json.Marshal(in)
		req, _ := http.NewRequest("POST", base+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		if out != nil {
			json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	// The fetchers reach the web's hosts as weft does: by its table.
	resolve := web.Resolve()
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(addr)
			if ip, ok := resolve[host]; ok {
				addr = net.JoinHostPort(ip, port)
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}}
	done := run(t, c)
	var abandoned atomic.Value // the URL of the lease left to expire
	var external atomic.Int64
	var reported sync.Map // URL -> the content hash its fetcher reported
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				var lr api.LeaseResponse
				if code := call("/v1/frontier/lease", api.LeaseRequest{WorkerID: fmt.Sprint("w", w), MaxURLs: 2, WaitMS: 200}, &lr); code != 200 {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				for _, l := range lr.URLs {
					if strings.Contains(l.URL, "sitemap") {
						t.Errorf("a sitemap handed to an external fetcher: %s", l.URL)
					}
					if w == 0 && abandoned.CompareAndSwap(nil, l.URL) {
						continue // never completed: it expires
					}
					status, hash := 0, ""
					if resp, err := client.Get(l.URL); err == nil {
						h := sha256.New()
						io.Copy(h, resp.Body)
						resp.Body.Close()
						status, hash = resp.StatusCode, "sha256:"+hex.EncodeToString(h.Sum(nil))
						reported.Store(l.URL, hash)
					}
					if code := call("/v1/frontier/complete", api.CompleteRequest{LeaseID: l.LeaseID, URL: l.URL, StatusCode: status, FetchedAt: time.Now(), ContentHash: hash}, nil); code != 204 {
						t.Errorf("complete %s: %d", l.URL, code)
					}
					external.Add(1)
				}
			}
		})
	}
	sum := ended(t, done, "the crawl did not end")
	close(stop)
	wg.Wait()
	if external.Load() == 0 || abandoned.Load() == nil {
		t.Fatalf("%d URLs fetched by external fetchers, abandoned %v", external.Load(), abandoned.Load())
	}
	if rep := synthweb.Audit(web, delay); !rep.OK() {
		t.Errorf("politeness with external fetchers: %v, robots not first %v", rep.Breaches(), rep.RobotsNotFirst)
	}
	got := map[string]bool{}
	auth := map[string]string{}
	for _, h := range web.Hosts() {
		auth[h.Addr] = h.Authority
	}
	for _, r := range web.Log() {
		got["http://"+auth[r.Addr]+r.Path] = true
	}
	if u := abandoned.Load().(string); !got[u] {
		t.Errorf("the URL of the expired lease, %s, was never fetched", u)
	}
	// The fetch log keeps the hash each external fetcher reported, as it
	// reported it; weft's own fetches carry their payload digest.
	data, err := os.ReadFile(filepath.Join(cfg.DataDir, "fetches.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var logged, own int
	for line := range strings.Lines(string(data)) {
		var r fetchlog.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("fetches.jsonl: %v: %s", err, line)
		}
		switch want, _ := reported.Load(r.URL); {
		case r.Outcome == "external":
			if logged++; r.ContentHash != want || r.SHA1 != "" {
				t.Errorf("%s: external line with content hash %q and sha1 %q, want %q and none", r.URL, r.ContentHash, r.SHA1, want)
			}
		case r.Outcome == "ok":
			if own++; r.ContentHash != "" || !strings.HasPrefix(r.SHA1, "sha1:") {
				t.Errorf("%s: own fetch with content hash %q and sha1 %q, want none and the payload digest", r.URL, r.ContentHash, r.SHA1)
			}
		}
	}
	if logged == 0 || own == 0 {
		t.Errorf("%d external lines and %d of weft's own in the fetch log", logged, own)
	}
	t.Logf("%d pages: %d by external fetchers; stopped by %s", sum.Pages, external.Load(), sum.StoppedBy)
	if sum.StoppedBy != "drained" {
		t.Errorf("stopped by %s", sum.StoppedBy)
	}
}
