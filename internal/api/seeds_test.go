package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/testwait"
)

func postSeeds(t *testing.T, s *Server, token, key, body string) (int, http.Header, string) {
	t.Helper()
	req := httptest.NewRequest("POST", "/v1/seeds", strings.NewReader(body))
	req.Host = "127.0.0.1:8080"
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	return w.Code, w.Header(), w.Body.String()
}

// TestSeeds: POST /v1/seeds answers 202 with what became of each URL; the
// same Idempotency-Key twice adds once and answers the same; a key reused
// for another request, bad JSON, unknown fields, no URLs, too many, a bad
// priority, no token and a body over the cap are refused with their codes.
func TestSeeds(t *testing.T) {
	f := &fakeCrawl{}
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t", MaxBody: 200 << 10, SeedRate: 1000, SeedBurst: 1000}, f)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"urls": ["http://ok.test/", "http://old.test/"], "priority": "high"}`
	code, _, first := postSeeds(t, s, "t", "k1", body)
	var resp SeedsResponse
	if err := json.Unmarshal([]byte(first), &resp); code != 202 || err != nil {
		t.Fatalf("%d %s %v", code, first, err)
	}
	if len(resp.Accepted) != 1 || resp.Accepted[0] != "http://ok.test/" || len(resp.Rejected) != 1 || resp.Rejected[0] != (Rejected{"http://old.test/", "seen", "seen", "already accepted"}) {
		t.Errorf("answer %+v", resp)
	}
	code, h, again := postSeeds(t, s, "t", "k1", body)
	if code != 202 || again != first || h.Get("Idempotent-Replayed") != "true" || len(f.seeds) != 1 || !f.high[0] {
		t.Errorf("the same key again: %d %q, %d calls to the crawl; want the first answer and one call", code, again, len(f.seeds))
	}
	if code, _, _ := postSeeds(t, s, "t", "k2", body); code != 202 || len(f.seeds) != 2 {
		t.Errorf("another key: %d, %d calls", code, len(f.seeds))
	}
	if code, _, _ := postSeeds(t, s, "t", "", body); code != 202 || len(f.seeds) != 3 {
		t.Errorf("no key: %d, %d calls", code, len(f.seeds))
	}
	many := `{"urls": [` + strings.Repeat(`"http://a.test/",`, 1000) + `"http://a.test/"]}`
	for _, c := range []struct {
		token, key, body string
		status           int
		code             string
	}{
		{"t", "k1", `{"urls": ["http://other.test/"]}`, 422, "idempotency_key_reused"},
		{"t", "", `{"urls": [`, 400, "bad_json"},
		{"t", "", `{"urls": ["http://a.test/"], "depth": 3}`, 400, "bad_json"},
		{"t", "", `{"urls": []}`, 400, "bad_json"},
		{"t", "", `{"urls": ["http://a.test/"], "priority": "urgent"}`, 400, "bad_json"},
		{"t", "", many, 400, "too_many_urls"},
		{"t", strings.Repeat("k", 256), body, 400, "bad_idempotency_key"},
		{"", "", body, 401, "unauthorized"},
		{"wrong", "", body, 401, "unauthorized"},
		{"t", "", `{"urls": ["` + strings.Repeat("x", 200<<10) + `"]}`, 413, "body_too_large"},
	} {
		code, _, out := postSeeds(t, s, c.token, c.key, c.body)
		if code != c.status || errorCode(t, out) != c.code {
			t.Errorf("%.60s: %d %s, want %d %s", c.body, code, out, c.status, c.code)
		}
	}
	if len(f.seeds) != 3 {
		t.Errorf("refused requests reached the crawl: %d calls", len(f.seeds))
	}
}

// TestSeedsRateLimit: a client past its burst is told to come back later;
// another client is not.
func TestSeedsRateLimit(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t", SeedRate: 0.01, SeedBurst: 2}, &fakeCrawl{})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"urls": ["http://ok.test/"]}`
	for i := range 2 {
		if code, _, _ := postSeeds(t, s, "t", "", body); code != 202 {
			t.Fatalf("request %d: %d", i, code)
		}
	}
	code, h, out := postSeeds(t, s, "t", "", body)
	if code != 429 || errorCode(t, out) != "rate_limited" || h.Get("Retry-After") == "" {
		t.Errorf("past the burst: %d %v %s", code, h, out)
	}
	req := httptest.NewRequest("POST", "/v1/seeds", strings.NewReader(body))
	req.RemoteAddr = "192.0.2.9:4242" // another client (a made-up address: nothing is sent to it)
	req.Header.Set("Authorization", "Bearer t")
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	if w.Code != 202 {
		t.Errorf("another client: %d", w.Code)
	}
}

// TestSeedsRejectionCodes: POST /v1/seeds to a running crawl says, for each
// URL refused, a stable code and a message that name what is wrong with it.
func TestSeedsRejectionCodes(t *testing.T) {
	web, cfg := liveWeb(t, 32, 1, 3, 1, time.Millisecond)
	c, err := crawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Addr: "127.0.0.1:0", Token: "tok"}, c.Operator())
	if err != nil {
		t.Fatal(err)
	}
	c.Operator().Pause() // nothing is fetched: the crawl only judges the seeds
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx)
		done <- err
	}()
	defer func() {
		cancel()
		<-done
	}()
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
	req := httptest.NewRequest("POST", "/v1/seeds", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer tok")
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, req)
	if err := json.Unmarshal(w.Body.Bytes(), &resp); w.Code != 202 || err != nil {
		t.Fatalf("%d %s", w.Code, w.Body)
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

// waitUntil waits, up to 10 s, for cond to hold.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Eventually(t, 10*time.Second, what, cond)
}
