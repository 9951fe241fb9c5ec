package render

import (
	"fmt"
	"strings"
	"testing"
)

func TestInspect(t *testing.T) {
	long := strings.Repeat("word ", 400)
	nav := func(n int) string { // a sidebar of n pages
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `<li><a class="reference internal" href="/guide/%d.html">Chapter %d</a></li>`, i, i)
		}
		return "<ul>" + b.String() + "</ul>"
	}
	theme := `<script src="/_static/jquery.js"></script><script src="/_static/doctools.js"></script><script src="/_static/theme-toggle.js"></script>`
	for _, c := range []struct {
		name     string
		html     string
		want     Signals
		need     bool
		navigate bool
	}{
		{"static", `<p>` + long + `</p><a href="/x">x</a>`, Signals{}, false, false},
		{"static with a script", `<p>` + long + `</p><a href="/x">x</a><SCRIPT>1</SCRIPT>`, Signals{Scripts: 1, Text: TextFloor, Links: 1}, false, false},
		{"shell", `<div id=app></div><script src=/app.js></script>`, Signals{Scripts: 1}, true, false},
		{"shell with a header", `<nav><a href="/">Home</a><a href="/blog">Blog</a><a href="/about">About</a></nav><div id=app></div><script src=/app.js></script>`, Signals{Scripts: 1, Text: 13, Links: 3}, true, false},
		{"noscript with text", `<noscript>enable JS</noscript><script>x()</script><p>` + long + `</p>`, Signals{Scripts: 1, NoScript: true, Text: TextFloor}, true, false},
		// A documentation site's index: a short table of contents, the
		// theme's scripts; and its search page, whose <noscript> is about
		// the search box (read until its links decide). Both carry the
		// site's navigation.
		{"docs index", theme + `<h1>Welcome</h1>` + nav(10), Signals{Scripts: 3, Text: 7 + 10*9, Links: NavFloor}, true, true},
		{"docs search", theme + `<noscript>Please activate JavaScript to enable the search functionality.</noscript>` + nav(9) + `<ul id="search-results"></ul>`, Signals{Scripts: 3, NoScript: true, Text: 7 * 9, Links: NavFloor}, true, true},
		{"links that go nowhere", `<script>x()</script>` + strings.Repeat(`<a href="#top">top</a><a href="javascript:void(0)">menu</a><a href="mailto:a@b.example">mail</a><a href=" ">x</a>`, 3), Signals{Scripts: 1, Text: 3 * (3 + 4 + 4 + 1)}, true, false},
		{"one link many times", `<script>x()</script>` + strings.Repeat(`<a href="/next">next</a>`, 12), Signals{Scripts: 1, Text: 12 * 4, Links: 1}, true, false},
		{"article with analytics", `<script async src=/a.js></script><p>` + long + `</p>`, Signals{Scripts: 1, Text: TextFloor}, false, false},
		{"JSON only", `<script type="application/ld+json">{"a":1}</script><p>hi</p>`, Signals{Text: 2}, false, false},
		{"module", `<script type=module>import x from "/x.js"</script>`, Signals{Scripts: 1}, true, false},
		{"hidden text", `<style>p{}</style><template><p>` + long + `</p></template><script>var s = "` + long + `"</script>`, Signals{Scripts: 1}, true, false},
	} {
		got := Inspect([]byte(c.html))
		if c.want.Text == TextFloor && got.Text >= TextFloor {
			got.Text = TextFloor // counted to the token that passed the floor
		}
		if got != c.want || got.NeedsScript() != c.need || got.Navigates() != c.navigate {
			t.Errorf("%s: %+v (needs script %v, navigates %v), want %+v (%v, %v)", c.name, got, got.NeedsScript(), got.Navigates(), c.want, c.need, c.navigate)
		}
	}
}

// BenchmarkInspect is what --render auto costs a page that needs no
// browser: a scan for "<script", and one tokenizer pass if it has one.
func BenchmarkInspect(b *testing.B) {
	article := strings.Repeat(`<p>Some words of an article, with <a href="/link">a link</a> here and there.</p>`, 400)
	for _, c := range []struct{ name, page string }{
		{"no-script", "<!DOCTYPE html><html><head><title>t</title></head><body>" + article + "</body></html>"},
		{"analytics-script", "<!DOCTYPE html><html><head><title>t</title><script async src=/a.js></script></head><body>" + article + "</body></html>"},
	} {
		b.Run(c.name, func(b *testing.B) {
			page := []byte(c.page)
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				Inspect(page)
			}
		})
	}
}
