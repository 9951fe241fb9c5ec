package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t", MaxBody: 200 << 10, SeedRate: 1000, SeedBurst: 1000}, resourcesOf(f))
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
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t", SeedRate: 0.01, SeedBurst: 2}, resourcesOf(&fakeCrawl{}))
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
