package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
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

// TestSeedsWithOptions: POST /v1/seeds hands the crawl the seeds of
// "seeds" after those of "urls", each with its own limits (a plain URL
// with none); "seeds" alone is a request.
func TestSeedsWithOptions(t *testing.T) {
	f := &fakeCrawl{}
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t", SeedRate: 1000, SeedBurst: 1000}, resourcesOf(f))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"urls": ["http://ok.test/"], "seeds": [{"url": "http://ok2.test/docs/", "scope": "prefix", "max_depth": 2, "max_pages": 50, "include": ["/docs/"], "exclude": ["\\.pdf$"]}]}`
	if code, _, resp := postSeeds(t, s, "t", "", body); code != 202 {
		t.Fatalf("%d %s", code, resp)
	}
	want := []SeedOptions{{}, {Scope: "prefix", MaxDepth: 2, MaxPages: 50, Include: []string{"/docs/"}, Exclude: []string{`\.pdf$`}}}
	if len(f.seeds) != 1 || strings.Join(f.seeds[0], " ") != "http://ok.test/ http://ok2.test/docs/" || !reflect.DeepEqual(f.opts[0], want) {
		t.Errorf("the crawl got %q with %+v; want both URLs, the second with %+v", f.seeds, f.opts, want[1])
	}
	if code, _, resp := postSeeds(t, s, "t", "", `{"seeds": [{"url": "http://ok.test/", "max_pages": 3}]}`); code != 202 || len(f.opts) != 2 || f.opts[1][0].MaxPages != 3 {
		t.Errorf("seeds alone: %d %s, options %+v", code, resp, f.opts)
	}
	if code, _, resp := postSeeds(t, s, "t", "", `{"seeds": [{"url": "http://ok.test/", "colour": "red"}]}`); code != 400 || !strings.Contains(resp, "colour") {
		t.Errorf("an unknown option: %d %s, want 400 naming it", code, resp)
	}
}

// TestSeedList: GET /v1/seeds pages through the seeds' states with
// offset and limit, says where the next page starts, and refuses a bad
// offset or limit.
func TestSeedList(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0"}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := do(t, s, "GET", "/v1/seeds?limit=2", "", "")
	var l SeedList
	if err := json.Unmarshal([]byte(body), &l); code != 200 || err != nil {
		t.Fatalf("%d %s %v", code, body, err)
	}
	if len(l.Seeds) != 2 || l.Next != 2 || l.Total != 3 || l.Seeds[1].State != "limit" || l.Seeds[1].Options.MaxPages != 5 || l.Totals.Limit != 1 {
		t.Errorf("first page %s", body)
	}
	for _, key := range []string{`"state"`, `"pages"`, `"bytes"`, `"errors"`, `"dropped"`, `"totals"`, `"next"`} {
		if !strings.Contains(body, key) {
			t.Errorf("no %s in %s", key, body)
		}
	}
	code, _, body = do(t, s, "GET", "/v1/seeds?offset=2&limit=2", "", "")
	if err := json.Unmarshal([]byte(body), &l); code != 200 || err != nil || len(l.Seeds) != 1 || l.Seeds[0].State != "failing" || strings.Contains(body, `"next"`) {
		t.Errorf("last page: %d %s", code, body)
	}
	for _, q := range []string{"offset=-1", "offset=x", "limit=0", "limit=1001"} {
		if code, _, body := do(t, s, "GET", "/v1/seeds?"+q, "", ""); code != 400 {
			t.Errorf("%s: %d %s, want 400", q, code, body)
		}
	}
}
