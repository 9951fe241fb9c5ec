package render

import (
	"strings"
	"testing"
)

func TestInspect(t *testing.T) {
	long := strings.Repeat("word ", 400)
	for _, c := range []struct {
		name string
		html string
		want Signals
		need bool
	}{
		{"static", `<p>` + long + `</p><a href="/x">x</a>`, Signals{}, false},
		{"static with a script", `<p>` + long + `</p><a href="/x">x</a><SCRIPT>1</SCRIPT>`, Signals{Scripts: 1, Text: TextFloor}, false},
		{"shell", `<div id=app></div><script src=/app.js></script>`, Signals{Scripts: 1}, true},
		{"noscript with text", `<noscript>enable JS</noscript><script>x()</script><p>` + long + `</p>`, Signals{Scripts: 1, NoScript: true}, true},
		{"article with analytics", `<script async src=/a.js></script><p>` + long + `</p>`, Signals{Scripts: 1, Text: TextFloor}, false},
		{"JSON only", `<script type="application/ld+json">{"a":1}</script><p>hi</p>`, Signals{Text: 2}, false},
		{"module", `<script type=module>import x from "/x.js"</script>`, Signals{Scripts: 1}, true},
		{"hidden text", `<style>p{}</style><template><p>` + long + `</p></template><script>var s = "` + long + `"</script>`, Signals{Scripts: 1}, true},
	} {
		got := Inspect([]byte(c.html))
		if c.want.Text == TextFloor && got.Text >= TextFloor {
			got.Text = TextFloor // counted to the token that passed the floor
		}
		if got != c.want || got.NeedsScript() != c.need {
			t.Errorf("%s: %+v (needs script %v), want %+v (%v)", c.name, got, got.NeedsScript(), c.want, c.need)
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
