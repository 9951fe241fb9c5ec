package judge

import (
	"fmt"
	"testing"
)

// A URL shape is learnt to redirect out of the scope once ten of its URLs
// have all gone out of it, to three hosts at least, and none answered as a
// page or led to one within it; then only its URLs are refused, but a
// few let through by their hash to probe it: one in fifty of the first
// fifty, one in a hundred of the next fifty, and so on (probeFor).
func TestRedirectors(t *testing.T) {
	parse := urlParser(t)
	var j *Judge
	out := func(from string, n, hosts int) {
		for i := range n {
			j.Redirected(parse(fmt.Sprintf(from, i)), "", parse(fmt.Sprintf("http://127.0.1.%d:9/x", i%hosts)), Scope)
		}
	}
	refused := func(format string) int {
		n := 0
		for i := range 10_000 {
			if j.OffsiteRedirector(parse(fmt.Sprintf(format, i)), "") {
				n++
			}
		}
		return n
	}

	j = New(Config{})
	// A redirect to its own shape (http to https) says nothing.
	j.Redirected(parse("http://a.test/out?url=x"), "", parse("https://a.test/out?url=x"), "")
	out("http://a.test/out?url=%d", 9, 5)
	if j.OffsiteRedirector(parse("http://a.test/out?url=99"), "") {
		t.Errorf("learnt after nine redirects")
	}
	out("http://a.test/out?url=1%d", 1, 5)
	if n := refused("http://a.test/out?url=p%d"); n < 10_000-15 || n == 10_000 {
		t.Errorf("%d of 10,000 tracker URLs refused; want all but a few probes, one in fifty of the first fifty and fewer after, not one in fifty", n)
	}
	for raw, want := range map[string]bool{
		"http://a.test/out": false, "http://a.test/out?to=1": false, "http://a.test/article/1": false, "http://b.test/out?url=1": false,
	} {
		if got := j.OffsiteRedirector(parse(raw), ""); got != want {
			t.Errorf("%s: offsite %v; want %v", raw, got, want)
		}
	}
	if j.OffsiteRedirectors() != 1 {
		t.Errorf("%d shapes learnt; want 1", j.OffsiteRedirectors())
	}
	// A probe that answers as a page unlearns it.
	j.Answered(parse("http://a.test/out?url=probe"), "")
	if refused("http://a.test/out?url=p%d") != 0 || j.OffsiteRedirectors() != 0 {
		t.Errorf("still learnt after a page answered")
	}

	// One front controller serves a tracker and the topics: two shapes.
	j = New(Config{})
	out("http://f.test/index.php?action=out&url=%d", 10, 5)
	if !j.OffsiteRedirector(parse("http://f.test/index.php?action=out&url=1"), "") || refused("http://f.test/index.php?topic=%d") != 0 {
		t.Errorf("a front controller's topics taken for its tracker")
	}

	// A redirect to a page within the scope unlearns it.
	j = New(Config{})
	out("http://a.test/out?url=%d", 10, 5)
	j.Redirected(parse("http://a.test/out?url=local"), "", parse("http://a.test/article/2"), "")
	if refused("http://a.test/out?url=p%d") != 0 {
		t.Errorf("still learnt after a redirect within the scope")
	}

	// A section moved to one other site is no click tracker; nor a shape
	// one of whose URLs answered as a page first; nor one with a redirect
	// within the scope among them.
	out("http://m.test/old/%d", 30, 1)
	j.Answered(parse("http://p.test/p/1"), "")
	out("http://p.test/p/%d", 30, 5)
	j.Redirected(parse("http://g.test/go?to=1"), "", parse("http://g.test/page"), "")
	out("http://g.test/go?to=%d", 30, 5)
	for _, format := range []string{"http://m.test/old/%d", "http://p.test/p/%d", "http://g.test/go?to=%d"} {
		if n := refused(format); n != 0 {
			t.Errorf("%s: %d refused", format, n)
		}
	}
}

// A blog's share buttons (?share=twitter under every post) redirect out of
// the scope, a few under each post, each post a shape of its own: they
// are learnt as what they add to the page that links them, for the
// whole host, and refused under the next post (but a few probes); not
// without their page, and not another variant.
func TestRedirectorsLearnVariants(t *testing.T) {
	parse := urlParser(t)
	j := New(Config{})
	for i := range 4 {
		for k, to := range []string{"http://127.0.1.1:9/", "http://127.0.1.2:9/", "http://127.0.1.3:9/"} {
			post := blogPost(i)
			j.Redirected(parse(fmt.Sprintf("%s?share=%d", post, k)), post, parse(to), Scope)
		}
	}
	refused := 0
	for i := range 10_000 {
		post := blogPost(10 + i%90)
		if j.OffsiteRedirector(parse(fmt.Sprintf("%s?share=s%d", post, i)), post) {
			refused++
		}
	}
	if refused < 10_000-15 || refused == 10_000 {
		t.Errorf("%d of 10,000 share links refused; want all but a few probes", refused)
	}
	post := blogPost(20)
	if j.OffsiteRedirector(parse(post+"?share=x1"), "") || j.OffsiteRedirector(parse(post+"?amp=1"), post) {
		t.Errorf("a share link without its page, or another variant, refused")
	}
	// One that answers as a page unlearns it.
	j.Answered(parse(post+"?share=email"), post)
	if j.OffsiteRedirector(parse(post+"?share=x1"), post) {
		t.Errorf("still learnt after a variant answered as a page")
	}
}
