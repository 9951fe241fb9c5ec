package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/policy"
)

// TestPolicyOneSchema: a policy file's object for a host is what PUT
// /v1/policies/{host} takes and GET gives back, and an error names a field
// as the request spelt it.
func TestPolicyOneSchema(t *testing.T) {
	f := &fakeCrawl{}
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "t"}, resourcesOf(f))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []string{
		`{"crawl_delay": "5s", "disallowed": ["/private/"], "max_urls": 100}`,
		`{"delay": "5s", "disallow": ["/private/"]}`, // the file's names before, deprecated
		`{"crawl_delay": "5s", "boost": 4, "boosts": [{"pattern": "/news/*", "factor": 8}]}`,
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
		if want := strings.Contains(obj, "boost"); want && file.BoostURL("a.test", "http://a.test/news/1") != 32 {
			t.Errorf("GET gave %s: the boosts are not the ones PUT", got)
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
		{`{"boost": 0}`, 400, `boost 0: want a factor from 0.01 to 1000`},
		{`{"boost": "high"}`, 400, `boost "high": want a factor such as 4 or 0.5`},
		{`{"boosts": [{"pattern": "/n/", "factor": 2000}]}`, 400, `boosts[0].factor 2000: want a factor from 0.01 to 1000`},
		{`{"boosts": [{"pattern": "news", "factor": 2}]}`, 422, `boosts[0].pattern "news": want a path pattern`},
	} {
		code, _, out := do(t, s, "PUT", "/v1/policies/a.test", "t", c.body)
		var e struct{ Error Error }
		if err := json.Unmarshal([]byte(out), &e); err != nil || code != c.status || !strings.Contains(e.Error.Message, c.want) {
			t.Errorf("PUT %s: %d %q, want %d and a message with %q", c.body, code, e.Error.Message, c.status, c.want)
		}
	}
}
