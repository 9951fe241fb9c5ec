package crawl

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
	"github.com/weft-crawler/weft/internal/warc"
)

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Operator policies, judged from the servers' logs: a.test is asked less
// often and never for its /private/ pages, and only for as many URLs as its
// cap; b.test, with the same pages and no policy, is crawled in full; c.test's
// policy asks for a shorter gap than its robots.txt Crawl-delay, which is
// refused, and said in the log.
func TestPolicySlowsAndForbids(t *testing.T) {
	const (
		delay       = 10 * time.Millisecond
		policyDelay = 150 * time.Millisecond
		crawlDelay  = 300 * time.Millisecond
	)
	site := func(robots string) func(*miniWeb, http.ResponseWriter, *http.Request) {
		return func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				robotsFile(rw, robots)
			case "/":
				page(rw, "/1", "/2", "/3", "/private/x", "/private/y")
			default:
				page(rw)
			}
		}
	}
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": site("User-agent: *\nDisallow: /nothing\n"),
		"b.test": site("User-agent: *\nDisallow: /nothing\n"),
		"c.test": site(fmt.Sprintf("User-agent: *\nCrawl-delay: %g\n", crawlDelay.Seconds())),
	})
	cfg := mw.config(t, delay, mw.url("a.test", "/"), mw.url("b.test", "/"), mw.url("c.test", "/"))
	cfg.MaxURLsPerHost = 100
	set, err := policy.Parse([]byte(fmt.Sprintf(`{
		"a.test": {"delay": %q, "disallow": ["/private/"], "max_urls": 3},
		%q: {"delay": %q}
	}`, policyDelay, mw.auth["c.test"], policyDelay)), policy.Limits{Delay: delay, MaxURLs: cfg.MaxURLsPerHost})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Policies = set
	var logged syncBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	sum := runCrawl(t, cfg)
	mw.checkPolite(t, delay)

	a := mw.paths("a.test")
	if want := []string{"/robots.txt", "/", "/1", "/2"}; !slices.Equal(a, want) {
		// "/", "/1", "/2": its cap of three URLs; /private/ refused before it counts.
		t.Errorf("a.test requests %v, want %v", a, want)
	}
	if b := mw.paths("b.test"); len(b) != 7 {
		t.Errorf("b.test requests %v; want robots.txt and all six pages", b)
	}
	checkGaps(t, "a.test", mw.requests("a.test"), policyDelay)
	checkGaps(t, "c.test", mw.requests("c.test"), crawlDelay)
	if sum.Rejected[judge.Policy] != 2 || sum.Rejected[judge.HostCap] != 1 || sum.Policies != 2 {
		t.Errorf("rejected %v, %d policies; want a.test's two /private/ pages refused by policy, /3 by its cap, and 2 policies", sum.Rejected, sum.Policies)
	}
	if log := logged.String(); !strings.Contains(log, "policy refused: its delay is shorter than the host's robots.txt Crawl-delay") ||
		!strings.Contains(log, "host="+mw.auth["c.test"]) || strings.Count(log, "policy refused") != 1 {
		t.Errorf("log lacks the refusal of c.test's policy, said once:\n%s", log)
	}
	var out strings.Builder
	sum.Write(&out)
	if !strings.Contains(out.String(), "policies:   2 hosts with an operator policy; 2 URLs refused by one") {
		t.Errorf("summary:\n%s", out.String())
	}
}

// A policy given on a restart applies to the URLs an earlier run queued.
func TestPolicyAppliesToQueuedURLs(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/private/1", "/private/2", "/open")
			default:
				page(rw)
			}
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("a.test", "/"))
	cfg.MaxPages = 1
	runCrawl(t, cfg)
	set := policy.NewSet(policy.Limits{})
	if err := set.Put("a.test", policy.Policy{Disallow: []string{"/private/"}}); err != nil {
		t.Fatal(err)
	}
	cfg.MaxPages, cfg.Policies = 0, set
	sum := runCrawl(t, cfg)
	if got, want := mw.paths("a.test"), []string{"/robots.txt", "/", "/open"}; !slices.Equal(got, want) {
		t.Errorf("a.test requests %v, want %v", got, want)
	}
	if sum.Rejected[judge.Policy] != 2 {
		t.Errorf("rejected %v; want the two queued /private/ URLs dropped by policy", sum.Rejected)
	}
}

// checkGaps fails on a gap, from the end of one request to the start of the
// next, below min.
func checkGaps(t *testing.T, host string, reqs []miniReq, min time.Duration) {
	t.Helper()
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].start.Sub(reqs[i-1].end); gap < min {
			t.Errorf("%s: %s started %v after %s ended; want at least %v", host, reqs[i].path, gap, reqs[i-1].path, min)
		}
	}
}

// failingSink takes n events, then fails.
type failingSink struct {
	mu sync.Mutex
	n  int
	ev []events.Event
}

func (s *failingSink) Capture(e events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ev) == s.n {
		return errors.New("indexer unreachable")
	}
	s.ev = append(s.ev, e)
	return nil
}

func (s *failingSink) Close() error { return nil }

// countingArchive counts what a crawl hands its archive.
type countingArchive struct {
	archive.Writer
	exchanges, closed atomic.Int64
}

func (a *countingArchive) WriteExchange(ex warc.Exchange) (warc.Location, error) {
	a.exchanges.Add(1)
	return a.Writer.WriteExchange(ex)
}

func (a *countingArchive) Close() error {
	a.closed.Add(1)
	return a.Writer.Close()
}

// Page sinks get every capture once it is durable; one that fails stops
// the crawl, as an archive that cannot be written does, naming the sink.
// The archive is the configured one.
func TestSinks(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			page(rw, "/1", "/2", "/3")
		},
	})
	ok := &failingSink{n: 1 << 30}
	cfg := mw.config(t, 5*time.Millisecond, mw.url("a.test", "/"))
	cfg.Sinks = []events.Sink{ok}
	// The archive is a sink too: one of the crawl's choosing.
	dir := t.TempDir()
	w, err := warc.NewWriter(warc.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	arch := &countingArchive{Writer: w}
	cfg.Archive = arch
	runCrawl(t, cfg)
	if len(ok.ev) != 5 { // robots.txt, /, /1, /2, /3
		t.Errorf("%d events, want 5: %+v", len(ok.ev), ok.ev)
	}
	for _, e := range ok.ev {
		if e.URL == "" || e.WARCFile == "" || e.Length == 0 || !strings.HasPrefix(e.PayloadDigest, "sha1:") {
			t.Errorf("event %+v", e)
		}
		if !slices.Contains(w.Files(), e.WARCFile) {
			t.Errorf("event names %s, not a file of the configured archive %v", e.WARCFile, w.Files())
		}
	}
	if arch.exchanges.Load() != 5 || arch.closed.Load() != 1 {
		t.Errorf("the configured archive got %d exchanges and was closed %d times; want 5 and once", arch.exchanges.Load(), arch.closed.Load())
	}
	if m, _ := filepath.Glob(filepath.Join(cfg.DataDir, "warc", "*")); len(m) != 0 {
		t.Errorf("WARC files written beside the configured archive: %v", m)
	}

	bad := &failingSink{n: 2}
	cfg = mw.config(t, 5*time.Millisecond, mw.url("a.test", "/"))
	cfg.Sinks = []events.Sink{bad}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "page sink: indexer unreachable") {
		t.Errorf("a failing sink: Run error %v", err)
	}
}

// TestPolicySetWhileRunning: a policy an operator sets through SetPolicy
// applies at once (a disallowed path is dropped unrequested), is kept in
// the store so that a restart keeps it over the configuration's, and one
// that would loosen the crawl is refused, changing nothing.
func TestPolicySetWhileRunning(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/private/1", "/open")
			default:
				page(rw)
			}
		},
	})
	const delay = 10 * time.Millisecond
	cfg := mw.config(t, delay, mw.url("a.test", "/"))
	host := mw.auth["a.test"]
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Policies().Set(host, policy.Policy{Delay: policy.Duration(delay / 2)}); err == nil {
		t.Error("a policy delay shorter than the crawl's was accepted")
	}
	if err := c.Policies().Set(host, policy.Policy{Delay: policy.Duration(3 * delay), Disallow: []string{"/private/"}}); err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mw.paths("a.test"), []string{"/robots.txt", "/", "/open"}; !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	if sum.Rejected[judge.Policy] != 1 {
		t.Errorf("rejected %v, want /private/1 by policy", sum.Rejected)
	}
	checkGaps(t, "a.test", mw.requests("a.test"), 3*delay)
	c, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := c.Policies().Policy(strings.ToUpper(host)) // a host is named as its URLs have it, whatever the case
	if !ok || time.Duration(p.Delay) != 3*delay || !slices.Equal(p.Disallow, []string{"/private/"}) {
		t.Errorf("after a restart: %+v %v", p, ok)
	}
	if had, err := c.Policies().Delete(strings.ToUpper(host)); !had || err != nil {
		t.Errorf("delete: %v %v", had, err)
	}
	c.Discard()
	c, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Discard()
	if _, ok := c.Policies().Policy(host); ok {
		t.Error("a deleted policy came back after a restart")
	}
}

// TestPolicyChangeKeepsRobotsCrawlDelay: an operator's policy set and
// deleted while a host with a robots.txt Crawl-delay is crawled re-arms
// the host with the larger of the two, never the policy's alone: the gap
// the host shows right after each change is the Crawl-delay, and from the
// server's log no request comes within it of the last.
func TestPolicyChangeKeepsRobotsCrawlDelay(t *testing.T) {
	const delay, crawlDelay = 10 * time.Millisecond, 150 * time.Millisecond
	web := startWeb(t, synthweb.Config{Seed: 61, Hosts: 1, PagesPerHost: 16, MinLinks: 12, MaxLinks: 16,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsCrawlDelay}, CrawlDelay: crawlDelay, CrossHostFraction: -1})
	cfg := testConfig(t, web, 2, delay)
	u, err := url.Parse(web.Seeds()[0])
	if err != nil {
		t.Fatal(err)
	}
	host := u.Host
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(t.Context())
		done <- err
	}()
	requests := func() int { return len(web.Log()) }
	testwait.Eventually(t, 30*time.Second, "four requests", func() bool { return requests() >= 4 })
	if err := c.Policies().Set(host, policy.Policy{Delay: policy.Duration(3 * delay)}); err != nil {
		t.Fatal(err)
	}
	if g := c.Hosts().Host(host).Gap; g != crawlDelay {
		t.Errorf("the gap right after the policy: %v, want the Crawl-delay %v", g, crawlDelay)
	}
	at := requests()
	testwait.Eventually(t, 30*time.Second, "three requests after the policy", func() bool { return requests() >= at+3 })
	if _, err := c.Policies().Delete(host); err != nil {
		t.Fatal(err)
	}
	if g := c.Hosts().Host(host).Gap; g != crawlDelay {
		t.Errorf("the gap right after the policy's deletion: %v, want the Crawl-delay %v", g, crawlDelay)
	}
	at = requests()
	testwait.Eventually(t, 30*time.Second, "three requests after its deletion", func() bool { return requests() >= at+3 })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	audit := synthweb.Audit(web, delay)
	if audit.Requests < 10 {
		t.Fatalf("only %d requests", audit.Requests)
	}
	for _, b := range audit.Breaches() {
		t.Error(b)
	}
}

// TestPolicyHeadersStayWhenTheAPISetsAPolicy: the API cannot set headers
// (the crawl's state would keep them), and a policy it sets for a host
// leaves the headers the policy file gave the host in force.
func TestPolicyHeadersStayWhenTheAPISetsAPolicy(t *testing.T) {
	var mu sync.Mutex
	var tokens []string
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			mu.Lock()
			tokens = append(tokens, r.URL.Path+"="+r.Header.Get("X-Site"))
			mu.Unlock()
			page(rw)
		},
	})
	const delay = 10 * time.Millisecond
	cfg := mw.config(t, delay, mw.url("a.test", "/"))
	host := mw.auth["a.test"]
	cfg.Policies = policy.NewSet(cfg.policyLimits())
	if err := cfg.Policies.Put(host, policy.Policy{Headers: map[string]string{"X-Site": "t0k"}}); err != nil {
		t.Fatal(err)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Policies().Set(host, policy.Policy{Headers: map[string]string{"X-Site": "other"}}); err == nil || !strings.Contains(err.Error(), "headers are given in the policy file") {
		t.Errorf("the API set headers: %v", err)
	}
	if err := c.Policies().Set(host, policy.Policy{Delay: policy.Duration(2 * delay)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"/robots.txt=t0k", "/=t0k"}; !slices.Equal(tokens, want) {
		t.Errorf("requests %v, want %v", tokens, want)
	}
}
