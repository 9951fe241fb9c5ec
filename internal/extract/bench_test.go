package extract

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/weft-crawler/weft/internal/htmltoken"
)

// benchPage builds a page shaped like a news or shop page of about 40 KB:
// a head with styles, scripts and meta tags, a navigation bar, paragraphs
// of text with inline markup, images, and links spread through it.
func benchPage(links int) string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Example Store &mdash; Red shoes, blue shoes and everything between</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="A page used to measure link extraction.">
<meta name="robots" content="index, follow">
<link rel="stylesheet" href="/static/site.css"><link rel="icon" href="/favicon.ico">
<link rel="canonical" href="https://shop.example/shoes/"><link rel="next" href="/shoes/?page=2">
<link rel="alternate" hreflang="de" href="https://shop.example/de/schuhe/">
<style>`)
	for i := range 40 {
		fmt.Fprintf(&b, ".c%d{margin:%dpx;padding:0 %dpx;color:#%06x}\n", i, i, i*2, i*4099)
	}
	b.WriteString("</style>\n<script>window.dataLayer=window.dataLayer||[];")
	for i := range 30 {
		fmt.Fprintf(&b, "function f%d(a,b){return a<b?'<a href=\"/js%d\">':a&&b}\n", i, i)
	}
	b.WriteString("</script></head>\n<body class=\"page shoes\"><header><nav class=\"top\"><ul>\n")
	n := 0
	link := func(extra string) {
		fmt.Fprintf(&b, `<a class="nav-link c%d" href="/section/%d/item-%d.html?ref=nav&amp;x=%d" title="Item %d"%s>Item %d</a>`,
			n%40, n%7, n, n, n, extra, n)
		n++
	}
	for range 8 {
		b.WriteString("<li>")
		link("")
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul></nav></header>\n<main id=\"content\">\n")
	para := 0
	for b.Len() < 38000 || n < links-6 {
		fmt.Fprintf(&b, `<div class="card c%d" data-id="%d"><h2 class="title">Product %d</h2>`, para%40, para, para)
		fmt.Fprintf(&b, `<img src="/img/%d.jpg" alt="Product %d" width="300" height="200" loading="lazy">`, para, para)
		b.WriteString(`<p>Lorem ipsum dolor sit amet, <em>consectetur</em> adipiscing elit, sed do eiusmod tempor incididunt ` +
			`ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud <strong>exercitation</strong> ullamco ` +
			`laboris nisi ut aliquip ex ea commodo consequat &amp; more.</p>`)
		if n < links-6 {
			if para%6 == 0 {
				link(` rel="nofollow ugc"`)
			} else {
				link("")
			}
		}
		b.WriteString("</div>\n")
		para++
	}
	b.WriteString("</main>\n<footer><ul>")
	for n < links {
		b.WriteString("<li>")
		link(` rel="noopener"`)
		b.WriteString("</li>")
	}
	b.WriteString("</ul><p>&copy; 2026 Example Store</p></footer></body></html>\n")
	return b.String()
}

func TestBenchPage(t *testing.T) {
	page := benchPage(60)
	r := HTML([]byte(page), "weft", Limits{})
	// 60 anchors plus the next and alternate <link>s.
	if len(r.Links) != 62 || r.Truncated {
		t.Errorf("%d links, truncated %v", len(r.Links), r.Truncated)
	}
	if len(page) < 38000 || len(page) > 44000 {
		t.Errorf("page is %d bytes", len(page))
	}
}

func BenchmarkHTML(b *testing.B) {
	page := []byte(benchPage(60))
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		HTML(page, "weft", Limits{})
	}
}

// BenchmarkTokenizerOnly is the floor: a tokenizer alone, reading every
// token and nothing else; x/net/html's beside the one HTML uses.
func BenchmarkTokenizerOnly(b *testing.B) {
	page := []byte(benchPage(60))
	b.Run("xnet", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			z := html.NewTokenizer(bytes.NewReader(page))
			for z.Next() != html.ErrorToken {
			}
		}
	})
	b.Run("htmltoken", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		var z htmltoken.Tokenizer
		for b.Loop() {
			z.Reset(page) // nothing converts: Text is not called
			for z.Next() != html.ErrorToken {
			}
		}
	})
}

// BenchmarkParseTree is the alternative not taken: a full html.Parse.
func BenchmarkParseTree(b *testing.B) {
	page := []byte(benchPage(60))
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := html.Parse(bytes.NewReader(page)); err != nil {
			b.Fatal(err)
		}
	}
}

// indexPage builds a documentation index of n entries, shaped like the
// general index of a large manual (Python's genindex-all, Javadoc's
// index-all): one definition-list entry per link, each link to a page and
// an anchor, with a short description after it.
func indexPage(n int) []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Index &#8212; Manual</title></head>\n<body><div class=\"body\"><h1>Index</h1>\n<table class=\"indextable\"><tr><td><dl>\n")
	for i := range n {
		fmt.Fprintf(&b, "<dt><a href=\"library/module%d.html#module%d.function_%d\"><code>function_%d()</code></a> (in module module%d)</dt>\n", i%997, i%997, i, i, i%997)
	}
	b.WriteString("</dl></td></tr></table></div></body></html>\n")
	return b.Bytes()
}

// BenchmarkIndexPage reads a 60,000-entry index page (about 7 MiB, within
// the default body cap) at link caps of 10,000 (the old default), 50,000
// (the default) and 100,000, so that the cost of a cap is seen beside the
// others: time and memory grow with the links read.
func BenchmarkIndexPage(b *testing.B) {
	page := indexPage(60000)
	for _, max := range []int{10000, 50000, 100000} {
		b.Run(fmt.Sprintf("max=%d", max), func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			var links int
			for b.Loop() {
				links = len(HTML(page, "weft", Limits{MaxLinks: max, Words: DefaultMaxWords}).Links)
			}
			b.ReportMetric(float64(links), "links")
		})
	}
}
