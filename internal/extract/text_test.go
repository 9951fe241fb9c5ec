package extract

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func hashes(words ...string) []uint64 {
	out := make([]uint64, len(words))
	for i, w := range words {
		out[i] = WordHash(w)
	}
	return out
}

func TestWords(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>The Title</title>
<style>body { color: red }</style><script>var hidden = "words";</script></head>
<body><nav>Home &amp; News</nav><p>Caf&eacute; open, 24/7!</p>
<template><p>not shown</p></template><noscript>Enable JavaScript</noscript>
<p>ÉCOLE naïve—über</p><script>if (a < b) { x = "</p>" }</script><p>end</p></body></html>`
	want := hashes("the", "title", "home", "news", "café", "open", "24", "7", "école", "naïve", "über", "end")
	words := func(page string, max int) []uint64 { return HTML([]byte(page), "weft", Limits{Words: max}).Words }
	if got := words(page, 3); !slices.Equal(got, want[:3]) {
		t.Errorf("Words: 3 = %x", got)
	}
	if got := words("<p>\xff\xfe bad \xc3</p>", 10); !slices.Equal(got, hashes("bad")) {
		t.Errorf("invalid UTF-8: %x", got)
	}
	if got := HTML([]byte(page), "weft", Limits{Words: 1000}).Words; !slices.Equal(got, want) {
		t.Errorf("HTML(...).Words = %x, want %x", got, want)
	}
	if got := HTML([]byte(page), "weft", Limits{}).Words; got != nil {
		t.Errorf("words collected unasked: %x", got)
	}
	// A self-closing script still hides its raw text; marks stay in words.
	tricky := "<p>one</p><script src=\"x\"/>var secret words;</script><style/>.a{b:c}</style>" +
		"<template/><p>two \u0939\u093f\u0928\u094d\u0926\u0940 cafe\u0301</p>"
	wantTricky := hashes("one", "two", "\u0939\u093f\u0928\u094d\u0926\u0940", "cafe\u0301")
	if got := HTML([]byte(tricky), "weft", Limits{Words: 100}).Words; !slices.Equal(got, wantTricky) {
		t.Errorf("HTML(tricky).Words = %x, want %x", got, wantTricky)
	}
	if got := TextWords([]byte("The Title,\nhome & NEWS: café"), 100); !slices.Equal(got, hashes("the", "title", "home", "news", "café")) {
		t.Errorf("TextWords = %x", got)
	}
	if WordHash("a") == WordHash("b") || WordHash("ab") == WordHash("ba") {
		t.Error("WordHash collides on trivial input")
	}
}

func TestEmbeds(t *testing.T) {
	page := `<p><img src=" /a.png "><IMG SRC="b.jpg" alt=x><img alt="no src"><img src="">` +
		`<img src="data:image/png;base64,AAAA"><a href="/page">page</a><img src="javascript:x"></p>`
	r := HTML([]byte(page), "weft", Limits{Embeds: true})
	if want := []string{"/a.png", "b.jpg"}; !slices.Equal(r.Embeds, want) {
		t.Errorf("Embeds = %q, want %q", r.Embeds, want)
	}
	if len(r.Links) != 1 || r.Links[0].URL != "/page" {
		t.Errorf("Links = %+v: images are not links", r.Links)
	}
	if r := HTML([]byte(page), "weft", Limits{}); r.Embeds != nil {
		t.Errorf("embeds collected unasked: %q", r.Embeds)
	}
	many := strings.Repeat(`<img src="/i.png">`, 10)
	if r := HTML([]byte(many), "weft", Limits{Embeds: true, MaxLinks: 4}); len(r.Embeds) != 4 || r.Truncated {
		t.Errorf("%d embeds (truncated %v), want MaxLinks = 4 and the page read on", len(r.Embeds), r.Truncated)
	}
}

// BenchmarkHTMLWithWords takes a 62 KB page through HTML, links and words
// in one pass; BenchmarkHTMLWithoutWords the same without words.
func BenchmarkHTMLWithWords(b *testing.B) {
	page := []byte(benchPage(120))
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		HTML(page, "weft", Limits{Words: DefaultMaxWords})
	}
}

func BenchmarkHTMLWithoutWords(b *testing.B) {
	page := []byte(benchPage(120))
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		HTML(page, "weft", Limits{})
	}
}

// wordHashesPlain is appendWordHashes as it was before its inner loop for
// ASCII runs: one byte a step. The hashes are stored with the fingerprints
// made of them, so they must not change.
func wordHashesPlain(words []uint64, text []byte, max int) []uint64 {
	x, in := uint64(fnvOffset), false
	var enc [utf8.UTFMax]byte
	for i := 0; i < len(text) && len(words) < max; {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			if l := asciiWord[c]; l != 0 {
				x, in = (x^uint64(l))*fnvPrime, true
			} else if in {
				words = append(words, x)
				x, in = fnvOffset, false
			}
			continue
		}
		r, n := utf8.DecodeRune(text[i:])
		i += n
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) && r != '\u200c' && r != '\u200d' {
			if in {
				words = append(words, x)
				x, in = fnvOffset, false
			}
			continue
		}
		for _, b := range enc[:utf8.EncodeRune(enc[:], unicode.ToLower(r))] {
			x = (x ^ uint64(b)) * fnvPrime
		}
		in = true
	}
	if in && len(words) < max {
		words = append(words, x)
	}
	return words
}

func TestWordHashesAgree(t *testing.T) {
	texts := [][]byte{nil, []byte("a"), []byte("Hello, World! 42x"), []byte("naïve café ÀÉÎ straße ǅ"), []byte("a\u0301b\u200dc d\xffe\xc3"),
		[]byte("हिन्दी 日本語テキスト ελληνικά"), []byte(strings.Repeat("word ", 100))}
	texts = append(texts, seedsPages(t, 4)...)
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Z", "9", " ", ".", "é", "É", "\u0301", "\u200c", "\xff", "\xe2\x82", "日", "-", "\n"}
	for range 500 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		texts = append(texts, []byte(b.String()))
	}
	for _, text := range texts {
		for _, max := range []int{1, 3, 17, DefaultMaxWords} {
			got := appendWordHashes(nil, text, max)
			want := wordHashesPlain(nil, text, max)
			if !slices.Equal(got, want) {
				t.Fatalf("%.80q, max %d: %d hashes, want %d", text, max, len(got), len(want))
			}
		}
	}
}

func FuzzWordHashes(f *testing.F) {
	f.Add([]byte("Hello, World! naïve café"), 5)
	f.Fuzz(func(t *testing.T, text []byte, max int) {
		max = 1 + abs(max)%100
		if got, want := appendWordHashes(nil, text, max), wordHashesPlain(nil, text, max); !slices.Equal(got, want) {
			t.Fatalf("%q, max %d: %v, want %v", text, max, got, want)
		}
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// HTMLInto reads the words HTML reads into the array it is given, and
// AppendTextWords those of TextWords; words beyond its capacity go to an
// array of their own.
func TestWordsIntoTheGivenArray(t *testing.T) {
	page := []byte(benchPage(60))
	want := HTML(page, "weft", Limits{Words: DefaultMaxWords})
	if len(want.Words) < 100 {
		t.Fatalf("%d words on the bench page", len(want.Words))
	}
	buf := make([]uint64, 3, 10000) // its length does not count
	got := HTMLInto(buf, page, "weft", Limits{Words: DefaultMaxWords})
	if !slices.Equal(got.Words, want.Words) || &got.Words[0] != &buf[:1][0] {
		t.Errorf("HTMLInto: %d words, in the given array %v; want HTML's %d", len(got.Words), &got.Words[0] == &buf[:1][0], len(want.Words))
	}
	if !slices.Equal(got.Links, want.Links) {
		t.Error("HTMLInto's links differ from HTML's")
	}
	small := make([]uint64, 0, 10)
	if got := HTMLInto(small, page, "weft", Limits{Words: DefaultMaxWords}); !slices.Equal(got.Words, want.Words) {
		t.Error("HTMLInto into a small array lost words")
	}
	text := []byte("Some plain text, with words: and more words.")
	if got := AppendTextWords(buf, text, 100); !slices.Equal(got, TextWords(text, 100)) || &got[0] != &buf[:1][0] {
		t.Error("AppendTextWords differs from TextWords or left the given array")
	}
}

// TextHash is equal for two pages of the same visible words, whatever
// else differs, and differs when a word does, or their order.
func TestTextHash(t *testing.T) {
	const words = 1000
	hash := func(html string) uint64 {
		t.Helper()
		return TextHash(HTML([]byte(html), "", Limits{Words: words}).Words)
	}
	page := func(body, extra string) string {
		return `<!DOCTYPE html><html><head><title>T</title><script>var nonce="` + extra + `";</script></head><body>` +
			`<!-- generated ` + extra + ` --><form><input type=hidden name=csrf value="` + extra + `"></form>` + body +
			`<a href="/next?sid=` + extra + `">Next page</a></body></html>`
	}
	a := hash(page("<p>The quick brown fox jumps over the lazy dog.</p>", "1"))
	if b := hash(page("<p>The quick brown fox jumps over the lazy dog.</p>", "2")); a != b || a == 0 {
		t.Errorf("the same visible words, another token: %x and %x", a, b)
	}
	for _, body := range []string{
		"<p>The quick brown fox jumps over the lazy cat.</p>",
		"<p>The quick brown fox jumps the over lazy dog.</p>",
		"<p>The quick brown fox jumps over the lazy dog. Price 12.</p>",
	} {
		if b := hash(page(body, "1")); b == a {
			t.Errorf("%s: the same text hash as the page it differs from", body)
		}
	}
	if TextHash(nil) != 0 || AddLinks(0, []string{"http://a.test/"}) != 0 {
		t.Error("no words: a text hash")
	}
	links := []string{"http://a.test/1", "http://a.test/2"}
	if AddLinks(a, links) == a || AddLinks(a, links) == AddLinks(a, []string{"http://a.test/1", "http://a.test/3"}) ||
		AddLinks(a, links) != AddLinks(a, slices.Clone(links)) {
		t.Error("the links a page leads to do not tell it apart")
	}
}
