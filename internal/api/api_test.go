package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/history"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/robots"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeCrawl is every resource of a crawl, with fixed numbers. It accepts
// the seeds whose URL contains "ok" and calls the others seen.
type fakeCrawl struct {
	mu       sync.Mutex
	paused   bool
	seeds    [][]string // the URLs of each AddSeeds call
	opts     [][]SeedOptions
	high     []bool
	held     map[string]bool
	policies map[string]policy.Policy
}

// SeedList pages through three seeds, the second at its limit.
func (f *fakeCrawl) SeedList(offset, limit int) SeedList {
	all := []SeedStatus{{URL: "http://a.test/", ID: 1, State: "running", Pages: 3},
		{URL: "http://b.test/", ID: 2, State: "limit", Pages: 5, Options: SeedOptions{MaxPages: 5}, Dropped: 2},
		{URL: "http://c.test/", ID: 3, State: "failing", Errors: 1}}
	l := SeedList{Total: len(all), Totals: SeedTotals{Running: 1, Limit: 1, Failing: 1, Pages: 8, Errors: 1, Dropped: 2}}
	if offset < len(all) {
		l.Seeds = all[offset:min(len(all), offset+limit)]
		if offset+limit < len(all) {
			l.Next = offset + limit
		}
	}
	return l
}

// resourcesOf serves f as every resource.
func resourcesOf(f *fakeCrawl) Resources {
	return Resources{Crawl: f, Seeds: f, Frontier: f, Hosts: f, Fetches: f, URLs: f, Policies: f}
}

func (f *fakeCrawl) AddSeeds(urls []string, opts []SeedOptions, high bool) ([]Verdict, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seeds = append(f.seeds, urls)
	f.opts = append(f.opts, opts)
	f.high = append(f.high, high)
	out := make([]Verdict, len(urls))
	for i, u := range urls {
		out[i].URL = u
		if !strings.Contains(u, "ok") {
			out[i].Reason, out[i].Code, out[i].Message = "seen", "seen", "already accepted"
		}
	}
	return out, nil
}

func (f *fakeCrawl) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return Stats{Pages: 42, Bytes: 4096, ByStatus: map[string]int64{"2xx": 40, "4xx": 2},
		Rejected: map[string]int64{"seen": 9, "robots": 3}, Robots: map[string]int64{"rules": 5},
		Errors: map[string]int64{"timeout": 1}, WARCFiles: []string{"a.warc.gz"}, WARCBytes: 1234,
		Revisits: 3, RevisitBytes: 3000, EarlierRevisits: 2, EarlierBytes: 2000,
		Uploads:   &UploadStats{Files: 5, Bytes: 5000, Failures: 1},
		Frontier:  FrontierStats{Queued: 7, InFlight: 2, ActiveHosts: 3, ReadyHosts: 1, WaitingHosts: 2, Stored: new(int64(9))},
		Paused:    f.paused,
		ByOutcome: map[string]int64{"ok": 38, "redirect": 2, "error:timeout": 1},
	}
}

func (f *fakeCrawl) Host(host string) HostStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	if host == "slow.test" { // its robots.txt asks for an hour between requests
		return HostStatus{Host: host, Known: true, Robots: robots.DelayRefusedPolicy(&robots.Policy{Outcome: robots.Rules, Status: 200,
			CrawlDelay: time.Hour, FetchedAt: time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)}, time.Minute)}
	}
	if host != "known.test:8080" {
		return HostStatus{Host: host, Frontier: frontier.HostInfo{Held: f.held[host]}}
	}
	return HostStatus{Host: host, Known: true, Gap: 2 * time.Second, Accepted: 17,
		Frontier: frontier.HostInfo{Known: true, Queued: 5, Held: f.held[host], Clock: frontier.Clock{NextAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Streak: 2, Backoff: 2 * time.Second}},
		Robots:   &robots.Policy{Outcome: robots.Rules, Status: 200, FetchedAt: time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)}}
}

func (f *fakeCrawl) Hold(host string, on bool) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held == nil {
		f.held = map[string]bool{}
	}
	f.held[host] = on
	return host, nil
}

// URLs serves 10 records of two hosts, a.test's done and b.test's queued.
func (f *fakeCrawl) URLs(host, status string, after *URLPos, limit int) ([]URLRecord, *URLPos, error) {
	var recs []URLRecord
	var last *URLPos
	for i := range 10 {
		r := URLRecord{Pos: URLPos{Part: 1, Host: "a.test", Hash: [16]byte{byte(i)}}, URL: fmt.Sprintf("http://a.test/%d", i), Status: "done", LastFetch: time.Unix(1e9, 0),
			Rank: uint32(10 * i), Estimate: Estimate{Rank: uint32(20 * i), InLinkCash: uint32(2*i + 1), DepthPrior: 8, SitemapPrior: 1, Boost: 2}}
		if i >= 6 {
			r.Pos.Part, r.Pos.Host, r.URL, r.Status, r.LastFetch = 2, "b.test", fmt.Sprintf("http://b.test/%d", i), "queued", time.Time{}
		}
		p := r.Pos
		if (after != nil && (p.Part < after.Part || p.Part == after.Part && p.Hash[0] <= after.Hash[0])) || (host != "" && host != p.Host) {
			continue
		}
		if len(recs) == limit {
			return recs, last, nil
		}
		last = &p
		if status == "" || r.Status == status {
			recs = append(recs, r)
		}
	}
	return recs, nil, nil
}

func (f *fakeCrawl) Policy(host string) (policy.Policy, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.policies[host]
	return p, ok
}

// SetPolicy refuses what a crawl with --delay 1s would: a shorter delay.
func (f *fakeCrawl) SetPolicy(host string, p policy.Policy) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := policy.NewSet(policy.Limits{Delay: time.Second}).Put(host, p); err != nil {
		return err
	}
	if f.policies == nil {
		f.policies = map[string]policy.Policy{}
	}
	f.policies[host] = p
	return nil
}

func (f *fakeCrawl) DeletePolicy(host string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.policies[host]
	delete(f.policies, host)
	return ok, nil
}

// Lease leases one URL, lease "L1"; Complete knows it.
func (f *fakeCrawl) Lease(ctx context.Context, n int, ttl, wait time.Duration) ([]Lease, error) {
	return []Lease{{ID: "L1", URL: "http://a.test/", Host: "a.test", Expires: time.Unix(2e9, 0)}}, nil
}

func (f *fakeCrawl) Complete(id, url string, status int, fetchedAt time.Time, contentHash string) error {
	if id != "L1" || url != "http://a.test/" {
		return ErrUnknownLease
	}
	return nil
}

func (f *fakeCrawl) Hosts(limit int) []HostStatus {
	return []HostStatus{f.Host("known.test:8080")}[:min(limit, 1)]
}

func (f *fakeCrawl) Recent() []json.RawMessage {
	return []json.RawMessage{json.RawMessage(`{"time":"0001-01-01T00:00:00Z","url":"http://known.test:8080/","host":"known.test:8080","status":200,"bytes":0,"duration_ms":0,"outcome":"ok","depth":0}`)}
}

func (f *fakeCrawl) Activity(host string) (history.Activity, bool) {
	if host != "known.test:8080" {
		return history.Activity{}, false
	}
	return history.Activity{Fetched: 3, Errors: 1, LastFetch: time.Unix(2e9, 0), PerMinute: 2,
		Last: []history.Fetch{{Time: time.Unix(2e9, 0), URL: "http://known.test:8080/", Status: 200, DurationMS: 12, Outcome: "ok"}}, Parks: []history.Park{}}, true
}

func (f *fakeCrawl) Metrics() Metrics {
	return Metrics{
		FetchDuration: Histogram{Bounds: []float64{0.1, 1}, Counts: []uint64{3, 5}, Count: 6, Sum: 4.5},
		QueueDelay:    Histogram{Bounds: []float64{0.1, 1}, Counts: []uint64{1, 1}, Count: 1, Sum: 0.05},
		HostErrors:    []HostErrors{{Host: "slow.test", Throttled: 4, ServerErrors: 1}},
		LinksCut:      3,
		LinksCutHosts: []HostPages{{Host: "index.test", Pages: 2}, {Host: "docs.test", Pages: 1}},
		DNSHits:       12, DNSMisses: 3, LastHighPriority: time.Now().Add(-time.Minute),
		BloomFill:     0.25,
		StatusClasses: []string{"1xx", "2xx", "3xx", "4xx", "5xx", "other"}, ErrorKinds: []string{"unknown", "timeout", "dns", "connect", "refused", "tls", "protocol", "bad_url", "canceled"},
	}
}

func (f *fakeCrawl) Page(pos URLPos) (Page, error) {
	if pos.Host != "a.test" {
		return Page{}, ErrUnknownURL
	}
	return Page{URL: "http://a.test/0", Status: "done", LastStatus: 200,
		Captures: []Capture{{Date: time.Unix(2e9, 0), HTTPStatus: 200, ContentHash: "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", BodyKey: BodyKey{WARCFile: "w.warc.gz", Offset: 10, Length: 99}}}}, nil
}

func (f *fakeCrawl) Pause()  { f.mu.Lock(); f.paused = true; f.mu.Unlock() }
func (f *fakeCrawl) Resume() { f.mu.Lock(); f.paused = false; f.mu.Unlock() }

// do sends a request to s's handler and returns the status and body.
func do(t *testing.T, s *Server, method, path, token, body string) (int, http.Header, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	req.Host = "127.0.0.1:8080"
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	return w.Code, w.Header(), w.Body.String()
}

// errorCode returns the code of a JSON error body.
func errorCode(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not a JSON error with a code and a message: %q (%v)", body, err)
	}
	return e.Error.Code
}

// TestAuth: reads on a loopback server need no token; every mutating
// request does, compared exactly; a server on another address needs one
// for everything and will not start without one.
func TestAuth(t *testing.T) {
	f := &fakeCrawl{}
	open, err := New(Config{Addr: "127.0.0.1:0"}, resourcesOf(f))
	if err != nil {
		t.Fatal(err)
	}
	if code, _, _ := do(t, open, "GET", "/v1/stats", "", ""); code != 200 {
		t.Errorf("loopback read without a token: %d", code)
	}
	for host, want := range map[string]int{"localhost:8080": 200, "[::1]:8080": 200, "evil.example:8080": 401, "evil.example": 401} {
		req := httptest.NewRequest("GET", "/v1/stats", nil)
		req.Host = host // a DNS-rebinding page sends its own name
		w := httptest.NewRecorder()
		open.Handler().ServeHTTP(w, req)
		if w.Code != want {
			t.Errorf("a loopback read with Host %s: %d, want %d", host, w.Code, want)
		}
	}
	if code, _, body := do(t, open, "POST", "/v1/pause", "", ""); code != 401 || errorCode(t, body) != "unauthorized" || f.paused {
		t.Errorf("mutation on a server with no token: %d %s, paused %v", code, body, f.paused)
	}

	s, err := New(Config{Addr: "127.0.0.1:0", Token: "s3cret"}, resourcesOf(f))
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"", "wrong", "s3cre", "s3cret2"} {
		code, h, body := do(t, s, "POST", "/v1/pause", tok, "")
		if code != 401 || errorCode(t, body) != "unauthorized" || h.Get("WWW-Authenticate") == "" || f.paused {
			t.Errorf("token %q: %d %s", tok, code, body)
		}
	}
	if code, _, body := do(t, s, "POST", "/v1/pause", "s3cret", ""); code != 200 || !f.paused || !strings.Contains(body, `"paused": true`) {
		t.Errorf("pause with the token: %d %s", code, body)
	}
	if code, _, _ := do(t, s, "POST", "/v1/resume", "s3cret", ""); code != 200 || f.paused {
		t.Errorf("resume: %d, paused %v", code, f.paused)
	}

	for _, addr := range []string{"0.0.0.0:8080", ":8080", "[::]:8080", "192.0.2.7:8080"} {
		if _, err := New(Config{Addr: addr}, resourcesOf(f)); err == nil || !strings.Contains(err.Error(), "token is required") {
			t.Errorf("%s without a token: %v", addr, err)
		}
	}
	wide, err := New(Config{Addr: "0.0.0.0:8080", Token: "s3cret"}, resourcesOf(f)) // built, never started: no socket opened
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/v1/stats", "/metrics", "/v1/openapi.json", "/nowhere"} {
		if code, _, body := do(t, wide, "GET", p, "", ""); code != 401 || errorCode(t, body) != "unauthorized" {
			t.Errorf("GET %s without a token on a non-loopback server: %d %s", p, code, body)
		}
	}
	if code, _, _ := do(t, wide, "GET", "/v1/stats", "s3cret", ""); code != 200 {
		t.Errorf("with the token: %d", code)
	}
}

// TestErrors: unknown endpoints, wrong methods and oversized bodies get
// JSON errors with stable codes.
func TestErrors(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t", MaxBody: 100}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	if code, _, body := do(t, s, "GET", "/v1/nothing", "", ""); code != 404 || errorCode(t, body) != "not_found" {
		t.Errorf("unknown endpoint: %d %s", code, body)
	}
	if code, h, body := do(t, s, "DELETE", "/v1/stats", "t", ""); code != 405 || errorCode(t, body) != "method_not_allowed" || h.Get("Allow") != "GET" {
		t.Errorf("wrong method: %d %v %s", code, h, body)
	}
	if code, _, body := do(t, s, "POST", "/v1/pause", "t", strings.Repeat("x", 101)); code != 413 || errorCode(t, body) != "body_too_large" {
		t.Errorf("oversized body: %d %s", code, body)
	}
}

// TestStatsAndMetrics: /v1/stats and /metrics report the same numbers,
// the crawl's.
func TestStatsAndMetrics(t *testing.T) {
	f := &fakeCrawl{}
	s, err := New(Config{Addr: "127.0.0.1:0"}, resourcesOf(f))
	if err != nil {
		t.Fatal(err)
	}
	code, h, body := do(t, s, "GET", "/v1/stats", "", "")
	var st Stats
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil || h.Get("Content-Type") != "application/json" {
		t.Fatalf("stats: %d %v %s", code, err, body)
	}
	if st.Pages != 42 || st.ByStatus["2xx"] != 40 || st.Frontier.Queued != 7 || st.Frontier.WaitingHosts != 2 || st.WARCBytes != 1234 || st.Handled == nil ||
		st.Uploads == nil || *st.Uploads != (UploadStats{Files: 5, Bytes: 5000, Failures: 1}) {
		t.Errorf("stats: %+v", st)
	}
	code, _, metrics := do(t, s, "GET", "/metrics", "", "")
	if code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	for _, want := range []string{
		"weft_pages_total 42", `weft_fetches_total{class="2xx"} 40`, `weft_fetches_total{class="4xx"} 2`,
		`weft_rejected_urls_total{reason="seen"} 9`, `weft_robots_fetches_total{outcome="rules"} 5`,
		`weft_fetch_errors_total{kind="timeout"} 1`, `weft_fetch_outcomes_total{outcome="redirect"} 2`, "weft_received_bytes_total 4096", "weft_frontier_queued 7", "weft_queue_stored 9",
		"weft_frontier_in_flight 2", "weft_frontier_active_hosts 3", "weft_paused 0", "go_goroutines",
		`weft_fetch_duration_seconds_bucket{le="0.1"} 3`, `weft_fetch_duration_seconds_bucket{le="+Inf"} 6`, "weft_fetch_duration_seconds_sum 4.5",
		`weft_queue_delay_seconds_count 1`, `weft_host_throttled_total{host="slow.test"} 4`, `weft_host_server_errors_total{host="slow.test"} 1`,
		"weft_pages_links_cut_total 3", `weft_host_pages_links_cut_total{host="index.test"} 2`, `weft_host_pages_links_cut_total{host="docs.test"} 1`,
		"weft_dns_cache_hits_total 12", "weft_dns_cache_misses_total 3", "weft_seen_bloom_fill_ratio 0.25",
		"weft_revisits_total 3", "weft_revisit_bytes_total 3000", "weft_earlier_revisits_total 2", "weft_earlier_revisit_bytes_total 2000",
		"weft_warc_uploaded_files_total 5", "weft_warc_uploaded_bytes_total 5000", "weft_warc_upload_failures_total 1",
	} {
		if !strings.Contains(metrics, want+"\n") && !strings.Contains(metrics, want+" ") {
			t.Errorf("metrics lack %q", want)
		}
	}
	if !strings.Contains(metrics, "weft_seconds_since_high_priority_fetch 60.") {
		t.Error("metrics lack the time since the last high-priority fetch (a minute)")
	}
	f.Pause()
	if _, _, metrics := do(t, s, "GET", "/metrics", "", ""); !strings.Contains(metrics, "weft_paused 1\n") {
		t.Error("weft_paused is not 1 while paused")
	}
}

// TestOpenAPIInSync: the OpenAPI document describes exactly the routes
// served, a mutating route requires the token there too, and the schemas
// have exactly the fields the server sends and reads.
func TestOpenAPIInSync(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]struct{ Security []map[string][]string }
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Properties map[string]any
				}
			}
		}
	}
	s, err := New(Config{Addr: "127.0.0.1:0"}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := do(t, s, "GET", "/v1/openapi.json", "", "")
	if code != 200 {
		t.Fatalf("openapi.json: %d", code)
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	var documented, served []string
	for p, ops := range doc.Paths {
		for m, op := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
			open := slices.ContainsFunc(op.Security, func(r map[string][]string) bool { return len(r) == 0 })
			mutating := m == "post" || m == "put" || m == "delete" || m == "patch"
			if open == mutating {
				t.Errorf("%s %s: documented as open %v, but mutating %v", m, p, open, mutating)
			}
		}
	}
	for _, rt := range routes {
		served = append(served, rt.method+" "+rt.path)
		if rt.mutating != (rt.method != http.MethodGet) {
			t.Errorf("route %s %s: mutating %v", rt.method, rt.path, rt.mutating)
		}
	}
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Errorf("documented %v\nserved     %v", documented, served)
	}
	fields := func(v any) []string {
		var out []string
		for f := range reflect.TypeOf(v).Fields() {
			if name := strings.Split(f.Tag.Get("json"), ",")[0]; f.IsExported() && name != "-" { // "-": never served
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	// Fetch, a line of the crawl's fetch log, is the crawl's: checked in
	// internal/operator (TestFetchSchema).
	for name, v := range map[string]any{"Stats": Stats{}, "Host": Host{}, "SeedsResponse": SeedsResponse{}, "SeedsRequest": SeedsRequest{}, "URL": URL{}, "Estimate": Estimate{}, "URLs": URLs{}, "HostPolicy": HostPolicy{}, "Rejected": Rejected{}, "LeaseRequest": LeaseRequest{}, "LeasedURL": LeasedURL{}, "CompleteRequest": CompleteRequest{}, "PageInfo": PageInfo{}, "Capture": Capture{}, "BodyKey": BodyKey{},
		"HostList": HostList{}, "Fetches": Fetches{}, "LeaseResponse": LeaseResponse{},
		"ClusterView": ClusterView{}, "ClusterNodeView": ClusterNodeView{}, "History": History{}, "Sample": history.Sample{},
		"SeedOptions": SeedOptions{}, "SeedStatus": SeedStatus{}, "SeedTotals": SeedTotals{}, "SeedList": SeedList{}} {
		if got := slices.Sorted(maps.Keys(doc.Components.Schemas[name].Properties)); !slices.Equal(got, fields(v)) {
			t.Errorf("%s schema %v, struct %v", name, got, fields(v))
		}
	}
	props := doc.Components.Schemas["Stats"].Properties
	if frontierProps := slices.Sorted(maps.Keys(props["frontier"].Properties)); !slices.Equal(frontierProps, fields(FrontierStats{})) {
		t.Errorf("frontier schema %v, struct %v", frontierProps, fields(FrontierStats{}))
	}
}

// TestHosts: GET /v1/hosts/{host} shows a host's queue, clock and
// robots.txt; an unknown host is a 404; pausing and resuming one host
// need the token and reach the crawl.
func TestHosts(t *testing.T) {
	f := &fakeCrawl{}
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t"}, resourcesOf(f))
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := do(t, s, "GET", "/v1/hosts/KNOWN.test:8080", "", "")
	var h Host
	if err := json.Unmarshal([]byte(body), &h); code != 200 || err != nil {
		t.Fatalf("%d %s %v", code, body, err)
	}
	if h.Host != "known.test:8080" || h.QueuedInMemory != 5 || h.GapSeconds != 2 || h.ErrorStreak != 2 || h.URLsAccepted != 17 ||
		h.NextAllowed == nil || !h.NextAllowed.Equal(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)) || h.Robots == nil || h.Robots.Outcome != "rules" {
		t.Errorf("host: %+v", h)
	}
	if code, _, body := do(t, s, "GET", "/v1/hosts/nobody.test", "", ""); code != 404 || errorCode(t, body) != "unknown_host" {
		t.Errorf("unknown host: %d %s", code, body)
	}
	if code, _, _ := do(t, s, "POST", "/v1/hosts/known.test:8080/pause", "", ""); code != 401 || f.held["known.test:8080"] {
		t.Errorf("pause without the token: %d", code)
	}
	if code, _, _ := do(t, s, "POST", "/v1/hosts/known.test:8080/pause", "t", ""); code != 200 || !f.held["known.test:8080"] {
		t.Errorf("pause: %d", code)
	}
	if _, _, body := do(t, s, "GET", "/v1/hosts/known.test:8080", "", ""); !strings.Contains(body, `"held": true`) {
		t.Errorf("held host: %s", body)
	}
	// A host not known yet can be held ahead of its first URL, and is shown.
	do(t, s, "POST", "/v1/hosts/later.test/pause", "t", "")
	if code, _, _ := do(t, s, "GET", "/v1/hosts/later.test", "", ""); code != 200 {
		t.Errorf("a held host not known yet: %d", code)
	}
	if code, _, _ := do(t, s, "POST", "/v1/hosts/known.test:8080/resume", "t", ""); code != 200 || f.held["known.test:8080"] {
		t.Errorf("resume: %d", code)
	}
}

// TestURLs pages through GET /v1/urls with its opaque cursor, filtered by
// host and status, and refuses a bad cursor, limit or status.
func TestURLs(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0"}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	list := func(query string) URLs {
		t.Helper()
		code, _, body := do(t, s, "GET", "/v1/urls?"+query, "", "")
		var u URLs
		if err := json.Unmarshal([]byte(body), &u); code != 200 || err != nil {
			t.Fatalf("%s: %d %s", query, code, body)
		}
		return u
	}
	var all []string
	cursor := ""
	for range 10 {
		page := list("limit=3&cursor=" + cursor)
		for _, u := range page.URLs {
			all = append(all, u.URL)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if len(all) != 10 || all[0] != "http://a.test/0" || all[9] != "http://b.test/9" {
		t.Errorf("paged through %v", all)
	}
	if u := list("host=b.test"); len(u.URLs) != 4 || u.URLs[0].Status != "queued" || u.NextCursor != "" || u.URLs[0].LastFetch != nil {
		t.Errorf("b.test's: %+v", u)
	}
	// Each URL shows the rank it was queued with, and what it would be
	// queued with now, and why.
	_, _, body := do(t, s, "GET", "/v1/urls?host=b.test&limit=1", "", "")
	if !strings.Contains(body, `"rank": 60,`) || !strings.Contains(body, `"estimate": {
        "rank": 120,
        "in_link_cash": 13,
        "depth_prior": 8,
        "sitemap_prior": 1,
        "boost": 2
      }`) {
		t.Errorf("b.test's first URL: %s", body)
	}
	done := list("status=done&limit=100")
	if len(done.URLs) != 6 || done.URLs[0].LastFetch == nil {
		t.Errorf("done: %+v", done)
	}
	// A url_hash from the list finds its page.
	code, _, body := do(t, s, "GET", "/v1/pages/"+done.URLs[0].URLHash, "", "")
	var p PageInfo
	if err := json.Unmarshal([]byte(body), &p); code != 200 || err != nil || p.URL != "http://a.test/0" || p.BodyKey == nil || p.BodyKey.WARCFile != "w.warc.gz" ||
		p.BodyKey.Offset != 10 || !strings.HasPrefix(p.ContentHash, "sha1:") || len(p.Captures) != 1 {
		t.Errorf("page: %d %s", code, body)
	}
	if code, _, body := do(t, s, "GET", "/v1/pages/"+list("host=b.test").URLs[0].URLHash, "", ""); code != 404 || errorCode(t, body) != "unknown_url" {
		t.Errorf("unknown page: %d %s", code, body)
	}
	if code, _, body := do(t, s, "GET", "/v1/pages/zz", "", ""); code != 400 || errorCode(t, body) != "bad_url_hash" {
		t.Errorf("bad url_hash: %d %s", code, body)
	}
	for _, c := range []struct{ query, code string }{
		{"cursor=%25%25", "bad_cursor"}, {"cursor=AAAA", "bad_cursor"}, {"limit=0", "bad_limit"}, {"limit=1001", "bad_limit"},
		{"limit=x", "bad_limit"}, {"status=lost", "bad_status"},
	} {
		if code, _, body := do(t, s, "GET", "/v1/urls?"+c.query, "", ""); code != 400 || errorCode(t, body) != c.code {
			t.Errorf("%s: %d %s", c.query, code, body)
		}
	}
}

// TestPolicies: PUT sets a host's policy (204), GET reads it back, a
// policy that would loosen the crawl is refused (422), bad JSON is a 400,
// DELETE removes it and a second DELETE is a 404; changes need the token.
func TestPolicies(t *testing.T) {
	f := &fakeCrawl{}
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t"}, resourcesOf(f))
	if err != nil {
		t.Fatal(err)
	}
	good := `{"crawl_delay": "5s", "disallowed": ["/private/"], "max_urls": 100}`
	if code, _, _ := do(t, s, "PUT", "/v1/policies/a.test", "", good); code != 401 {
		t.Errorf("PUT without the token: %d", code)
	}
	if code, _, body := do(t, s, "PUT", "/v1/policies/a.test", "t", good); code != 204 {
		t.Errorf("PUT: %d %s", code, body)
	}
	code, _, body := do(t, s, "GET", "/v1/policies/a.test", "", "")
	var hp HostPolicy
	if err := json.Unmarshal([]byte(body), &hp); code != 200 || err != nil || time.Duration(hp.Delay) != 5*time.Second || hp.MaxURLs != 100 || len(hp.Disallow) != 1 {
		t.Errorf("GET: %d %s", code, body)
	}
	if !strings.Contains(body, `"crawl_delay": "5s"`) || !strings.Contains(body, `"disallowed": [`) {
		t.Errorf("GET answers in another schema than PUT takes: %s", body)
	}
	for _, c := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"crawl_delay": "100ms"}`, 422, "policy_refused"},
		{`{"crawl_delay": 5}`, 400, "bad_json"},
		{`{"delay": "5s", "crawl_delay": "5s"}`, 400, "bad_json"},
		{`{"allow": ["/"]}`, 400, "bad_json"},
		{`{`, 400, "bad_json"},
		{``, 400, "bad_json"},
		{`null`, 400, "bad_json"},
	} {
		if code, _, out := do(t, s, "PUT", "/v1/policies/a.test", "t", c.body); code != c.status || errorCode(t, out) != c.code {
			t.Errorf("PUT %s: %d %s", c.body, code, out)
		}
	}
	if p, _ := f.Policy("a.test"); time.Duration(p.Delay) != 5*time.Second {
		t.Errorf("a refused PUT changed the policy: %+v", p)
	}
	if code, _, _ := do(t, s, "DELETE", "/v1/policies/a.test", "t", ""); code != 204 {
		t.Errorf("DELETE: %d", code)
	}
	if code, _, body := do(t, s, "DELETE", "/v1/policies/a.test", "t", ""); code != 404 || errorCode(t, body) != "no_policy" {
		t.Errorf("DELETE again: %d %s", code, body)
	}
	if code, _, body := do(t, s, "GET", "/v1/policies/a.test", "", ""); code != 404 || errorCode(t, body) != "no_policy" {
		t.Errorf("GET after DELETE: %d %s", code, body)
	}
}

// TestLeaseAndCompleteErrors: the lease and complete endpoints need the
// token, check their bodies, and say when a lease is not out.
func TestLeaseAndCompleteErrors(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t"}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := do(t, s, "POST", "/v1/frontier/lease", "t", `{"worker_id": "w1", "max_urls": 2}`)
	var lr LeaseResponse
	if err := json.Unmarshal([]byte(body), &lr); code != 200 || err != nil || len(lr.URLs) != 1 || lr.URLs[0].LeaseID != "L1" {
		t.Errorf("lease: %d %s", code, body)
	}
	if code, _, _ := do(t, s, "POST", "/v1/frontier/complete", "t", `{"lease_id": "L1", "url": "http://a.test/", "status_code": 200}`); code != 204 {
		t.Errorf("complete: %d", code)
	}
	for _, c := range []struct {
		path, token, body string
		status            int
		code              string
	}{
		{"/v1/frontier/lease", "", `{}`, 401, "unauthorized"},
		{"/v1/frontier/lease", "t", `{"max_urls": 101}`, 400, "bad_json"},
		{"/v1/frontier/lease", "t", `{"wait_ms": -1}`, 400, "bad_json"},
		{"/v1/frontier/lease", "t", `{"urls": 1}`, 400, "bad_json"},
		{"/v1/frontier/complete", "", `{}`, 401, "unauthorized"},
		{"/v1/frontier/complete", "t", `{"url": "http://a.test/"}`, 400, "bad_json"},
		{"/v1/frontier/complete", "t", `{"lease_id": "L2", "url": "http://a.test/", "status_code": 200}`, 404, "unknown_lease"},
		{"/v1/frontier/complete", "t", `{"lease_id": "L1", "url": "http://b.test/", "status_code": 200}`, 404, "unknown_lease"},
	} {
		if code, _, out := do(t, s, "POST", c.path, c.token, c.body); code != c.status || errorCode(t, out) != c.code {
			t.Errorf("%s %s: %d %s", c.path, c.body, code, out)
		}
	}
}

// TestHostListAndFetches: GET /v1/hosts lists the hosts, GET /v1/fetches
// the last fetches.
func TestHostListAndFetches(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0"}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := do(t, s, "GET", "/v1/hosts?limit=5", "", "")
	var hl HostList
	if err := json.Unmarshal([]byte(body), &hl); code != 200 || err != nil || len(hl.Hosts) != 1 || hl.Hosts[0].QueuedInMemory != 5 {
		t.Errorf("hosts: %d %s", code, body)
	}
	if code, _, body := do(t, s, "GET", "/v1/hosts?limit=0", "", ""); code != 400 || errorCode(t, body) != "bad_limit" {
		t.Errorf("limit 0: %d %s", code, body)
	}
	code, _, body = do(t, s, "GET", "/v1/fetches", "", "")
	if code != 200 || !strings.Contains(body, `"url": "http://known.test:8080/"`) || !strings.Contains(body, `"status": 200`) {
		t.Errorf("fetches: %d %s", code, body)
	}
}

// TestDashboardServed: the dashboard's files are served, from the binary,
// and refer to nothing but this server.
func TestDashboardServed(t *testing.T) {
	s, err := New(Config{Addr: "0.0.0.0:8080", Token: "t"}, resourcesOf(&fakeCrawl{})) // off loopback: its files still load
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/": `id="chart-rate"`, "/dashboard/app.js": "setInterval(tick", "/dashboard/style.css": "--bg",
		"/dashboard/uPlot.iife.min.js": "uPlot (v1.6.32)", "/dashboard/uPlot.min.css": ".uplot", "/dashboard/uPlot.LICENSE": "MIT License",
		"/dashboard/favicon.svg": "<svg"} {
		code, _, body := do(t, s, "GET", path, "", "")
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, %d bytes", path, code, len(body))
		}
		// Not a reference: uPlot's banner names its home, an SVG its
		// namespace.
		body = strings.NewReplacer("https://github.com/leeoniya/uPlot", "", "http://www.w3.org/2000/svg", "").Replace(body)
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("GET %s refers to another server", path)
		}
	}
	if code, _, _ := do(t, s, "GET", "/v1/stats", "", ""); code != 401 {
		t.Errorf("the data still needs the token off loopback: %d", code)
	}
}

type fakeNode struct {
	name    string // "" means n1
	members []ClusterMember
}

func (f fakeNode) Name() string {
	if f.name == "" {
		return "n1"
	}
	return f.name
}
func (fakeNode) Owned() map[int]uint64 { return map[int]uint64{7: 3, 2: 9} }
func (fakeNode) Handoffs() int         { return 4 }
func (fakeNode) Snapshots() int64      { return 6 }
func (fakeNode) PartitionCount() int   { return 8 }
func (f fakeNode) Members(context.Context) ([]ClusterMember, error) {
	if f.members == nil {
		return nil, errors.New("no NATS")
	}
	return f.members, nil
}

// TestClusterStats: a node of a cluster shows its partitions in order and
// its handoffs and snapshots, in /v1/stats and /metrics.
func TestClusterStats(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0", Cluster: fakeNode{}}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := do(t, s, "GET", "/v1/stats", "", "")
	var st Stats
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil || st.Cluster == nil ||
		st.Cluster.Node != "n1" || fmt.Sprint(st.Cluster.Partitions) != "[2 7]" || st.Cluster.Handoffs != 4 || st.Cluster.Snapshots != 6 {
		t.Errorf("stats: %d %v %+v", code, err, st.Cluster)
	}
	_, _, metrics := do(t, s, "GET", "/metrics", "", "")
	for _, want := range []string{"weft_cluster_partitions 2\n", "weft_cluster_handoffs_total 4\n", "weft_cluster_snapshots_total 6\n"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
