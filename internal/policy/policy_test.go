package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var lim = Limits{Delay: time.Second, MaxURLs: 10000}

func TestParse(t *testing.T) {
	s, err := Parse([]byte(`{
  "Example.COM.": {"crawl_delay": "5s", "disallowed": ["/search", "/*?sort=", "/caf\u00e9/"]},
  "example.com:8080": {"max_urls": 20},
  "other.test": {}
}`), lim)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 3 {
		t.Fatalf("%d policies, want 3", s.Len())
	}
	p := s.For("example.com", "example.com")
	if p == nil || time.Duration(p.Delay) != 5*time.Second || p.MaxURLs != 0 {
		t.Fatalf("example.com: %+v", p)
	}
	for path, want := range map[string]bool{
		"/search?q=1": false, "/searching": false, "/list?sort=up": false, "/list?a=1&sort=up": true, "/": true,
		"/caf%C3%A9/menu": false, // the pattern's raw UTF-8 matches its encoded form, as in robots.txt
	} {
		if got := p.Allowed(path); got != want {
			t.Errorf("example.com: Allowed(%q) = %v, want %v", path, got, want)
		}
	}
	// A key with a port adds to its host's policy for that port; the
	// host's key serves the others.
	if p := s.For("example.com:8080", "example.com"); p == nil || p.MaxURLs != 20 || time.Duration(p.Delay) != 5*time.Second || p.Allowed("/search") {
		t.Errorf("example.com:8080: %+v; want its cap with the host's delay and rules", p)
	}
	if p := s.For("example.com:9090", "example.com"); p == nil || time.Duration(p.Delay) != 5*time.Second {
		t.Errorf("example.com:9090: %+v, want example.com's", p)
	}
	if p := s.ForAuthority("example.com:8080"); p != s.For("example.com:8080", "example.com") {
		t.Errorf("ForAuthority differs from For: %+v", p)
	}
	if p := s.For("nobody.test", "nobody.test"); p != nil || !p.Allowed("/x") {
		t.Errorf("a host without a policy: %+v", p)
	}
	var none *Set
	if none.For("a", "a") != nil {
		t.Error("a nil set has a policy")
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"faster than the crawl", `{"a.test": {"crawl_delay": "100ms"}}`, "a.test: crawl_delay 100ms is shorter than the crawl's delay 1s; a policy can only make weft slower"},
		{"faster, old name", `{"a.test": {"delay": "100ms"}}`, "a.test: delay 100ms is shorter than the crawl's delay 1s"},
		{"above the cap", `{"a.test": {"max_urls": 20000}}`, "a.test: max_urls 20000 is above the crawl's cap of 10000"},
		{"negative cap", `{"a.test": {"max_urls": -1}}`, "max_urls -1 is negative"},
		{"negative delay", `{"a.test": {"crawl_delay": "-1s"}}`, "crawl_delay -1s is negative"},
		{"an allow", "{\n  \"a.test\": {\n    \"allow\": [\"/\"]\n  }\n}", `line 3: a.test: unknown field "allow" (a policy has "crawl_delay", "disallowed", "max_urls", "render", "boost", "boosts" and "headers"; it cannot allow what robots.txt disallows)`},
		{"a field in another case", `{"a.test": {"Crawl_Delay": "5s"}}`, `unknown field "Crawl_Delay"`},
		{"bad duration", "{\n\"a.test\": {\"crawl_delay\": \"soon\"}}", `line 2: a.test: crawl_delay "soon": a duration is a string such as "5s"`},
		{"bad duration, old name", "{\n\"a.test\": {\"delay\": \"soon\"}}", `line 2: a.test: delay "soon": a duration is a string such as "5s"`},
		{"bad field on a later line", "{\"a.test\": {\n  \"max_urls\": 5,\n  \"crawl_delay\": 5\n}}", `line 3: a.test: crawl_delay 5: a duration is a string such as "5s"`},
		{"null duration", `{"a.test": {"crawl_delay": null}}`, `crawl_delay null: a duration is a string`},
		{"both names", `{"a.test": {"delay": "5s", "crawl_delay": "6s"}}`, `delay and crawl_delay are one field ("delay" is the deprecated name of "crawl_delay"): give it once`},
		{"both names of disallowed", `{"a.test": {"disallowed": ["/a"], "disallow": ["/b"]}}`, `disallowed and disallow are one field ("disallow" is the deprecated name of "disallowed")`},
		{"twice", `{"a.test": {"max_urls": 5, "max_urls": 6}}`, `max_urls: given twice`},
		{"syntax", "{\n\"a.test\": {\"crawl_delay\": \"5s\",}\n}", "line 2: a.test: invalid character '}'"},
		{"wrong type", "{\n\n\"a.test\": {\"max_urls\": \"many\"}}", `line 3: a.test: max_urls "many": want a whole number of URLs`},
		{"fraction", `{"a.test": {"max_urls": 2.5}}`, `max_urls 2.5: want a whole number of URLs`},
		{"patterns not a list", `{"a.test": {"disallowed": "/private/"}}`, `disallowed "/private/": want a list of path patterns`},
		{"policy not an object", `{"a.test": null}`, `a.test: a policy is a JSON object, not null`},
		{"not an object", `["a.test"]`, "line 1: want a JSON object from host to policy"},
		{"cut short", "{\"a.test\": {\"crawl_delay\": \"5s\"", "the file ends inside the policy object"},
		{"empty", ``, "empty: want a JSON object"},
		{"trailing text", "{}\n{}", "line 2: text after the policy object"},
		{"a URL for a host", `{"http://a.test/": {}}`, `"http://a.test/" is not a host name`},
		{"same host twice", "{\"a.test\": {},\n \"A.test\": {}}", "line 2: a.test: a second policy for the host (the first is on line 1)"},
		{"same key twice", "{\"a.test\": {\"crawl_delay\": \"9s\"},\n \"a.test\": {}}", "line 2: a.test: a second policy"},
		{"default port", `{"a.test:80": {}, "a.test": {}}`, "a second policy"},
		{"https port", `{"a.test:443": {}}`, `443 is https's default port, which URLs leave out: write "a.test" alone`},
		{"bad port", `{"a.test:abc": {}}`, `"a.test:abc" is not a host name`},
		{"bare IPv6", `{"::1": {}}`, "write an IPv6 address in brackets"},
		{"relative pattern", `{"a.test": {"disallowed": ["private"]}}`, `a.test: disallowed[0] "private": want a path pattern starting with / or *`},
		{"relative pattern, old name", `{"a.test": {"disallow": ["private"]}}`, `a.test: disallow[0] "private": want a path pattern starting with / or *`},
		{"pattern with newline", `{"a.test": {"disallowed": ["/a\nUser-agent: *\nAllow: /"]}}`, "on one line"},
	} {
		_, err := Parse([]byte(tc.file), lim)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// TestDeprecatedNames: a file, or a policy kept in the store, written with
// the names files had before the API's ("delay", "disallow") reads as the
// same policy as one with the current names.
func TestDeprecatedNames(t *testing.T) {
	old, err := Parse([]byte(`{"a.test": {"delay": "5s", "disallow": ["/search"], "max_urls": 9}}`), lim)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := Parse([]byte(`{"a.test": {"crawl_delay": "5s", "disallowed": ["/search"], "max_urls": 9}}`), lim)
	if err != nil {
		t.Fatal(err)
	}
	o, c := old.For("a.test", "a.test"), cur.For("a.test", "a.test")
	if o.Delay != c.Delay || !slices.Equal(o.Disallow, c.Disallow) || o.MaxURLs != c.MaxURLs || o.Allowed("/search") || !o.Allowed("/") {
		t.Errorf("old names %+v, current names %+v", o, c)
	}
	var stored Policy
	if err := json.Unmarshal([]byte(`{"delay":"1.5s","disallow":["/a"],"max_urls":7}`), &stored); err != nil ||
		time.Duration(stored.Delay) != 1500*time.Millisecond || !slices.Equal(stored.Disallow, []string{"/a"}) || stored.MaxURLs != 7 {
		t.Errorf("a policy stored with the old names: %+v %v", stored, err)
	}
	if b, _ := json.Marshal(stored); string(b) != `{"crawl_delay":"1.5s","disallowed":["/a"],"max_urls":7}` {
		t.Errorf("written back as %s, want the current names", b)
	}
}

// Keys are matched as the crawler's canonical URLs spell hosts.
func TestKeysAreCanonical(t *testing.T) {
	s, err := Parse([]byte(`{"B\u00fccher.example": {"max_urls": 5}, "[::1]:8080": {"max_urls": 6}, "Trailing.Test.": {"max_urls": 7}}`), lim)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		authority, host string
		cap             int64
	}{
		{"xn--bcher-kva.example", "xn--bcher-kva.example", 5},
		{"[::1]:8080", "[::1]", 6},
		{"trailing.test", "trailing.test", 7},
	} {
		if p := s.For(tc.authority, tc.host); p == nil || p.MaxURLs != tc.cap {
			t.Errorf("%s: %+v, want the cap %d", tc.authority, p, tc.cap)
		}
	}
}

// A port's policy never loosens its host's: caps take the lower, delays the
// longer, rules both; and deleting the host's policy leaves the port's own.
func TestPortAddsToHost(t *testing.T) {
	s := NewSet(lim)
	if err := s.Put("a.test:8080", Policy{Delay: Duration(2 * time.Second), MaxURLs: 50, Disallow: []string{"/x"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("a.test", Policy{Delay: Duration(5 * time.Second), MaxURLs: 20, Disallow: []string{"/y"}}); err != nil {
		t.Fatal(err)
	}
	p := s.For("a.test:8080", "a.test")
	if time.Duration(p.Delay) != 5*time.Second || p.MaxURLs != 20 || p.Allowed("/x") || p.Allowed("/y") || !p.Allowed("/z") {
		t.Errorf("merged: %+v", p)
	}
	s.Delete("a.test")
	if p := s.For("a.test:8080", "a.test"); time.Duration(p.Delay) != 2*time.Second || p.MaxURLs != 50 || !p.Allowed("/y") {
		t.Errorf("after the host's policy is deleted: %+v", p)
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policies.json")
	if err := os.WriteFile(path, []byte("{\n  \"a.test\": {\"crawl_delay\": \"1ms\"}\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, lim); err == nil || !strings.HasPrefix(err.Error(), "policy file "+path+": line 2: a.test: crawl_delay 1ms") {
		t.Errorf("error %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json"), lim); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("error %v", err)
	}
}

func TestPutAndDelete(t *testing.T) {
	s := NewSet(lim)
	if err := s.Put("a.test", Policy{Delay: Duration(2 * time.Second), Disallow: []string{"/x"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("a.test", Policy{Delay: Duration(time.Millisecond)}); err == nil {
		t.Fatal("a faster policy replaced a slower one")
	}
	if p := s.For("a.test", "a.test"); p == nil || time.Duration(p.Delay) != 2*time.Second || p.Allowed("/x") {
		t.Fatalf("after a refused Put: %+v", p)
	}
	// No limits set: any delay and cap tighten nothing and are accepted.
	if err := NewSet(Limits{}).Put("b.test", Policy{Delay: Duration(time.Millisecond), MaxURLs: 1 << 40}); err != nil {
		t.Fatal(err)
	}
	if !s.Delete("A.TEST") || s.Delete("a.test") || s.For("a.test", "a.test") != nil {
		t.Fatal("Delete")
	}
}

func TestPolicyJSONRoundTrip(t *testing.T) {
	p := Policy{Delay: Duration(1500 * time.Millisecond), Disallow: []string{"/a"}, MaxURLs: 7}
	b, err := json.Marshal(p)
	if err != nil || string(b) != `{"crawl_delay":"1.5s","disallowed":["/a"],"max_urls":7}` {
		t.Fatalf("%s, %v", b, err)
	}
	var back Policy
	if err := json.Unmarshal(b, &back); err != nil || back.Delay != p.Delay || !slices.Equal(back.Disallow, p.Disallow) || back.MaxURLs != p.MaxURLs {
		t.Fatalf("read back: %+v %v", back, err)
	}
	if b, _ := json.Marshal(Policy{}); string(b) != `{}` {
		t.Fatalf("empty policy: %s", b)
	}
}

func TestRenderField(t *testing.T) {
	var p Policy
	if err := json.Unmarshal([]byte(`{"render": "always"}`), &p); err != nil || p.Render != "always" {
		t.Fatalf("render always: %+v, %v", p, err)
	}
	if err := json.Unmarshal([]byte(`{"render": "sometimes"}`), &p); err == nil || !strings.Contains(err.Error(), `render "sometimes"`) {
		t.Fatalf("render sometimes: %v", err)
	}
	var names []string
	Policy{Render: "never"}.Fields(func(name string, v any) { names = append(names, fmt.Sprint(name, "=", v)) })
	if len(names) != 1 || names[0] != "render=never" {
		t.Fatalf("fields %v", names)
	}
}

// TestBoosts: a host's boost and its pattern boosts, in the file's schema:
// the first pattern a URL's path matches decides, times the host's boost;
// a URL no pattern matches takes the host's boost alone; a port's policy
// keeps its own boost and tries its patterns before its host's.
func TestBoosts(t *testing.T) {
	s, err := Parse([]byte(`{
  "news.test": {"boost": 4, "boosts": [{"pattern": "/live/*", "factor": 8}, {"pattern": "/live/", "factor": 0.5}, {"pattern": "/*.pdf$", "factor": 0.01}]},
  "news.test:8080": {"boosts": [{"pattern": "/live/old/", "factor": 0.25}]},
  "slow.test": {"boost": 0.1},
  "plain.test": {"max_urls": 9}
}`), lim)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		authority, url string
		want           float64
	}{
		{"news.test", "http://news.test/live/today", 32},          // the first pattern that matches, times the host's
		{"news.test", "http://news.test/live/", 32},               // "/live/*" matches before "/live/" is tried
		{"news.test", "https://news.test/a/b.pdf", 0.04},          // an anchored pattern
		{"news.test", "https://news.test/a/b.pdf?x=1", 4},         // not at the end: the host's alone
		{"news.test", "http://news.test/", 4},                     // none matches
		{"news.test:8080", "http://news.test:8080/live/old/x", 1}, // the port's pattern first, with the host's boost
		{"news.test:8080", "http://news.test:8080/live/new", 32},
		{"slow.test", "http://slow.test/live/x", 0.1},
		{"plain.test", "http://plain.test/x", 1},
		{"nobody.test", "http://nobody.test/x", 1},
	} {
		if got := s.BoostURL(tc.authority, tc.url); got != tc.want {
			t.Errorf("BoostURL(%s) = %v, want %v", tc.url, got, tc.want)
		}
	}
	var none *Set
	if got := none.BoostURL("a.test", "http://a.test/"); got != 1 {
		t.Errorf("a nil set boosts by %v", got)
	}
	// Written back in the same schema, read the same.
	b, err := json.Marshal(s.All()["news.test"])
	if err != nil || string(b) != `{"boost":4,"boosts":[{"pattern":"/live/*","factor":8},{"pattern":"/live/","factor":0.5},{"pattern":"/*.pdf$","factor":0.01}]}` {
		t.Fatalf("written as %s, %v", b, err)
	}
	var names []string
	s.All()["news.test"].Fields(func(name string, v any) { names = append(names, fmt.Sprint(name, "=", v)) })
	if want := []string{"boost=4", "boosts=[{/live/* 8} {/live/ 0.5} {/*.pdf$ 0.01}]"}; !slices.Equal(names, want) {
		t.Errorf("fields %v, want %v", names, want)
	}
	// A boost is not politeness: a policy that boosts may still only
	// tighten the rest, and one that only boosts tightens nothing.
	if err := NewSet(lim).Put("a.test", Policy{Boost: 1000, Boosts: []PatternBoost{{"/x", 1000}}}); err != nil {
		t.Errorf("the largest boost refused: %v", err)
	}
}

// TestBoostsRefused: a boost out of bounds, of the wrong type, or with a
// pattern robots.txt could not hold, is refused with an error that names
// the field as the input spelt it.
func TestBoostsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"zero", `{"a.test": {"boost": 0}}`, `a.test: boost 0: want a factor from 0.01 to 1000`},
		{"negative", `{"a.test": {"boost": -2}}`, `boost -2: want a factor from 0.01 to 1000`},
		{"too large", "{\n\"a.test\": {\n\"boost\": 1001}}", `line 3: a.test: boost 1001: want a factor from 0.01 to 1000`},
		{"too small", `{"a.test": {"boost": 0.001}}`, `boost 0.001: want a factor from 0.01 to 1000`},
		{"a string", `{"a.test": {"boost": "4"}}`, `boost "4": want a factor such as 4 or 0.5`},
		{"not a list", `{"a.test": {"boosts": {"pattern": "/x", "factor": 2}}}`, `boosts {"factor":2,"pattern":"/x"}: want a list such as [{"pattern": "/news/*", "factor": 8}]`},
		{"a string in the list", `{"a.test": {"boosts": ["/x"]}}`, `boosts[0] "/x": want a list such as`},
		{"no factor", `{"a.test": {"boosts": [{"pattern": "/x"}]}}`, `boosts[0].factor null: want a factor such as 4 or 0.5`},
		{"no pattern", `{"a.test": {"boosts": [{"factor": 2}]}}`, `boosts[0].pattern null: want a path pattern such as "/news/*"`},
		{"factor out of bounds", `{"a.test": {"boosts": [{"pattern": "/x", "factor": 2}, {"pattern": "/y", "factor": 5000}]}}`, `boosts[1].factor 5000: want a factor from 0.01 to 1000`},
		{"an unknown field", `{"a.test": {"boosts": [{"pattern": "/x", "factor": 2, "Factor": 3}]}}`, `boosts[0]: unknown field "Factor" (a pattern boost has "pattern" and "factor")`},
		{"relative pattern", "{\"a.test\": {\n\"boosts\": [{\"pattern\": \"news\", \"factor\": 2}]}}", `line 1: a.test: boosts[0].pattern "news": want a path pattern starting with / or *`},
		{"pattern with newline", `{"a.test": {"boosts": [{"pattern": "/a\nDisallow: /", "factor": 2}]}}`, `boosts[0].pattern "/a\nDisallow: /": want a path pattern`},
		{"given twice", `{"a.test": {"boost": 2, "boost": 3}}`, `boost: given twice`},
	} {
		_, err := Parse([]byte(tc.file), lim)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
	// A policy made in Go (the API's body is read as the file's is) is
	// checked by Put, and the error names the field.
	for _, p := range []Policy{{Boost: -1}, {Boost: 2000}, {Boosts: []PatternBoost{{"/x", 0}}}, {Boosts: []PatternBoost{{"x", 2}}}} {
		err := NewSet(lim).Put("a.test", p)
		var fe *FieldError
		if !errors.As(err, &fe) || (fe.Field != "boost" && fe.Field != "boosts") {
			t.Errorf("Put(%+v) = %v, want a FieldError naming boost or boosts", p, err)
		}
	}
}

// A pattern boost's first match wins across merged port and host lists,
// and deleting the host's policy leaves the port's own boosts.
func TestBoostsMerge(t *testing.T) {
	s := NewSet(lim)
	if err := s.Put("a.test", Policy{Boost: 2, Boosts: []PatternBoost{{"/n/", 8}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("a.test:8080", Policy{Boost: 3, Boosts: []PatternBoost{{"/n/x", 0.5}}}); err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]float64{"http://a.test:8080/n/x": 1.5, "http://a.test:8080/n/y": 24, "http://a.test:8080/z": 3, "http://a.test/n/x": 16} {
		if got := s.BoostURL(strings.Split(strings.TrimPrefix(url, "http://"), "/")[0], url); got != want {
			t.Errorf("%s: boost %v, want %v", url, got, want)
		}
	}
	s.Delete("a.test")
	if got := s.BoostURL("a.test:8080", "http://a.test:8080/n/y"); got != 3 {
		t.Errorf("after the host's policy is deleted: %v, want the port's 3", got)
	}
}

// TestHeaders: a policy's headers are read from the file, go to their
// port's and host's requests merged (the port's winning), and are never
// written: not as JSON (the API, the crawl's state), not by Fields (a
// printed profile), nor in an error.
func TestHeaders(t *testing.T) {
	const secret = "s3cr3t-t0ken"
	s, err := Parse([]byte(`{
  "a.test": {"headers": {"x-token": "`+secret+`", "Accept-Language": "fr"}},
  "a.test:8080": {"headers": {"Accept-Language": "de"}}
}`), lim)
	if err != nil {
		t.Fatal(err)
	}
	if h := s.For("a.test", "a.test").Headers; h["X-Token"] != secret || h["Accept-Language"] != "fr" {
		t.Errorf("a.test's headers: %v", h)
	}
	if h := s.For("a.test:8080", "a.test").Headers; h["X-Token"] != secret || h["Accept-Language"] != "de" {
		t.Errorf("a.test:8080's headers: %v", h)
	}
	if h := s.For("b.test", "b.test"); h != nil {
		t.Errorf("b.test has a policy: %+v", h)
	}
	p := s.All()["a.test"]
	b, err := json.Marshal(p)
	if err != nil || strings.Contains(string(b), secret) || strings.Contains(string(b), "headers") {
		t.Errorf("a policy as JSON shows its headers: %s, %v", b, err)
	}
	p.Fields(func(name string, v any) {
		if name == "headers" || strings.Contains(fmt.Sprint(v), secret) {
			t.Errorf("Fields gives %s = %v", name, v)
		}
	})
	for file, want := range map[string]string{
		`{"a.test": {"headers": {"Cookie": "sid=` + secret + `"}}}`:      `line 1: a.test: headers: header "Cookie" cannot be set`,
		`{"a.test": {"headers": {"X-A": "` + secret + `\n"}}}`:           `line 1: a.test: headers: header "X-A": its value has a character`,
		"{\n\"a.test\": {\"headers\": [\"X-A: " + secret + "\"]}}":       `line 2: a.test: headers: want an object of header fields`,
		`{"a.test": {"headers": {"X-A": "1", "x-a": "` + secret + `"}}}`: `headers: header "X-A" given twice`,
		`{"a.test": {"headers": {"X-A": 5}}}`:                            `headers: header "X-A": want its value as a string`,
	} {
		_, err := Parse([]byte(file), lim)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", file, err, want)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows the value: %v", file, err)
		}
	}
	if err := NewSet(lim).Put("a.test", Policy{Headers: map[string]string{"Host": secret}}); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("Put with a Host header: %v", err)
	}
}
