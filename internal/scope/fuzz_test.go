package scope

import (
	"strings"
	"testing"
)

// naiveRepeatsOver is RepeatsOver written the obvious way, allocating.
func naiveRepeatsOver(path string, n int) bool {
	segs := strings.Split(path, "/")[1:]
	if len(segs) <= n {
		return false
	}
	if len(segs) > MaxPathSegments {
		return true
	}
	count := map[string]int{}
	for _, s := range segs {
		if count[s]++; count[s] > n {
			return true
		}
	}
	return false
}

// FuzzTrapRules checks the trap rules on whatever a page may link to: the
// repeated-segment rule agrees with its naive form, and a pattern never
// panics, starts with the URL's authority and is no longer than the
// authority and path it shapes.
func FuzzTrapRules(f *testing.F) {
	for _, s := range []string{
		"http://example.com/a/b/a/b/a/b/a/", "http://example.com/cal/2026/11/",
		"http://example.com/s/9f3a1c0d2b44e1f07a6b5c3d/p/4", "http://example.com/wiki/Caf%C3%A9",
		"http://example.com/(S(lit3py55t21z5v55vlm25s55))/x", "http://example.com//////",
	} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, raw string, n int) {
		u, err := canonicalizer.Parse(raw)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" {
			return // the rules judge the URLs a crawl may fetch
		}
		n = n%8 + 1
		if n < 1 {
			n = -n + 2
		}
		if got, want := RepeatsOver(u.Path, n), naiveRepeatsOver(u.Path, n); got != want {
			t.Fatalf("RepeatsOver(%q, %d) = %v, the naive rule says %v", u.Path, n, got, want)
		}
		p := Pattern(u)
		if len(p) > len(u.Authority)+len(u.Path) {
			t.Fatalf("Pattern(%s) = %q is longer than the URL's authority and path", u.String, p)
		}
		if !strings.HasPrefix(p, u.Authority+"/") {
			t.Fatalf("Pattern(%s) = %q does not start with the authority", u.String, p)
		}
	})
}
