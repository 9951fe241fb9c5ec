package extract

import (
	"slices"
	"testing"
)

// TestRequisites: what a browser fetches to render a page comes back in
// Embeds, in document order, and not in Links; without Limits.Embeds
// nothing does, and the links are the same either way.
func TestRequisites(t *testing.T) {
	page := `<!doctype html><html><head>
<link rel="stylesheet" href="/css/site.css">
<LINK REL="Shortcut Icon" href="/fav.png">
<link rel="preload" href="/data/items.json" as="fetch">
<link rel="modulepreload" href="/js/mod.js">
<link rel="alternate" href="/feed.xml">
<link rel="next" href="/page/2">
<script src="/js/app.js"></script>
<script>var notAURL = "url(x.png)";</script>
<style>@import "/css/print.css"; body { background: url('/img/bg.png') }</style>
</head><body style="background-image:url(/img/body.png)">
<a href="/about" style="color:red">about</a>
<img src="/img/a.jpg" srcset="/img/a-1x.jpg 1x, /img/a-2x.jpg 2x">
<picture><source srcset="/img/b.webp 480w,/img/b-big.webp 1080w" type="image/webp"><img src="/img/b.jpg"></picture>
<img srcset="/img/c,1.jpg, /img/c2.jpg 2x" src="data:image/gif;base64,R0lGOD">
<video src="/v/clip.mp4" poster="/v/poster.jpg"><track src="/v/subs.vtt"></video>
<audio src="/a/sound.ogg"></audio>
<embed src="/e/thing.swf"><object data="/o/doc.pdf"></object>
<input type="image" src="/img/button.png"><input type="text" src="/not-this.png">
<iframe src="/frame.html"></iframe>
</body></html>`
	want := []string{"/css/site.css", "/fav.png", "/data/items.json", "/js/mod.js", "/js/app.js", "/css/print.css", "/img/bg.png",
		"/img/body.png", "/img/a.jpg", "/img/a-1x.jpg", "/img/a-2x.jpg", "/img/b.webp", "/img/b-big.webp", "/img/b.jpg",
		"/img/c,1.jpg", "/img/c2.jpg", "/v/clip.mp4", "/v/poster.jpg", "/v/subs.vtt", "/a/sound.ogg", "/e/thing.swf", "/o/doc.pdf",
		"/img/button.png"}
	r := HTML([]byte(page), "weft", Limits{Embeds: true})
	if !slices.Equal(r.Embeds, want) {
		t.Errorf("Embeds:\n got %q\nwant %q", r.Embeds, want)
	}
	if !r.HasIcon {
		t.Error("the icon link was not seen")
	}
	var links []string
	for _, l := range r.Links {
		links = append(links, l.URL)
	}
	wantLinks := []string{"/feed.xml", "/page/2", "/about", "/frame.html"}
	if !slices.Equal(links, wantLinks) {
		t.Errorf("Links: %q, want %q", links, wantLinks)
	}
	plain := HTML([]byte(page), "weft", Limits{})
	var plainLinks []string
	for _, l := range plain.Links {
		plainLinks = append(plainLinks, l.URL)
	}
	if len(plain.Embeds) != 0 || plain.HasIcon || !slices.Equal(plainLinks, wantLinks) {
		t.Errorf("without Embeds: Embeds %q HasIcon %t Links %q", plain.Embeds, plain.HasIcon, plainLinks)
	}
	if cut := HTML([]byte(page), "weft", Limits{Embeds: true, MaxLinks: 5}); len(cut.Embeds) != 5 {
		t.Errorf("MaxLinks 5: %d embeds", len(cut.Embeds))
	}
}

func TestSrcset(t *testing.T) {
	for in, want := range map[string][]string{
		"a.jpg":                                {"a.jpg"},
		" a.jpg 1x ,b.jpg 2x":                  {"a.jpg", "b.jpg"},
		"a,b.jpg 100w, c.jpg 200w":             {"a,b.jpg", "c.jpg"},
		"a.jpg,, b.jpg":                        {"a.jpg", "b.jpg"},
		"a.jpg (odd, descriptor) 1x, b.jpg 2x": {"a.jpg", "b.jpg"},
		"":                                     nil,
	} {
		if got := srcsetURLs([]byte(in)); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
