package content

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/weft-crawler/weft/internal/extract"
	"github.com/weft-crawler/weft/internal/plugin"
)

func TestSetChoosesByMediaType(t *testing.T) {
	s := Default()
	for mt, want := range map[string]string{
		"text/html": "html", "application/xhtml+xml": "html", "text/plain": "text",
		"image/png": "", "application/pdf": "", "text/xml": "",
	} {
		got := ""
		if h := s.For(mt); h != nil {
			got = h.Name()
		}
		if got != want {
			t.Errorf("Default().For(%q) = %q, want %q", mt, got, want)
		}
	}
	if s.WantsEmbeds() {
		t.Error("the default set wants embeds")
	}
	withImages := append(Default(), Image{})
	if h := withImages.For("image/jpeg"); h == nil || h.Name() != "image" || !withImages.WantsEmbeds() {
		t.Errorf("with the image module: For(image/jpeg) = %v, WantsEmbeds %v", h, withImages.WantsEmbeds())
	}
}

// TestExtendKeepsEmbeds: a Set with an embed reader still wants embeds once
// extensions follow its handlers, and one without still does not, so that
// --requisites and --with-images keep fetching embeds beside an extension.
func TestExtendKeepsEmbeds(t *testing.T) {
	ext := plugin.HandlerFunc("prices", func(*plugin.Response) (plugin.Result, error) { return plugin.Result{}, nil }, "text/css")
	if s := Default().Extend(ext); s.WantsEmbeds() {
		t.Error("the default set, extended, wants embeds")
	}
	for _, s := range []Set{append(Default(), Image{}), append(Default(), Requisites{})} {
		if !s.Extend(ext).WantsEmbeds() {
			t.Errorf("the set with %s, extended, does not want embeds", s[len(s)-1].Name())
		}
	}
}

func TestHandlersRead(t *testing.T) {
	hdr := http.Header{"X-Robots-Tag": {"noindex"}}
	page := []byte(`<html><head><base href="/d/"><meta name="robots" content="nofollow"></head>` +
		`<body><p>Hello big world</p><a href="x">x</a><img src="i.png"></body></html>`)
	r := HTML{}.Read(Doc{MediaType: "text/html", Header: hdr, Body: page, Token: "weft", Words: true, Embeds: true})
	if r.Base != "/d/" || len(r.Links) != 1 || r.Links[0].URL != "x" || !slices.Equal(r.Embeds, []string{"i.png"}) ||
		!r.NoIndex || !r.NoFollow || len(r.Words) != 4 { // hello big world x
		t.Errorf("HTML.Read = %+v", r)
	}
	if r := (HTML{}).Read(Doc{Header: http.Header{}, Body: page}); r.Words != nil || r.Embeds != nil {
		t.Errorf("words or embeds collected unasked: %+v", r)
	}
	tr := Text{}.Read(Doc{MediaType: "text/plain", Header: hdr, Body: []byte("Hello, big world. http://a.test/"), Token: "weft", Words: true})
	want := []uint64{extract.WordHash("hello"), extract.WordHash("big"), extract.WordHash("world")}
	if !slices.Equal(tr.Words[:3], want) || len(tr.Links) != 0 || !tr.NoIndex {
		t.Errorf("Text.Read = %+v", tr)
	}
	if ir := (Image{}).Read(Doc{Body: []byte("\xff\xd8")}); len(ir.Links)+len(ir.Words)+len(ir.Embeds) != 0 {
		t.Errorf("Image.Read = %+v", ir)
	}
}

func TestSitemapHandler(t *testing.T) {
	h := Sitemap{}
	for _, mt := range []string{"application/xml", "text/xml", "application/gzip", "application/x-gzip"} {
		if !h.Accepts(mt) {
			t.Errorf("Sitemap does not accept %s", mt)
		}
	}
	if h.Accepts("text/html") {
		t.Error("Sitemap accepts HTML")
	}
	r := h.Read(Doc{Body: []byte(`<urlset><url><loc>https://a.test/1</loc><lastmod>2026-11-30</lastmod><priority>0.9</priority></url><url><loc>/2</loc></url></urlset>`)})
	if r.Err != nil || len(r.Links) != 2 || r.Links[0] != (extract.Link{URL: "https://a.test/1", Tag: "url"}) || r.Links[1].URL != "/2" {
		t.Errorf("urlset: %+v", r)
	}
	if len(r.Hints) != 2 || !r.Hints[0].LastMod.Equal(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)) || r.Hints[0].Priority != 0.9 ||
		!r.Hints[1].LastMod.IsZero() || r.Hints[1].Priority != -1 {
		t.Errorf("urlset hints: %+v", r.Hints)
	}
	r = h.Read(Doc{Body: []byte(`<sitemapindex><sitemap><loc>https://a.test/s.xml.gz</loc></sitemap></sitemapindex>`)})
	if r.Err != nil || len(r.Links) != 1 || r.Links[0].Tag != "sitemap" || r.Hints != nil {
		t.Errorf("index: %+v", r)
	}
	r = h.Read(Doc{Body: []byte("<urlset><url><loc>https://a.test/1</loc></url>\n<url><loc>x</url>")})
	if r.Err == nil || !strings.Contains(r.Err.Error(), "line 2") || len(r.Links) != 1 {
		t.Errorf("malformed: %+v", r)
	}
	if r := h.Read(Doc{Body: []byte(`<rss/>`)}); r.Err != nil || len(r.Links) != 0 {
		t.Errorf("a feed: %+v; want nothing read, no error", r)
	}
	cut := h.Read(Doc{Body: []byte("<urlset><url><loc>https://a.test/1</loc></url><url><loc>https://a.te"), Truncated: "length"})
	if cut.Err != nil || cut.Truncated != "fetch:length" || len(cut.Links) != 1 {
		t.Errorf("cut by the fetcher: %+v", cut)
	}
}

func TestHTMLCharsets(t *testing.T) {
	page := func(head string, text []byte) []byte {
		return append(append([]byte("<html><head>"+head+"</head><body><a href=\"/next\">"), text...), "</a></body></html>"...)
	}
	utf16 := []byte{0xFF, 0xFE} // "<a href=/x>" in UTF-16LE, with its BOM
	for _, r := range "<a href=/x>\u00e9</a>" {
		utf16 = append(utf16, byte(r), byte(r>>8))
	}
	for _, tc := range []struct {
		name, ctype string
		body        []byte
		want        string // Result.Charset
		link, word  string // a link and a word the reader must find
	}{
		{"utf-8", "text/html; charset=utf-8", page("", []byte("café")), "", "/next", "café"},
		{"invalid utf-8", "text/html; charset=utf-8", page("", []byte("caf\xe9 \xff\xfe")), CharsetInvalid, "/next", ""},
		{"meta windows-1252", "text/html", page(`<meta charset="windows-1252">`, []byte("caf\xe9")), CharsetTranscoded, "/next", "café"},
		{"header says utf-8, meta 1252", "text/html; charset=utf-8", page(`<meta charset="windows-1252">`, []byte("caf\xe9")), CharsetInvalid, "/next", ""},
		{"unknown label", "text/html; charset=x-bogus", page("", []byte("caf\xc3\xa9")), CharsetUnknown, "/next", "café"},
		{"shift_jis labelled", "text/html; charset=shift_jis", page("", []byte("\x93\xfa\x96\x7b")), CharsetTranscoded, "/next", "日本"},
		{"utf-16 by BOM", "text/html", utf16, CharsetTranscoded, "/x", "é"},
		// No label, and the first non-ASCII byte after the 1024 the prescan
		// reads: valid UTF-8 is read as UTF-8, not as the windows-1252 guess.
		{"utf-8 late, no label", "text/html", page("<script>"+strings.Repeat("var x = 1;\n", 120)+"</script>", []byte("café")), "", "/next", "café"},
		// A <meta> naming an old template's encoding over valid UTF-8.
		{"utf-8 under a 1252 meta", "text/html", page(`<meta charset="windows-1252">`, []byte("café")), "", "/next", "café"},
	} {
		h := http.Header{"Content-Type": {tc.ctype}}
		res := HTML{}.Read(Doc{MediaType: "text/html", Header: h, Body: tc.body, Words: true})
		if res.Charset != tc.want || res.Err != nil {
			t.Errorf("%s: Charset %q err %v, want %q", tc.name, res.Charset, res.Err, tc.want)
		}
		if len(res.Links) != 1 || res.Links[0].URL != tc.link {
			t.Errorf("%s: links %+v, want %s", tc.name, res.Links, tc.link)
		}
		if tc.word != "" {
			want := extract.TextWords([]byte(tc.word), 10)
			if len(want) == 0 || !slices.Contains(res.Words, want[0]) {
				t.Errorf("%s: the word %q was not read", tc.name, tc.word)
			}
		}
	}
}

// A hostile body whose conversion would grow it more than twice is cut
// there, at a character boundary, in one buffer of that size; HTML says
// it was cut.
func TestCharsetConversionBounded(t *testing.T) {
	body := append([]byte("<html><body>"), bytes.Repeat([]byte{0x80}, 1<<20)...) // '€' in windows-1252: 3 bytes in UTF-8
	out, cs := toUTF8(body, "text/html; charset=windows-1252")
	if cs != CharsetCut || len(out) < 2*len(body) || cap(out) > 2*len(body)+8 || !utf8.Valid(out) {
		t.Errorf("charset %q, %d bytes out (cap %d, valid %v) of %d in; want cut at twice, whole characters", cs, len(out), cap(out), utf8.Valid(out), len(body))
	}
	res := HTML{}.Read(Doc{MediaType: "text/html", Header: http.Header{"Content-Type": {"text/html; charset=windows-1252"}}, Body: body})
	if res.Charset != CharsetCut || res.Truncated == "" {
		t.Errorf("HTML: charset %q, truncated %q; want it cut and saying so", res.Charset, res.Truncated)
	}
	// A 7-bit encoding a <meta> names is decoded, though its bytes are ASCII.
	jis := []byte("<meta charset=\"iso-2022-jp\"><p>\x1b$BF|K\\\x1b(B</p>")
	if out, cs := toUTF8(jis, "text/html"); cs != CharsetTranscoded || !strings.Contains(string(out), "日本") {
		t.Errorf("ISO-2022-JP: %q, %q", cs, out)
	}
}

func TestBinaryLabelledAsText(t *testing.T) {
	body := append([]byte("\x00\x01\x02<html>"), make([]byte, 4096)...)
	h := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	for _, hd := range []Handler{HTML{}, Text{}} {
		res := hd.Read(Doc{MediaType: "text/html", Header: h, Body: body, Words: true})
		if !errors.Is(res.Err, ErrBinary) || len(res.Links) != 0 || len(res.Words) != 0 {
			t.Errorf("%s: err %v, %d links, %d words; want ErrBinary and nothing read", hd.Name(), res.Err, len(res.Links), len(res.Words))
		}
	}
	// A PDF labelled as HTML is binary too.
	if res := (HTML{}).Read(Doc{MediaType: "text/html", Header: h, Body: []byte("%PDF-1.7\n<a href=/a>")}); !errors.Is(res.Err, ErrBinary) {
		t.Errorf("PDF: err %v, want ErrBinary", res.Err)
	}
	// Markup stays markup whatever follows, NULs included; form feeds,
	// tabs and escapes are text.
	for _, body := range []string{"<!DOCTYPE html><p>\x00\x01<a href=/a>a</a>", "hello\f\t\x1b<a href=/a>a</a>"} {
		res := HTML{}.Read(Doc{MediaType: "text/html", Header: h, Body: []byte(body)})
		if res.Err != nil || len(res.Links) != 1 {
			t.Errorf("%q: err %v, %d links", body, res.Err, len(res.Links))
		}
	}
}

func TestHTMLLinkLimitSaysCut(t *testing.T) {
	var b strings.Builder
	for i := range extract.DefaultMaxLinks + 5 {
		fmt.Fprintf(&b, `<a href="/l/%d">x</a>`, i)
	}
	res := HTML{}.Read(Doc{MediaType: "text/html", Header: http.Header{}, Body: []byte(b.String())})
	if len(res.Links) != extract.DefaultMaxLinks || res.Truncated != CutLinks {
		t.Errorf("%d links, Truncated %q; want %d and %q", len(res.Links), res.Truncated, extract.DefaultMaxLinks, CutLinks)
	}
	res = HTML{}.Read(Doc{MediaType: "text/html", Header: http.Header{}, Body: []byte(b.String()), MaxLinks: 7})
	if len(res.Links) != 7 || res.Truncated != CutLinks {
		t.Errorf("MaxLinks 7: %d links, Truncated %q", len(res.Links), res.Truncated)
	}
}

// The general index of a large manual has up to 28,000 links: read whole
// by default.
func TestHTMLReadsALargeIndexWhole(t *testing.T) {
	var b strings.Builder
	b.WriteString("<html><body><dl>\n")
	for i := range 28000 {
		fmt.Fprintf(&b, "<dt><a href=\"library/m%d.html#f%d\"><code>f%d()</code></a> (in module m%d)</dt>\n", i%500, i, i, i%500)
	}
	b.WriteString("</dl></body></html>\n")
	res := HTML{}.Read(Doc{MediaType: "text/html", Header: http.Header{}, Body: []byte(b.String())})
	if len(res.Links) != 28000 || res.Truncated != "" {
		t.Errorf("%d links read, Truncated %q; want all 28000", len(res.Links), res.Truncated)
	}
}

// A page is a search's results when a text field of a form that sends a
// GET to the page itself shows what its URL's query asks under the
// field's name: the search box filled in.
func TestSearchResults(t *testing.T) {
	box := func(form, v string) []byte {
		return []byte(`<html><body>` + form + `<input type="search" name="q" value="` + v + `"></form></body></html>`)
	}
	const toSearch = `<form action="/search">`
	for _, c := range []struct {
		url, form, value string
		want             bool
	}{
		{"http://a.test/search?q=Anna+Berg", toSearch, "Anna Berg", true},
		{"http://a.test/search?sort=date&q=Anna%20Berg#top", `<form action="http://a.test/search?x=1">`, " Anna Berg ", true},
		{"http://a.test/search?q=garden+%26+lamp", `<form>`, "garden &amp; lamp", true}, // no action: the page itself
		{"http://a.test/?q=garden", `<form method="get" action="/">`, "garden", true},   // to the home page, as WordPress's
		{"http://a.test/search?q=Anna+Berg", toSearch, "Search this site", false},       // a box that says what it is for
		{"http://a.test/search?q=", toSearch, "", false},
		{"http://a.test/article?id=7", toSearch, "Anna Berg", false}, // no such parameter
		{"http://a.test/search", toSearch, "Anna Berg", false},
		{"http://a.test/product?id=12&q=shoes", toSearch, "shoes", false},                                // the header's box, sent elsewhere
		{"http://a.test/search?q=Anna+Berg", `<form method="post">`, "Anna Berg", false},                 // a form that posts
		{"http://b.test/search?q=Anna+Berg", `<form action="http://a.test/search">`, "Anna Berg", false}, // another host's
		{"http://a.test/search?q=Anna+Berg", `<form action="HTTP://A.TEST:80/search">`, "Anna Berg", true},
		{"http://a.test/en/search?q=Anna+Berg", `<base href="http://a.test/"><form action="search">`, "Anna Berg", false}, // to /search
	} {
		r := HTML{}.Read(Doc{URL: c.url, MediaType: "text/html", Header: http.Header{}, Body: box(c.form, c.value)})
		if r.Search != c.want {
			t.Errorf("%s, %s with %q in the box: search %v, want %v", c.url, c.form, c.value, r.Search, c.want)
		}
	}
	// An article whose comment form names it (id=7) is no search, nor a
	// list's page-number box.
	for url, body := range map[string]string{
		"http://a.test/article.php?id=7": `<form method="post" action=""><input name="id" value="7"><input name="author" value=""></form>`,
		"http://a.test/list?page=3":      `<form><input type="text" name="page" value="3"></form>`,
	} {
		if r := (HTML{}).Read(Doc{URL: url, MediaType: "text/html", Header: http.Header{}, Body: []byte(body)}); r.Search {
			t.Errorf("%s: a search's results, want none", url)
		}
	}
}
