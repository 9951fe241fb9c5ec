package api

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/policy"
)

// TestPolicyOneSchema: a policy file's object for a host is what PUT
// /v1/policies/{host} takes and GET gives back, and an error names a field
// as the request spelt it.
func TestPolicyOneSchema(t *testing.T) {
	f := &fakeCrawl{}
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t"}, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []string{
		`{"crawl_delay": "5s", "disallowed": ["/private/"], "max_urls": 100}`,
		`{"delay": "5s", "disallow": ["/private/"]}`, // the file's names before, deprecated
	} {
		if _, err := policy.Parse([]byte(`{"a.test": `+obj+`}`), policy.Limits{Delay: time.Second}); err != nil {
			t.Errorf("the file refuses %s: %v", obj, err)
		}
		if code, _, out := do(t, s, "PUT", "/v1/policies/a.test", "t", obj); code != 204 {
			t.Errorf("PUT %s: %d %s", obj, code, out)
		}
		_, _, got := do(t, s, "GET", "/v1/policies/a.test", "", "")
		file, err := policy.Parse([]byte(`{"a.test": `+got+`}`), policy.Limits{Delay: time.Second})
		if err != nil || time.Duration(file.For("a.test", "a.test").Delay) != 5*time.Second {
			t.Errorf("GET gave %s, which the file reads as %v", got, err)
		}
	}
	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"crawl_delay": "5x"}`, 400, `crawl_delay "5x": a duration is a string`},
		{`{"crawl_delay": 5}`, 400, `crawl_delay 5: a duration is a string`},
		{`{"delay": "5x"}`, 400, `delay "5x": a duration is a string`},
		{`{"crawl_delay": "100ms"}`, 422, `crawl_delay 100ms is shorter than the crawl's delay 1s`},
		{`{"delay": "100ms"}`, 422, `delay 100ms is shorter than the crawl's delay 1s`},
		{`{"disallowed": ["private"]}`, 422, `disallowed[0] "private": want a path pattern`},
		{`{"max_urls": "many"}`, 400, `max_urls "many": want a whole number`},
		{`{"Crawl_Delay": "5s"}`, 400, `unknown field "Crawl_Delay"`},
	} {
		code, _, out := do(t, s, "PUT", "/v1/policies/a.test", "t", c.body)
		var e struct{ Error Error }
		if err := json.Unmarshal([]byte(out), &e); err != nil || code != c.status || !strings.Contains(e.Error.Message, c.want) {
			t.Errorf("PUT %s: %d %q, want %d and a message with %q", c.body, code, e.Error.Message, c.status, c.want)
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
	c, err := crawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Addr: "127.0.0.1:0", Token: "tok"}, c.Operator())
	if err != nil {
		t.Fatal(err)
	}
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
	status := func() Host {
		t.Helper()
		code, _, body := do(t, srv, "GET", "/v1/hosts/"+host, "", "")
		var h Host
		if err := json.Unmarshal([]byte(body), &h); code != 200 || err != nil {
			t.Fatalf("GET host: %d %s", code, body)
		}
		return h
	}
	call := func(method, path, body string, want int) {
		t.Helper()
		if code, _, out := do(t, srv, method, path, "tok", body); code != want {
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
