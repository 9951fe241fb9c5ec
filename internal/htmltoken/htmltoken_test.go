package htmltoken

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// edgeCases are inputs at the tokenizer's corners: every kind of
// markup declaration, script escapes, raw text end tags, attributes
// that repeat, unquoted values with '/', NULs, carriage returns and
// character references in text and in attributes.
var edgeCases = []string{
	"",
	"plain text",
	"<",
	"a<",
	"<<a>",
	"a < b <= c",
	"<a>",
	"<a",
	"<a ",
	"<a href",
	"<a href=",
	"<a href='x",
	"<a href=x",
	"<a href=x/>",
	"<a href=/>",
	"<a/>",
	"<br/>",
	"<br />",
	"<a / >",
	"<a b=1 B=2 b=3 c>",
	"<a =b>",
	"<a ==b>",
	"<a b = 'c' d=\"e\" f = g>",
	"<a b='>'>",
	"<a b=c>d>",
	"<a\x00b c\x00=d\x00e>",
	"<A HREF=\"X\">",
	"<a href=\"a\r\nb\rc\">",
	"<a href=\"?a=1&b=2&amp;c=3&lt;&notit;&notin &copy=x\">",
	"<a href=&amp>",
	// The '&'s read in place ("&amp;", none followed by a name, a name
	// and '=') and those beside them that are not.
	"<a href=\"/i?a=1&b=2&amp;c=3&=4&& 6&\">",
	"<a href=\"/i?a=1&b=2&amp;c=3&5&=6\">",
	"<a href=\"/r/x?utm_source=a&utm_medium=b&lang&not&notin&copy_1&reg.x\">",
	"<a href='&amp;amp;&amp=&AMP;&ampx;&amp'>",
	"<a href=\"?x=1&#38;y=2\" title='a&amp;\r\nb&c' data-x=&amp;&lt=>",
	"<a href=\"?x=1&copy=2&copy;&copy&reg2&not=&notin;\">",
	"<img src=x alt='&quot;&#65;&#x42;'>",
	"</",
	"</>",
	"</ x>",
	"</a",
	"</a b=c>",
	"</a/>",
	"</1>",
	"<!",
	"<!>",
	"<!-",
	"<!--",
	"<!-->",
	"<!--->",
	"<!---->",
	"<!-- a -->",
	"<!--a--!>",
	"<!--a--!-->",
	"<!--a--!x-->",
	"<!--a--!",
	"<!--a--",
	"<!--a-",
	"<!--a-->b",
	"<!--\x00-->",
	"<!D",
	"<!DOCTYPE",
	"<!DOCTYPE ",
	"<!doctype html>",
	"<!DocType  html PUBLIC \"x\">",
	"<!DOCTYPEhtml>",
	"<!DOCTYPX>",
	"<![CDATA[x]]>",
	"<?xml version=\"1.0\"?>",
	"<?",
	"<p>a&amp;b &lt;c&gt; &copy &nbsp;&#8212;&#x2014;&unknown; &</p>",
	"a\r\nb\rc\n\r",
	"a\x00b",
	"<title>a &amp; <b>b</b></title>c",
	"<title>x</TITLE>",
	"<title>x</titlex></title >",
	"<title>x</title",
	"<title>",
	"<textarea>&lt;a&gt;\r\n</textarea>",
	"<xmp><b>&amp;</b></xmp>",
	"<iframe><a href=x></iframe>",
	"<noembed>a</noembed>",
	"<noframes>a</noframes>",
	"<noscript><a href=x>y</a></noscript>",
	"<style>a{b:c}</style>",
	"<style>a</STYLE\t>b",
	"<style>a</style",
	"<style>a\x00b</style>",
	"<plaintext><a href=x></plaintext>",
	"<plaintext>",
	"<script>a</script>",
	"<script>a</script >b",
	"<script>a</scriptx>b</script>",
	"<script>if (a<b) c();</script>",
	"<script><!--</script>",
	"<script><!-- a </script> b",
	"<script><!--<script>a</script>b--></script>c",
	"<script><!--<script></script>--></script>",
	"<script><!--<SCRIPT>x</script>y</script>z",
	"<script><!--<scripts></script>",
	"<script><!--<script",
	"<script><!--<scri",
	"<script><!--<script>--><x-></script>",
	"<script><!--->a</script>",
	"<script><!-- - -- ---><</script>",
	"<script><!--<!--a--></script>",
	"<script><!--<script>-<-</script>-</script>",
	"<script>",
	"<script>a<",
	"<script>a</",
	"<script>a</scr",
	"<script>a</script",
	"<script><!",
	"<script><!-",
	"<script><!--",
	"<script/>a</script>",
	"<script src=x />a</script>",
	"<SCRIPT>a</ScRiPt>",
	"<div\ta\nb\fc\rd>",
	"<a href=\"x\"title=y>",
	"<a href=x title='y'/>",
	"<a b=c/ d>",
	"<x" + strings.Repeat(" a", 40) + strings.Repeat(" b", 3) + ">",
	"<x" + func() string {
		var b strings.Builder
		for i := range 40 {
			fmt.Fprintf(&b, " k%d=%d K%d=x", i%20, i, i%7)
		}
		return b.String()
	}() + ">",
}

// agree tokenizes page with x/net/html and with New, and returns the
// first difference, or "". rng picks, token by token, what to read: the
// text or the tag's name and attributes, the attributes alone, or
// nothing; and after a start tag, sometimes NextIsNotRawText.
func agree(page []byte, rng *rand.Rand) string {
	ref := html.NewTokenizer(bytes.NewReader(page))
	got := New(bytes.Clone(page))
	for i := 0; ; i++ {
		rt, gt := ref.Next(), got.Next()
		if rt != gt {
			return fmt.Sprintf("token %d: type %v, want %v (raw %q, want %q)", i, gt, rt, got.Raw(), ref.Raw())
		}
		if !bytes.Equal(ref.Raw(), got.Raw()) {
			return fmt.Sprintf("token %d (%v): raw %q, want %q", i, rt, got.Raw(), ref.Raw())
		}
		if rt == html.ErrorToken {
			return ""
		}
		mode := rng.IntN(4)
		switch rt {
		case html.TextToken, html.CommentToken, html.DoctypeToken:
			if mode > 0 {
				if r, g := ref.Text(), got.Text(); !bytes.Equal(r, g) {
					return fmt.Sprintf("token %d (%v %q): text %q, want %q", i, rt, ref.Raw(), g, r)
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			if mode == 1 || mode == 2 {
				rn, rm := ref.TagName()
				gn, gm := got.TagName()
				if !bytes.Equal(rn, gn) || rm != gm {
					return fmt.Sprintf("token %d (%q): name %q %v, want %q %v", i, ref.Raw(), gn, gm, rn, rm)
				}
			}
			if mode >= 2 {
				var ra, ga [][2]string
				for more := true; more; {
					var k, v []byte
					k, v, more = ref.TagAttr()
					ra = append(ra, [2]string{string(k), string(v)})
				}
				for more := true; more; {
					var k, v []byte
					k, v, more = got.TagAttr()
					ga = append(ga, [2]string{string(k), string(v)})
				}
				if fmt.Sprint(ra) != fmt.Sprint(ga) {
					return fmt.Sprintf("token %d (%q): attributes %q, want %q", i, ref.Raw(), ga, ra)
				}
			}
			if rt == html.StartTagToken && rng.IntN(8) == 0 {
				ref.NextIsNotRawText()
				got.NextIsNotRawText()
			}
		}
	}
}

func TestAgreesOnEdgeCases(t *testing.T) {
	for _, c := range edgeCases {
		for seed := range uint64(8) {
			if d := agree([]byte(c), rand.New(rand.NewPCG(seed, 1))); d != "" {
				t.Errorf("%q (seed %d): %s", c, seed, d)
				break
			}
		}
	}
}

// TestAgreesOnEveryPrefix ends a document with every kind of token in
// every byte of it, so that the end of the input comes in every state.
func TestAgreesOnEveryPrefix(t *testing.T) {
	doc := strings.Join(edgeCases, "\n") + "\n" + string(realisticPage())
	for n := range len(doc) + 1 {
		if d := agree([]byte(doc[:n]), rand.New(rand.NewPCG(uint64(n), 2))); d != "" {
			t.Fatalf("prefix of %d bytes: %s", n, d)
		}
	}
}

// TestAgreesOnMutations edits the edge cases and a realistic page at
// random, biased to the bytes markup is made of.
func TestAgreesOnMutations(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	docs := append(append([]string(nil), edgeCases...), string(realisticPage()))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for i := range n {
		doc := mutate(rng, []byte(docs[rng.IntN(len(docs))]))
		if d := agree(doc, rng); d != "" {
			t.Fatalf("mutation %d, %q: %s", i, doc, d)
		}
	}
}

// mutate inserts, deletes or replaces a few bytes or snippets of doc.
func mutate(rng *rand.Rand, doc []byte) []byte {
	const alphabet = "<>/!-=\"' \t\r\n\x00&;#?aAbsStTxX1"
	snippets := []string{"<script>", "</script>", "<!--", "-->", "--!>", "<title>", "</title>", "<style>", "</style", "<textarea>", "<plaintext>", "<noscript>", "&amp;", "&lt", "&#x41;", "<!DOCTYPE", "<a href=", "</", "<?", "\r\n", "<script", "<SCRIPT>"}
	for range 1 + rng.IntN(6) {
		at := 0
		if len(doc) > 0 {
			at = rng.IntN(len(doc) + 1)
		}
		var ins []byte
		if rng.IntN(2) == 0 {
			ins = []byte{alphabet[rng.IntN(len(alphabet))]}
		} else {
			ins = []byte(snippets[rng.IntN(len(snippets))])
		}
		switch rng.IntN(3) {
		case 0: // insert
			doc = append(doc[:at:at], append(ins, doc[at:]...)...)
		case 1: // delete
			end := min(len(doc), at+1+rng.IntN(8))
			doc = append(doc[:at:at], doc[end:]...)
		default: // replace
			end := min(len(doc), at+len(ins))
			doc = append(doc[:at:at], append(ins, doc[end:]...)...)
		}
	}
	return doc
}

// realisticPage is a small page shaped like the ones a crawl reads.
func realisticPage() []byte {
	return []byte(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>News &amp; views | Site</title>
<meta name="robots" content="noindex, nofollow">
<link rel="stylesheet" href="/static/main.css"><link rel=alternate hreflang=de href="/de/">
<script async src="/js/a.js"></script>
<script>
window.dataLayer = window.dataLayer || []; if (a < b && c > d) { x = "</scr" + "ipt>"; }
</script>
<style>body{margin:0} a[href^="http"]::after{content:"\2197"}</style>
</head>
<body class="page">
<!-- navigation -->
<nav><ul><li><a class="nav" href="/">Home</a></li><li><a href="/news/?utm_source=x&amp;b=1">News</a></li>
<li><a href='../about/' rel="nofollow noopener">About&nbsp;us</a></li></ul></nav>
<main><h1>Headline</h1><p>Text with <b>bold</b>, <i>italics</i> and a <a href=/x?y=1&z=2>link</a>.</p>
<img src="/img/a.jpg" srcset="/img/a-2x.jpg 2x, /img/a-3x.jpg 3x" alt="An image"><br/>
<noscript><img src="/pixel.gif"></noscript>
<textarea name=t>&lt;b&gt;</textarea>
</main>
<footer><p>&copy; 2026 Site</p></footer>
</body></html>
`)
}

func FuzzAgrees(f *testing.F) {
	for _, c := range edgeCases {
		f.Add([]byte(c), uint64(0))
	}
	f.Add(realisticPage(), uint64(1))
	f.Fuzz(func(t *testing.T, page []byte, seed uint64) {
		if d := agree(page, rand.New(rand.NewPCG(seed, 5))); d != "" {
			t.Fatal(d)
		}
	})
}

// TestTextConvertsInPlace: Text works in the slice given to Reset, which
// the caller hands over; it allocates only to decode a reference.
func TestTextConvertsInPlace(t *testing.T) {
	buf := []byte("a\r\nb<p>")
	z := New(buf)
	if z.Next() != html.TextToken {
		t.Fatal("not text")
	}
	if got := z.Text(); string(got) != "a\nb" || &got[0] != &buf[0] {
		t.Errorf("Text = %q, not converted in place", got)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		z.Reset(buf)
		for z.Next() != html.ErrorToken {
			z.Text()
			z.TagName()
		}
	}); allocs != 0 {
		t.Errorf("%v allocations reading a page without references", allocs)
	}
}

// What TagName and TagAttr return stays as it was while the tag's later
// attributes are read, on the fast path and on the one through
// x/net/html, and Reset drops a buffer a hostile tag made huge.
func TestReturnedSlicesStayUntilNext(t *testing.T) {
	var tag strings.Builder
	tag.WriteString("<X")
	for i := range 60 {
		fmt.Fprintf(&tag, " K%d=\"v\x00%d\r\n\"", i, i)
	}
	tag.WriteString(">")
	for _, page := range []string{tag.String(), strings.Replace(tag.String(), "v\x0059", "a&amp;b", 1)} {
		z := New([]byte(page))
		if z.Next() != html.StartTagToken {
			t.Fatal("not a start tag")
		}
		name, _ := z.TagName()
		var keys, vals [][]byte
		for more := true; more; {
			var k, v []byte
			k, v, more = z.TagAttr()
			keys, vals = append(keys, k), append(vals, v)
		}
		ref := html.NewTokenizer(strings.NewReader(page))
		ref.Next()
		if rn, _ := ref.TagName(); string(name) != string(rn) {
			t.Errorf("name %q after the attributes were read, want %q", name, rn)
		}
		for i := 0; ; i++ {
			k, v, more := ref.TagAttr()
			if i >= len(keys) || string(keys[i]) != string(k) || string(vals[i]) != string(v) {
				t.Fatalf("attribute %d is %q=%q after the later ones were read, want %q=%q", i, keys[i], vals[i], k, v)
			}
			if !more {
				break
			}
		}
	}
	var huge strings.Builder
	huge.WriteString("<x")
	for i := range 5000 {
		fmt.Fprintf(&huge, " a%d", i)
	}
	huge.WriteString(">")
	z := New([]byte(huge.String()))
	z.Next()
	if len(z.attr) != 5000 || len(z.names) == 0 {
		t.Fatalf("%d attributes, %d names", len(z.attr), len(z.names))
	}
	z.Reset([]byte("<p>"))
	if cap(z.attr) > 1<<10 || z.names != nil {
		t.Errorf("Reset kept %d attribute spans and %d names", cap(z.attr), len(z.names))
	}
}

// TestPlainRefs: the '&'s of most links are read in place, the others by
// x/net/html (TestAgreesOnEdgeCases checks both read alike).
func TestPlainRefs(t *testing.T) {
	var z Tokenizer
	for _, v := range []string{"?a=1&b=2", "?a=1&amp;b=2&amp;c=3", "&amp;amp;", "a&=b", "a& b", "a&&b=1", "a&", "&amp=1",
		"?x=1&utm_source=a&utm_medium=b", "a&lang", "a&5", "a&b&c#d"} {
		if !z.PlainRefs([]byte(v)) {
			t.Errorf("%q: read by x/net/html, want in place", v)
		}
	}
	for _, v := range []string{"&#38;", "a&copy", "a&copy_x", "&copy;", "&AMP;", "&amp", "&ampx;", "a&b=1&lt;", "a&notin", "a&lang;"} {
		if z.PlainRefs([]byte(v)) {
			t.Errorf("%q: read in place, want by x/net/html", v)
		}
	}
}
