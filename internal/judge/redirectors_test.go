package judge

import (
	"fmt"
	"testing"

	"github.com/weft-crawler/weft/internal/canon"
)

// A URL pattern is learnt to redirect out of the scope once ten of its
// URLs have all gone out of it, to three hosts at least, and none stayed
// within it or answered as a page; then only its URLs are refused.
func TestRedirectors(t *testing.T) {
	c := canon.New(canon.Config{})
	parse := func(raw string) canon.URL {
		u, err := c.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	j := New(Config{})
	out := func(from string, n, hosts int) {
		for i := range n {
			j.Redirected(parse(fmt.Sprintf(from, i)), parse(fmt.Sprintf("http://shop%d.example/x", i%hosts)), Scope)
		}
	}
	out("http://a.test/out?url=%d", 9, 5)
	if j.OffsiteRedirector(parse("http://a.test/out?url=99")) {
		t.Errorf("learnt after nine redirects")
	}
	out("http://a.test/out?url=1%d", 1, 5)
	for raw, want := range map[string]bool{
		"http://a.test/out?url=99": true, "http://a.test/out": true, "http://a.test/article/1": false, "http://b.test/out?url=1": false,
	} {
		if got := j.OffsiteRedirector(parse(raw)); got != want {
			t.Errorf("%s: offsite %v; want %v", raw, got, want)
		}
	}
	if j.OffsiteRedirectors() != 1 {
		t.Errorf("%d patterns learnt; want 1", j.OffsiteRedirectors())
	}
	// A redirect within the scope unlearns it.
	j.Redirected(parse("http://a.test/out?url=local"), parse("http://a.test/article/2"), "")
	if j.OffsiteRedirector(parse("http://a.test/out?url=99")) || j.OffsiteRedirectors() != 0 {
		t.Errorf("still learnt after a redirect within the scope")
	}

	// A section moved to one other site is no click tracker.
	out("http://m.test/old/%d", 30, 1)
	// A pattern one of whose URLs answered as a page is none either.
	j.Answered(parse("http://p.test/p/1"))
	out("http://p.test/p/%d", 30, 5)
	// Nor one with a redirect within the scope among them.
	j.Redirected(parse("http://g.test/go?to=1"), parse("http://g.test/page"), "")
	out("http://g.test/go?to=%d", 30, 5)
	for _, raw := range []string{"http://m.test/old/99", "http://p.test/p/99", "http://g.test/go?to=99"} {
		if j.OffsiteRedirector(parse(raw)) {
			t.Errorf("%s: learnt offsite", raw)
		}
	}
}
