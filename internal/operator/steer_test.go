package operator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/api"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/testwait"
)

// request sends a request to the server at base, with token unless it is
// "", and returns the status and body of its answer.
func request(t *testing.T, base, method, path, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// waitUntil waits, up to 10 s, for cond to hold.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Eventually(t, 10*time.Second, what, cond)
}

// TestMetricsFromTheStart: before any fetch, the /metrics of a crawl has
// a series at 0 for each error kind and each status class, and for the
// per-host 429 and 5xx counters, so that alert expressions have data from
// the start.
func TestMetricsFromTheStart(t *testing.T) {
	_, cfg := liveWeb(t, 31, 1, 1, 1, time.Millisecond)
	c, base := start(t, cfg, api.Config{}) // not run: nothing fetched
	defer c.Discard()
	code, metrics := request(t, base, "GET", "/metrics", "", "")
	if code != 200 {
		t.Fatalf("/metrics %d", code)
	}
	var want []string
	for _, k := range []string{"unknown", "dns", "refused", "connect", "timeout", "tls", "protocol", "canceled", "bad_url"} {
		want = append(want, `weft_fetch_errors_total{kind="`+k+`"} 0`)
	}
	for _, class := range []string{"1xx", "2xx", "3xx", "4xx", "5xx", "other"} {
		want = append(want, `weft_fetches_total{class="`+class+`"} 0`)
	}
	want = append(want, `weft_host_throttled_total{host=""} 0`, `weft_host_server_errors_total{host=""} 0`, "weft_throttled_total 0", "weft_unavailable_total 0")
	for _, w := range want {
		if !strings.Contains(metrics, "\n"+w+"\n") {
			t.Errorf("/metrics lacks %q", w)
		}
	}
}

// TestPolicyAppliesAtOnce: a policy PUT while the crawl runs holds the
// host's next request (the server's log: it starts the policy's delay
// after the last one ended, not the crawl's), and GET /v1/hosts/{host}
// shows the new gap as soon as the PUT is answered; a DELETE gives the
// crawl's own gap back as soon. The host is held around the PUT, so that
// no lease taken before it is answered can be mistaken for its next
// request.
func TestPolicyAppliesAtOnce(t *testing.T) {
	const delay, policyDelay = 20 * time.Millisecond, 600 * time.Millisecond
	web, cfg := liveWeb(t, 33, 1, 40, 2, delay)
	c, base := start(t, cfg, api.Config{})
	run(t, c)
	u, _ := url.Parse(web.Seeds()[0])
	host := u.Host
	requests := func(after time.Time) int {
		n := 0
		for _, r := range web.Log() {
			if r.Start.After(after) {
				n++
			}
		}
		return n
	}
	status := func() api.Host {
		t.Helper()
		code, body := request(t, base, "GET", "/v1/hosts/"+host, "", "")
		var h api.Host
		if err := json.Unmarshal([]byte(body), &h); code != 200 || err != nil {
			t.Fatalf("GET host: %d %s", code, body)
		}
		return h
	}
	call := func(method, path, body string, want int) {
		t.Helper()
		if code, out := request(t, base, method, path, "tok", body); code != want {
			t.Fatalf("%s %s: %d %s", method, path, code, out)
		}
	}
	waitUntil(t, "three requests", func() bool { return requests(time.Time{}) >= 3 })
	call("POST", "/v1/hosts/"+host+"/pause", "", 200)
	waitUntil(t, "the request in flight", func() bool { return !status().Busy })
	call("PUT", "/v1/policies/"+host, `{"crawl_delay": "600ms"}`, 204)
	put := time.Now()
	if g := status().GapSeconds; g != policyDelay.Seconds() {
		t.Errorf("gap_seconds right after the PUT: %v, want %v", g, policyDelay.Seconds())
	}
	call("POST", "/v1/hosts/"+host+"/resume", "", 200)
	waitUntil(t, "two requests after the PUT", func() bool { return requests(put) >= 2 })
	call("DELETE", "/v1/policies/"+host, "", 204)
	deleted := time.Now()
	if g := status().GapSeconds; g != delay.Seconds() {
		t.Errorf("gap_seconds right after the DELETE: %v, want %v", g, delay.Seconds())
	}
	log := web.Log()
	for i := 1; i < len(log); i++ {
		if r, prev := log[i], log[i-1]; r.Start.After(put) && r.Start.Before(deleted) {
			if d := r.Start.Sub(prev.End); d < policyDelay {
				t.Errorf("%s started %v after the request before it ended, %v after the PUT of a %v delay", r.Path, d, r.Start.Sub(put), policyDelay)
			}
		}
	}
}

// TestSeedsRejectionCodes: POST /v1/seeds to a running crawl says, for each
// URL refused, a stable code and a message that name what is wrong with it.
func TestSeedsRejectionCodes(t *testing.T) {
	web, cfg := liveWeb(t, 32, 1, 3, 1, time.Millisecond)
	c, base := start(t, cfg, api.Config{})
	c.Pause() // nothing is fetched: the crawl only judges the seeds
	run(t, c)
	seed := web.Seeds()[0]
	cases := []struct{ url, reason, code, message string }{
		{"http://a.test:99999/", "invalid", "bad_port", "port"},
		{"http://a.test:8x/", "invalid", "bad_port", "port"},
		{"http://exa mple.test/", "invalid", "bad_host", "host"},
		{"http://[::1/", "invalid", "bad_host", "IPv6"},
		{"http://256.0.0.1/", "invalid", "bad_host", "IPv4"},
		{"http://:80/", "invalid", "bad_host", "host"},
		{"ftp://a.test/", "invalid", "bad_scheme", `scheme "ftp"`},
		{"/relative/path", "invalid", "no_scheme", `"/relative/path" is not a URL: want an absolute http or https URL`},
		{"example.test", "invalid", "no_scheme", `"example.test" is not a URL: want an absolute http or https URL such as https://example.test/`},
		{"", "invalid", "empty", "empty"},
		{"http://a.test/" + strings.Repeat("x", 3000), "filter", "too_long", "over the limit of 2048"},
		{"http://a.test/photo.JPG", "filter", "extension", `extension "JPG"`},
		{seed, "seen", "seen", "already accepted"},
	}
	var urls []string
	for _, c := range cases {
		urls = append(urls, c.url)
	}
	body, _ := json.Marshal(map[string]any{"urls": urls})
	var resp struct {
		Accepted []string
		Rejected []map[string]string
	}
	<-c.Ready() // the crawl takes seeds
	code, out := request(t, base, "POST", "/v1/seeds", "tok", string(body))
	if err := json.Unmarshal([]byte(out), &resp); code != 202 || err != nil {
		t.Fatalf("%d %s", code, out)
	}
	if len(resp.Accepted) != 0 || len(resp.Rejected) != len(cases) {
		t.Fatalf("accepted %v, %d rejected; want all %d rejected", resp.Accepted, len(resp.Rejected), len(cases))
	}
	for i, c := range cases {
		r := resp.Rejected[i]
		if r["reason"] != c.reason || r["code"] != c.code || !strings.Contains(r["message"], c.message) {
			t.Errorf("%.40q: %v, want reason %s, code %s, a message with %q", c.url, r, c.reason, c.code, c.message)
		}
		// A URL that does not parse is named in the message, with what a
		// seed must be.
		if c.reason == "invalid" && (!strings.HasPrefix(r["message"], strconv.Quote(c.url)) || !strings.Contains(r["message"], "want an absolute http or https URL")) {
			t.Errorf("%.40q: message %q does not name the URL and what is wanted", c.url, r["message"])
		}
	}
}

// TestSeedsWithOptionsThroughTheAPI: a seed POST /v1/seeds gives with a
// scope and budget of its own is crawled within them (its host's server
// sees its budget of pages, no more), GET /v1/seeds shows it at its
// limit beside the command line's seed, and limits that are wrong are
// refused naming the seed.
func TestSeedsWithOptionsThroughTheAPI(t *testing.T) {
	web, cfg := liveWeb(t, 33, 2, 10, 2, time.Millisecond)
	cfg.Seeds = web.Seeds()[:1]
	// The first seed's pages link to the second's host: kept to its own
	// host, that seed does not reach the second's pages first (a URL
	// counts against the seed that found it first).
	cfg.Scope.Mode = scope.Host
	c, base := start(t, cfg, api.Config{})
	c.Pause()
	done := run(t, c)
	<-c.Ready()
	second := web.Seeds()[1]
	if code, out := request(t, base, "POST", "/v1/seeds", "tok", `{"seeds": [{"url": "`+second+`", "scope": "host", "max_pages": 2, "include": ["("]}]}`); code != 400 ||
		!strings.Contains(out, "bad_seed_options") || !strings.Contains(out, second) {
		t.Errorf("a bad include: %d %s, want 400 bad_seed_options naming the seed", code, out)
	}
	if code, out := request(t, base, "POST", "/v1/seeds", "tok", `{"seeds": [{"url": "`+second+`", "scope": "host", "max_pages": 2}]}`); code != 202 || !strings.Contains(out, second) {
		t.Fatalf("%d %s", code, out)
	}
	c.Resume()
	sum := <-done
	pages := 0
	host := web.Hosts()[1].Authority
	for _, r := range web.Log() {
		if r.Host == host && r.Path != "/robots.txt" {
			pages++
		}
	}
	if pages != 2 {
		t.Errorf("%s served %d pages, want 2: its seed's budget", host, pages)
	}
	code, out := request(t, base, "GET", "/v1/seeds", "", "")
	var l api.SeedList
	if err := json.Unmarshal([]byte(out), &l); code != 200 || err != nil || len(l.Seeds) != 2 {
		t.Fatalf("%d %s %v", code, out, err)
	}
	first, added := l.Seeds[0], l.Seeds[1]
	if first.URL != web.Seeds()[0] || first.State != "done" || first.Pages == 0 || added.URL != second || added.State != "limit" || added.Pages != 2 ||
		added.Options.MaxPages != 2 || added.Options.Scope != "host" || l.Totals.Pages != sum.Pages {
		t.Errorf("seeds %+v, totals %+v; want the first done, the added one at its limit of 2 pages, %d pages in all", l.Seeds, l.Totals, sum.Pages)
	}
}
