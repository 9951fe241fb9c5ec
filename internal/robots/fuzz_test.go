package robots

import (
	"strings"
	"testing"

	"github.com/jimsmart/grobotstxt"
)

// FuzzPolicy parses random files and checks random paths against them: no
// panic, /robots.txt always allowed, the prefix index and the plain scan
// agree, and the verdict is that of
// grobotstxt.AgentAllowed wherever the two are meant to agree (see
// comparable).
func FuzzPolicy(f *testing.F) {
	for _, tc := range agreeCases() {
		if len(tc.robots) < 4096 {
			f.Add(tc.robots, tc.agent, tc.path)
		}
	}
	f.Add(typicalRobots, "weft", "/users/7/settings")
	f.Add("User-agent: *\nDisallow: /a*b*c$\nAllow: /a*c\n", "weft", "/aXbYc")
	f.Add("user-agent: *\ndisallow: /%e3%83\n", "x", "/%E3%83")
	f.Fuzz(func(t *testing.T, body, agent, path string) {
		p := Parse([]byte(body), agent, 200, t0)
		got := p.Allowed(path)
		if !p.Allowed("/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
		if len(p.rules) > 0 {
			indexed, linear := *p, *p
			indexed.index, linear.index = newPrefixIndex(&p.ruleSet), nil
			if a, b := indexed.Allowed(path), linear.Allowed(path); a != b || a != got {
				t.Fatalf("Allowed(%q): indexed %v, linear %v, policy %v", path, a, b, got)
			}
		}
		if !comparable(body, agent, path) {
			return
		}
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		if want := grobotstxt.AgentAllowed(body, agent, "http://foo.bar"+path); got != want {
			t.Fatalf("Allowed(%q) = %v, grobotstxt says %v\nagent %q, robots.txt:\n%s", path, got, want, agent, body)
		}
	})
}

// comparable reports whether grobotstxt's answer is meant to equal ours:
// every intended disagreement involves a '%' in the file or the path, an
// octet that net/url or RFC 9309 rewrites in the path, /robots.txt itself,
// an empty agent, or a body beyond MaxBytes. Octets in the file are
// unrestricted otherwise: a rule with, say, a space can match neither
// implementation's form of a path without one.
func comparable(body, agent, path string) bool {
	if len(body) > MaxBytes || strings.Contains(body, "%") || agent == "" {
		return false
	}
	for i := 0; i < len(path); i++ {
		if c := path[i]; !isPlain(c) || c == '#' {
			return false
		}
	}
	p := strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p != "robots.txt"
}
