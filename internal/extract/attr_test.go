package extract

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/weft-crawler/weft/internal/htmltoken"
)

// tagSoup returns n random tags built from the pieces that make a tag
// hard to split: keys in mixed case and repeated, '=' before and inside
// keys, quoted, unquoted and missing values, '>' and quotes inside quoted
// values, '/', NULs, carriage returns and character references, with a
// little text between the tags.
func tagSoup(r *rand.Rand, n int) []byte {
	names := []string{"a", "A", "link", "LINK", "base", "meta", "Meta", "iframe", "frame", "area", "img", "div", "x\x00y"}
	keys := []string{"href", "HREF", "Href", "src", "SRC", "rel", "REL", "name", "NAME", "content", "Content", "class", "=href", "href=", "hr\x00ef", "h\"ref", "title", "/", "data-x"}
	vals := []string{"/a", "/a?b=1&amp;c=2", "/a?b=1&copy=2", "&amp;", "&amp", "&lt;x&gt;", "&#38;", "/n\x00ul", "/c\r\nr", "/c\rr", "a b", "x>y", "it's", `say "hi"`, "", " /sp ", "/\xff\xfe", "nofollow", "NoFollow UGC", "robots", "noindex, nofollow", "=x", "/"}
	spaces := []string{" ", "  ", "\n", "\t", "\r", "\f", "", " / "}
	var b bytes.Buffer
	for range n {
		b.WriteString("<")
		b.WriteString(names[r.IntN(len(names))])
		for range r.IntN(6) {
			b.WriteString(spaces[r.IntN(len(spaces)-1)]) // never "": keys must be apart from the name
			b.WriteString(keys[r.IntN(len(keys))])
			v := vals[r.IntN(len(vals))]
			switch r.IntN(5) {
			case 0: // no value
			case 1:
				b.WriteString("=" + spaces[r.IntN(len(spaces))] + `"` + strings.ReplaceAll(v, `"`, "") + `"`)
			case 2:
				b.WriteString(spaces[r.IntN(len(spaces))] + "= '" + strings.ReplaceAll(v, "'", "") + "'")
			default:
				b.WriteString("=" + strings.Map(func(c rune) rune {
					if strings.ContainsRune(" \t\n\r\f>", c) {
						return -1
					}
					return c
				}, v))
			}
		}
		b.WriteString(spaces[r.IntN(len(spaces))])
		if r.IntN(4) == 0 {
			b.WriteString("/")
		}
		b.WriteString(">text &amp; more</iframe>\n") // iframe content is raw text up to its end tag
	}
	return b.Bytes()
}

// attrCorpus is the pages the attribute tests read: the seeds world's,
// the benchmark's, a random tag soup and hand-written hard cases.
func attrCorpus(t *testing.T) [][]byte {
	corpus := seedsPages(t, 16)
	corpus = append(corpus, []byte(benchPage(60)))
	r := rand.New(rand.NewPCG(21, 2))
	for range 20 {
		corpus = append(corpus, tagSoup(r, 1000))
	}
	for _, s := range []string{
		`<a href="/first" HREF="/second" rel=a REL=b>`,
		`<A HrEf='/mixed' ReL="NoFollow">`,
		`<a =href="/1" href==/2 href="/3">`,
		`<a href/>`, `<a href=/>`, `<a href= >`, `<a href =/sp>`, `<a / href="/slash">`,
		`<a title="x>y" href="/after-gt">`, `<a title='"' href=/q>`,
		"<a href=\"/a\x00b\">", "<a h\x00ref=/n href=/m>", "<a href=\"/cr\r\nlf\">",
		`<a href="/e?a=1&amp;b=2&#38;c=&lt;">`, `<a href="/e?a=1&copy=2">`, `<a href="&amp;amp;">`,
		`<meta name=" ROBOTS " content="noindex">`, `<meta content="none" name=robots>`,
		`<base href=" /b/ "><base href="/c/">`, `<link rel="alternate" hreflang="de" href="/de/">`,
		`<img src="/i.png" alt="a">`, `<iframe src=/if></iframe>`, `<a href="unterminated`,
	} {
		corpus = append(corpus, []byte(s))
	}
	return corpus
}

// plainKey reports whether k is a key HTML could ask rawAttrs for: lower
// case ASCII letters, digits and '-'. (A NUL in a key Token shows as
// U+FFFD; no such key is asked for.)
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return k != ""
}

// TestRawAttrsAgreeWithToken holds rawAttrs to the tokenizer: for every
// start tag of the corpus, the value rawAttrs finds for a key (or that it
// finds none) is the value of that key in Token's attributes, whenever
// rawAttrs does not hand the tag back to TagAttr. It also checks that it
// hands back few of the seeds world's tags, so the fast path is the one
// the crawl takes.
func TestRawAttrsAgreeWithToken(t *testing.T) {
	var refs htmltoken.Tokenizer // asked which '&'s are plain
	probe := []string{"href", "src", "rel", "name", "content", "class", "title", "missing"}
	var tags, fallbacks, seedsTags, seedsFallbacks int
	for pi, page := range attrCorpus(t) {
		z := html.NewTokenizer(bytes.NewReader(page))
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				break
			}
			if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
				continue
			}
			raw := bytes.Clone(z.Raw())
			tok := z.Token()
			want := map[string]string{}
			keys := append([]string(nil), probe...)
			for _, a := range tok.Attr {
				want[a.Key] = a.Val
				keys = append(keys, a.Key)
			}
			for _, k := range keys {
				if !plainKey(k) {
					continue // HTML asks only for such names
				}
				tags++
				if pi < 16 {
					seedsTags++
				}
				v, _, has, _, ok := rawAttrs(&refs, bytes.Clone(raw), k, "")
				if !ok {
					fallbacks++
					if pi < 16 {
						seedsFallbacks++
					}
					continue
				}
				w, wantHas := want[k]
				if has != wantHas || string(v) != w {
					t.Fatalf("tag %q, key %q: rawAttrs gives %q (found %v), Token %q (found %v)", raw, k, v, has, w, wantHas)
				}
			}
			// Two keys at once, as HTML asks for them.
			if v0, v1, h0, h1, ok := rawAttrs(&refs, bytes.Clone(raw), "href", "rel"); ok {
				w0, wh0 := want["href"]
				w1, wh1 := want["rel"]
				if h0 != wh0 || h1 != wh1 || string(v0) != w0 || string(v1) != w1 {
					t.Fatalf("tag %q: rawAttrs gives href %q rel %q, Token %q %q", raw, v0, v1, w0, w1)
				}
			}
		}
	}
	t.Logf("%d lookups, %d handed back to TagAttr; seeds pages: %d, %d", tags, fallbacks, seedsTags, seedsFallbacks)
	if seedsFallbacks*20 > seedsTags {
		t.Errorf("%d of %d lookups on the seeds pages handed back to TagAttr", seedsFallbacks, seedsTags)
	}
}

// TestHTMLSameWithoutRawAttrs checks that HTML gives the same result with
// rawAttrs as when it reads every tag through TagAttr, as it did before.
func TestHTMLSameWithoutRawAttrs(t *testing.T) {
	defer func() { useRawAttrs = true }()
	for _, page := range attrCorpus(t) {
		for _, lim := range []Limits{{Words: DefaultMaxWords, Embeds: true}, {MaxLinks: 7}} {
			useRawAttrs = true
			got := HTML(page, "weft", lim)
			useRawAttrs = false
			want := HTML(page, "weft", lim)
			if !reflect.DeepEqual(got, want) {
				for i := range min(len(got.Links), len(want.Links)) {
					if got.Links[i] != want.Links[i] {
						t.Fatalf("page %.100q: link %d with rawAttrs %+v, without %+v", page, i, got.Links[i], want.Links[i])
					}
				}
				t.Fatalf("page %.100q: with rawAttrs %d links, base %q, title %q, %d embeds; without %d, %q, %q, %d",
					page, len(got.Links), got.Base, got.Title, len(got.Embeds), len(want.Links), want.Base, want.Title, len(want.Embeds))
			}
		}
	}
}

// FuzzRawAttrs checks rawAttrs against Token on the first tag of any
// input.
func FuzzRawAttrs(f *testing.F) {
	var refs htmltoken.Tokenizer // asked which '&'s are plain
	f.Add([]byte(`<a href="/x" rel=nofollow>`), "href")
	f.Add([]byte(`<A =href="/1" HREF==/2 href="/3">`), "href")
	f.Add([]byte("<meta name=robots content=\"a&amp;b\">"), "content")
	f.Fuzz(func(t *testing.T, page []byte, key string) {
		key = strings.ToLower(key)
		z := html.NewTokenizer(bytes.NewReader(page))
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				return
			}
			if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
				break
			}
		}
		raw := bytes.Clone(z.Raw())
		tok := z.Token()
		var want string
		var wantHas bool
		for _, a := range tok.Attr {
			if a.Key == key {
				want, wantHas = a.Val, true
				break
			}
		}
		if !plainKey(key) {
			return
		}
		v, _, has, _, ok := rawAttrs(&refs, raw, key, "")
		if ok && (has != wantHas || string(v) != want) {
			t.Fatalf("key %q: rawAttrs gives %q (found %v), Token %q (found %v)", key, v, has, want, wantHas)
		}
	})
}
