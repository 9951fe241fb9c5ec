package content

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/internal/extract"
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
