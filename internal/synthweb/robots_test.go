package synthweb

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestMatchPattern(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"/", "/anything", true},
		{"/private/", "/private/6", true},
		{"/private/", "/private", false},
		{"/p/1", "/p/10", true},
		{"/p/1", "/p/2", false},
		{"/*.cgi$", "/cgi/9.cgi", true},
		{"/*.cgi$", "/cgi/9.cgi.html", false},
		{"/*.cgi$", "/cgi/9.cgi?x=1", false},
		{"/*.cgi", "/cgi/9.cgi?x=1", true},
		{"/a/*/page", "/a/c/d/page-3.html", true},
		{"/a/*/page$", "/a/c/d/page-3.html", false},
		{"*", "/", true},
		{"/list$", "/list", true},
		{"/list$", "/list?cat=1", false},
		{"/**x", "/abx", true},
	}
	for _, tc := range tests {
		if got := matchPattern(tc.pattern, tc.path); got != tc.want {
			t.Errorf("matchPattern(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestRulesForWeft(t *testing.T) {
	rulesFor := func(k RobotsKind) []rule {
		r, _ := robotsFileFor(k, "h.test:1", time.Second).forAgent(ProductToken)
		return r
	}
	tests := []struct {
		kind RobotsKind
		path string
		want bool // allowed
	}{
		{RobotsRules, "/private/6", false},
		{RobotsRules, "/private/open-8", true}, // longer Allow wins
		{RobotsRules, "/cgi/9.cgi", false},
		{RobotsRules, "/p/10", true},
		{RobotsAgentGroup, "/private/6", true}, // the weft group, not "*"
		{RobotsAgentGroup, "/a/c/d/page-3.html", false},
		{RobotsAgentGroup, "/a/b/page-3.html", true},
		{RobotsAgentGroup, "/p/10", false},
		{RobotsAgentGroup, "/p/2", true},
		{RobotsAgentGroup, "/list?cat=1&page=2", true}, // Allow wins the tie
		{RobotsAgentGroup, "/", true},                  // weftbot-other's "Disallow: /" does not apply
		{RobotsCrawlDelay, "/private/6", false},
		{RobotsCrawlDelay, "/private/open-8", true},
		{RobotsNone, "/private/6", true},
	}
	for _, tc := range tests {
		if got := allowed(rulesFor(tc.kind), tc.path); got != tc.want {
			t.Errorf("%v: allowed(%q) = %v, want %v", tc.kind, tc.path, got, tc.want)
		}
	}
	if _, d := robotsFileFor(RobotsAgentGroup, "h.test:1", time.Second).forAgent(ProductToken); d != 0 {
		t.Errorf("agent group: weft crawl delay %v, want 0", d)
	}
	if _, d := robotsFileFor(RobotsAgentGroup, "h.test:1", time.Second).forAgent("WeftBot-Other"); d != 30*time.Second {
		t.Errorf("agent group: weftbot-other crawl delay %v, want 30s", d)
	}
}

// TestRobotsHTTP checks what each kind serves and what the ground truth
// says about the host's pages.
func TestRobotsHTTP(t *testing.T) {
	cfg := smallConfig()
	cfg.CrawlDelay = 1500 * time.Millisecond
	cfg.HangLimit = 300 * time.Millisecond
	w := startWeb(t, cfg)
	c := newClient(t, w)
	pageOf := func(h HostInfo, path string) PageInfo {
		p, ok := w.Page("http://" + h.Authority + path)
		if !ok {
			t.Fatalf("%s%s: no such page", h.Authority, path)
		}
		return p
	}
	robots := func(h HostInfo) string { return "http://" + h.Authority + "/robots.txt" }
	expectBody := func(h HostInfo, status int, contains ...string) {
		t.Helper()
		r := get(t, c, robots(h))
		if r.status != status {
			t.Errorf("%v: robots.txt status %d, want %d", h.Robots, r.status, status)
		}
		if want := w.Body(robots(h)); string(r.body) != string(want) {
			t.Errorf("%v: robots.txt body %q, Body() %q", h.Robots, r.body, want)
		}
		for _, s := range contains {
			if !strings.Contains(string(r.body), s) {
				t.Errorf("%v: robots.txt lacks %q:\n%s", h.Robots, s, r.body)
			}
		}
	}

	h := hostOf(t, w, RobotsRules)
	expectBody(h, 200, "User-agent: *", "Disallow: /private/", "Allow: /private/open", "Disallow: /*.cgi$", "Sitemap: http://"+h.Authority+"/sitemap.xml")
	if !pageOf(h, "/private/6").Disallowed || pageOf(h, "/private/open-8").Disallowed || !pageOf(h, "/cgi/9.cgi").Disallowed || pageOf(h, "/").Disallowed {
		t.Errorf("rules: wrong Disallowed flags")
	}
	if sm := get(t, c, "http://"+h.Authority+"/sitemap.xml"); sm.status != 200 || !strings.Contains(string(sm.body), "<loc>http://"+h.Authority+"/</loc>") {
		t.Errorf("sitemap: %d %s", sm.status, sm.body)
	}

	h = hostOf(t, w, RobotsAgentGroup)
	expectBody(h, 200, "User-agent: weftbot-other", "User-agent: otherbot\nUser-agent: weft\n")
	if pageOf(h, "/private/6").Disallowed || !pageOf(h, "/p/10").Disallowed || pageOf(h, "/").Disallowed {
		t.Errorf("agent group: wrong Disallowed flags")
	}

	h = hostOf(t, w, RobotsCrawlDelay)
	expectBody(h, 200, "Crawl-delay: 1.5\n")
	if h.CrawlDelay != 1500*time.Millisecond {
		t.Errorf("crawl-delay host: HostInfo.CrawlDelay %v", h.CrawlDelay)
	}
	for _, other := range w.Hosts() {
		if other.Robots != RobotsCrawlDelay && other.CrawlDelay != 0 {
			t.Errorf("%s (%v): CrawlDelay %v", other.Name, other.Robots, other.CrawlDelay)
		}
	}

	h = hostOf(t, w, RobotsNotFound)
	expectBody(h, 404)
	if pageOf(h, "/private/6").Disallowed {
		t.Errorf("not-found: page disallowed")
	}

	h = hostOf(t, w, RobotsServerError)
	expectBody(h, 503)
	if !pageOf(h, "/").Disallowed || !pageOf(h, "/p/10").Disallowed {
		t.Errorf("server-error: pages not disallowed")
	}

	h = hostOf(t, w, RobotsNone)
	expectBody(h, 200)
	if r := get(t, c, robots(h)); len(r.body) != 0 || r.header.Get("Content-Length") != "0" {
		t.Errorf("none: body %q", r.body)
	}

	// The quirky files: RobotsRules' rules, written so that a naive parser
	// misreads them.
	h = hostOf(t, w, RobotsBOM)
	expectBody(h, 200, "\uFEFF# robots.txt", "Disallow: /private/\n")
	if r := get(t, c, robots(h)); !strings.HasPrefix(string(r.body), "\xEF\xBB\xBF#") {
		t.Errorf("bom: body starts %q", r.body[:8])
	}
	h = hostOf(t, w, RobotsCROnly)
	expectBody(h, 200, "User-agent: *\rDisallow: /private/\r")
	if r := get(t, c, robots(h)); strings.Contains(string(r.body), "\n") {
		t.Errorf("cr-only: a newline in the body")
	}
	h = hostOf(t, w, RobotsLarge)
	expectBody(h, 200, "Disallow: /private/\n")
	if r := get(t, c, robots(h)); len(r.body) <= robotsParseLimit ||
		strings.Index(string(r.body), "\nDisallow: /\n") < robotsParseLimit ||
		strings.Index(string(r.body), "Disallow: /private/") > 1024 {
		t.Errorf("large: %d bytes; want the rules first and \"Disallow: /\" past %d", len(r.body), robotsParseLimit)
	}
	h = hostOf(t, w, RobotsRulesFirst)
	expectBody(h, 200, "generated by synthweb\nDisallow: /a/\n\nUser-agent: *\n")
	for _, kind := range []RobotsKind{RobotsBOM, RobotsCROnly, RobotsLarge, RobotsRulesFirst} {
		h := hostOf(t, w, kind)
		if !pageOf(h, "/private/6").Disallowed || pageOf(h, "/private/open-8").Disallowed || pageOf(h, "/").Disallowed {
			t.Errorf("%v: wrong Disallowed flags", kind)
		}
	}
	h = hostOf(t, w, RobotsEncoded)
	expectBody(h, 200, "Disallow: /%61/c/\n", "Disallow: /caf\u00e9/\n", "Disallow: /%7Euser/\n")
	for path, disallowed := range map[string]bool{encodedPage: true, encodedLookLike: false, tildePage: true, tildeLookLike: false, "/": false} {
		if got := pageOf(h, path).Disallowed; got != disallowed {
			t.Errorf("encoded: %s disallowed %v, want %v", path, got, disallowed)
		}
		if r := get(t, c, "http://"+h.Authority+path); r.status != 200 {
			t.Errorf("encoded: %s answers %d", path, r.status)
		}
	}
	letters := 0
	for _, p := range w.AllPages() {
		if strings.HasPrefix(p.URL, "http://"+h.Authority+"/a/c/") {
			letters++
			if !p.Disallowed {
				t.Errorf("encoded: %s allowed; /%%61/c/ is /a/c/", p.URL)
			}
		}
	}
	if letters == 0 {
		t.Error("encoded: no /a/c/ page for /%61/c/ to disallow")
	}

	// Redirect: two hops on the same host, then the rules file.
	h = hostOf(t, w, RobotsRedirect)
	u, hops := robots(h), 0
	for ; hops < 10; hops++ {
		r := get(t, c, u)
		if r.status != http.StatusMovedPermanently {
			if r.status != 200 || !strings.Contains(string(r.body), "Disallow: /private/") {
				t.Errorf("redirect: final %d %q", r.status, r.body)
			}
			if string(r.body) != string(w.Body(u)) {
				t.Errorf("redirect: final body differs from Body(%s)", u)
			}
			break
		}
		next, _ := canonicalize(mustParse(t, u), r.header.Get("Location"))
		if !strings.HasPrefix(next, "http://"+h.Authority+"/") {
			t.Errorf("redirect: hop to another host: %s", next)
		}
		u = next
	}
	if hops != 2 || !pageOf(h, "/private/6").Disallowed {
		t.Errorf("redirect: %d hops, want 2; private disallowed %v", hops, pageOf(h, "/private/6").Disallowed)
	}

	// Redirect loop: more than five hops, and it comes back to the start.
	h = hostOf(t, w, RobotsRedirectLoop)
	u, hops = robots(h), 0
	for hops < 20 {
		r := get(t, c, u)
		if r.status != http.StatusMovedPermanently {
			t.Fatalf("loop: status %d at %s", r.status, u)
		}
		u, _ = canonicalize(mustParse(t, u), r.header.Get("Location"))
		hops++
		if u == robots(h) {
			break
		}
	}
	if hops <= 5 || u != robots(h) {
		t.Errorf("loop: back at robots.txt after %d hops (%s)", hops, u)
	}
	if pageOf(h, "/private/6").Disallowed {
		t.Errorf("loop: treated as rules, want unavailable")
	}

	// Timeout: no answer within the client's patience, and once HangLimit
	// passes the connection is dropped without any response.
	h = hostOf(t, w, RobotsTimeout)
	impatient := newClient(t, w)
	impatient.Timeout = 100 * time.Millisecond
	if resp, err := impatient.Get(robots(h)); err == nil {
		resp.Body.Close()
		t.Errorf("timeout: got status %d", resp.StatusCode)
	}
	start := time.Now()
	resp, err := c.Get(robots(h))
	if err == nil {
		resp.Body.Close()
		t.Errorf("timeout: got status %d after HangLimit", resp.StatusCode)
	}
	if d := time.Since(start); d < cfg.HangLimit-20*time.Millisecond || d > 5*time.Second {
		t.Errorf("timeout: dropped after %v, HangLimit %v", d, cfg.HangLimit)
	}
	if !pageOf(h, "/").Disallowed {
		t.Errorf("timeout: home not disallowed")
	}
	var hung int
	for _, r := range w.Log() {
		if r.Host == h.Authority && r.Path == "/robots.txt" {
			hung++
			if r.Status != 0 || r.End.IsZero() {
				t.Errorf("timeout: logged status %d, end %v", r.Status, r.End)
			}
		}
	}
	if hung != 2 {
		t.Errorf("timeout: %d logged requests, want 2", hung)
	}
}

func TestCloseReleasesHangs(t *testing.T) {
	w, err := Start(smallConfig()) // HangLimit is 2 minutes
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, w)
	h := hostOf(t, w, RobotsTimeout)
	errc := make(chan error, 1)
	go func() {
		resp, err := c.Get("http://" + h.Authority + "/robots.txt")
		if err == nil {
			resp.Body.Close()
			err = errors.New("unexpected response")
		}
		errc <- err
	}()
	waitLog(t, w, func(r Request) bool { return r.Path == "/robots.txt" })
	start := time.Now()
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v with a hanging request", d)
	}
	if err := <-errc; err == nil {
		t.Error("hanging request got a response")
	}
}

// waitLog waits until some log entry satisfies ok.
func waitLog(t *testing.T, w *Web, ok func(Request) bool) Request {
	t.Helper()
	var found Request
	waitLogged(t, w, func(log []Request) bool {
		for _, r := range log {
			if ok(r) {
				found = r
				return true
			}
		}
		return false
	})
	return found
}

// waitLogged waits until the whole log satisfies ok.
func waitLogged(t *testing.T, w *Web, ok func([]Request) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if ok(w.Log()) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the log never matched")
}
