package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTrailingDataRefused: every endpoint that reads a JSON body refuses
// one with more after its value (400 bad_json) and does nothing with it;
// white space after the value is fine.
func TestTrailingDataRefused(t *testing.T) {
	bodies := map[string]string{ // a valid body of each endpoint that takes one
		"POST /v1/seeds":             `{"urls": ["http://ok.test/"]}`,
		"PUT /v1/policies/{host}":    `{"crawl_delay": "5s"}`,
		"POST /v1/frontier/lease":    `{"worker_id": "w"}`,
		"POST /v1/frontier/complete": `{"lease_id": "L1", "url": "http://a.test/", "status_code": 200}`,
	}
	bodiless := map[string]bool{"POST /v1/pause": true, "POST /v1/resume": true, "POST /v1/hosts/{host}/pause": true, "POST /v1/hosts/{host}/resume": true}
	for _, rt := range routes {
		if k := rt.method + " " + rt.path; rt.mutating && rt.method != http.MethodDelete && bodies[k] == "" && !bodiless[k] {
			t.Errorf("%s: a mutating route this test does not know: does it read a JSON body?", k)
		}
	}
	for route, body := range bodies {
		method, path, _ := strings.Cut(route, " ")
		path = strings.Replace(path, "{host}", "a.test", 1)
		for _, tail := range []string{"}{", " {}", "\n[]", "x", ` "more"`, "\n5"} {
			f := &fakeCrawl{}
			s, err := New(Config{Addr: "127.0.0.1:0", Token: "t", SeedRate: 1000, SeedBurst: 1000}, resourcesOf(f))
			if err != nil {
				t.Fatal(err)
			}
			code, _, out := do(t, s, method, path, "t", body+tail)
			if code != 400 || errorCode(t, out) != "bad_json" || !strings.Contains(out, "more after the JSON value") {
				t.Errorf("%s %q: %d %s, want 400 bad_json", route, body+tail, code, out)
			}
			if _, set := f.Policy("a.test"); len(f.seeds) != 0 || set {
				t.Errorf("%s %q reached the crawl", route, body+tail)
			}
		}
		s, err := New(Config{Addr: "127.0.0.1:0", Token: "t"}, resourcesOf(&fakeCrawl{}))
		if err != nil {
			t.Fatal(err)
		}
		if code, _, out := do(t, s, method, path, "t", body+" \n\t\r\n"); code >= 400 {
			t.Errorf("%s with white space after the value: %d %s", route, code, out)
		}
	}
}

// doAuth sends a POST /v1/pause with the Authorization header as given.
func doAuth(s *Server, authorization string) int {
	req := httptest.NewRequest("POST", "/v1/pause", nil)
	req.Host = "127.0.0.1:8080"
	req.Header.Set("Authorization", authorization)
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	return w.Code
}

// TestBearerScheme: the auth scheme is matched in any case (RFC 9110
// §11.1), one or more spaces part it from the token (1*SP), and nothing
// else passes.
func TestBearerScheme(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "s3cret"}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"Bearer s3cret", "bearer s3cret", "BEARER s3cret", "bEaReR s3cret", "Bearer   s3cret", "  Bearer s3cret  "} {
		if code := doAuth(s, h); code != 200 {
			t.Errorf("Authorization %q: %d, want 200", h, code)
		}
	}
	for _, h := range []string{"Bearer", "Bearer ", "Bearers3cret", "Bearer\ts3cret", "Basic s3cret", "Bearer s3cret x", "Bearer S3CRET", "Token s3cret", "s3cret"} {
		if code := doAuth(s, h); code != 401 {
			t.Errorf("Authorization %q: %d, want 401", h, code)
		}
	}
}
