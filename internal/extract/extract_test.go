package extract

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func urls(links []Link) []string {
	var out []string
	for _, l := range links {
		out = append(out, l.URL)
	}
	return out
}

func TestLinkSources(t *testing.T) {
	tests := []struct {
		name, html string
		want       []Link
	}{
		{"a", `<a href="/a">x</a>`, []Link{{URL: "/a", Tag: "a"}}},
		{"area", `<map><area href="/area" shape=rect></map>`, []Link{{URL: "/area", Tag: "area"}}},
		{"frame", `<frameset><frame src="/frame"></frameset>`, []Link{{URL: "/frame", Tag: "frame"}}},
		{"iframe", `<iframe src="/iframe"></iframe>`, []Link{{URL: "/iframe", Tag: "iframe"}}},
		{"iframe content is text", `<iframe src="/i"><a href="/no">x</a></iframe>`, []Link{{URL: "/i", Tag: "iframe"}}},
		{"link alternate", `<link rel="alternate" hreflang="de" href="/de/">`, []Link{{URL: "/de/", Tag: "link", Rel: "alternate"}}},
		{"link next", `<link rel=next href="/p2">`, []Link{{URL: "/p2", Tag: "link", Rel: "next"}}},
		{"link prev", `<LINK REL="Prev" HREF="/p0">`, []Link{{URL: "/p0", Tag: "link", Rel: "prev"}}},
		{"link alternate feed", `<link rel="alternate" type="application/rss+xml" href="/feed">`, []Link{{URL: "/feed", Tag: "link", Rel: "alternate"}}},
		{"link stylesheet", `<link rel="stylesheet" href="/s.css">`, nil},
		{"link icon", `<link rel="icon" href="/favicon.ico"><link rel="shortcut icon" href="/f.ico">`, nil},
		{"link alternate stylesheet", `<link rel="alternate stylesheet" href="/alt.css">`, nil},
		{"link canonical", `<link rel="canonical" href="/c">`, nil},
		{"link without rel", `<link href="/x">`, nil},
		{"a without href", `<a name="top">x</a><a id=y>`, nil},
		{"not link sources", `<img src="/i.png"><script src="/s.js"></script><form action="/f"></form><embed src="/e"><object data="/o"></object>`, nil},
		{"upper case", `<A HREF="/UP">x</A>`, []Link{{URL: "/UP", Tag: "a"}}},
		{"self-closing", `<a href="/sc"/>`, []Link{{URL: "/sc", Tag: "a"}}},
		{"unquoted", `<a href=/u?x=1>x</a>`, []Link{{URL: "/u?x=1", Tag: "a"}}},
		{"single quoted", `<a href='/sq'>x</a>`, []Link{{URL: "/sq", Tag: "a"}}},
		{"entities decoded", `<a href="/e?a=1&amp;b=2&#38;c=&lt;">x</a>`, []Link{{URL: "/e?a=1&b=2&c=<", Tag: "a"}}},
		{"entity without semicolon", `<a href="/e?a=1&copy=2">x</a>`, []Link{{URL: "/e?a=1&copy=2", Tag: "a"}}},
		{"whitespace trimmed", "<a href=\"  \n\t/ws \r\n \">x</a>", []Link{{URL: "/ws", Tag: "a"}}},
		{"inner whitespace kept", `<a href="/a b">x</a>`, []Link{{URL: "/a b", Tag: "a"}}},
		{"first duplicate attribute wins", `<a href="/first" href="/second">x</a>`, []Link{{URL: "/first", Tag: "a"}}},
		{"fragment kept", `<a href="#top">x</a>`, []Link{{URL: "#top", Tag: "a"}}},
		{"scheme-relative", `<a href="//cdn.example/x">x</a>`, []Link{{URL: "//cdn.example/x", Tag: "a"}}},
		{"absolute", `<a href="HTTPS://Example.COM/X">x</a>`, []Link{{URL: "HTTPS://Example.COM/X", Tag: "a"}}},
		{"duplicates kept", `<a href="/d">1</a><a href="/d">2</a>`, []Link{{URL: "/d", Tag: "a"}, {URL: "/d", Tag: "a"}}},
		{"empty", `<a href="">x</a><a href="   ">y</a><a href>z</a>`, nil},
		{"javascript", `<a href="javascript:void(0)">x</a><a href=" JavaScript:go()">y</a>`, nil},
		{"javascript with tab", "<a href=\"java\tscript:x()\">x</a><a href=\"java&#10;script:x()\">y</a>", nil},
		{"mailto tel data", `<a href="mailto:a@b.example">m</a><a href="TEL:+100">t</a><a href="data:text/html,x">d</a><iframe src="data:,x"></iframe>`, nil},
		{"scheme-like paths kept", `<a href="javascripts/app.html">x</a><a href="telephone.html">y</a><a href="./mailto:x">z</a>`,
			[]Link{{URL: "javascripts/app.html", Tag: "a"}, {URL: "telephone.html", Tag: "a"}, {URL: "./mailto:x", Tag: "a"}}},
		{"script content", `<script>document.write('<a href="/js">x</a>')</script><a href="/after">x</a>`, []Link{{URL: "/after", Tag: "a"}}},
		{"style and textarea content", `<style>a{} <a href="/css"></style><textarea><a href="/ta"></textarea>`, nil},
		{"comment", `<!-- <a href="/comment">x</a> --><a href="/real">y</a>`, []Link{{URL: "/real", Tag: "a"}}},
		{"noscript content is markup", `<noscript><a href="/ns">x</a><iframe src="/gtm"></iframe></noscript>`,
			[]Link{{URL: "/ns", Tag: "a"}, {URL: "/gtm", Tag: "iframe"}}},
		{"noscript-like tag", `<noscriptx><a href="/x">x</a></noscriptx>`, []Link{{URL: "/x", Tag: "a"}}},
		{"svg a", `<svg><a href="/svg"><text>x</text></a></svg>`, []Link{{URL: "/svg", Tag: "a"}}},
		{"abbr is not a", `<abbr href="/no">x</abbr><aside href="/no"></aside>`, nil},
		{"document order", `<iframe src="/1"></iframe><a href="/2">x</a><link rel=next href="/3"><area href="/4">`,
			[]Link{{URL: "/1", Tag: "iframe"}, {URL: "/2", Tag: "a"}, {URL: "/3", Tag: "link", Rel: "next"}, {URL: "/4", Tag: "area"}}},
	}
	for _, tc := range tests {
		got := HTML([]byte(tc.html), "weft", Limits{})
		if !slices.Equal(got.Links, tc.want) {
			t.Errorf("%s: links = %+v, want %+v", tc.name, got.Links, tc.want)
		}
		if got.Truncated {
			t.Errorf("%s: Truncated", tc.name)
		}
	}
}

func TestRel(t *testing.T) {
	tests := []struct {
		html     string
		rel      string
		nofollow bool
	}{
		{`<a href="/x" rel="NoFollow ugc">`, "nofollow ugc", true},
		{`<a href="/x" rel="nofollow">`, "nofollow", true},
		{`<a href="/x" rel="  noopener	nofollow ">`, "noopener\tnofollow", true},
		{`<a href="/x" rel="sponsored nofollow noopener">`, "sponsored nofollow noopener", true},
		{`<a href="/x" rel="nofollowme">`, "nofollowme", false},
		{`<a href="/x" rel="no-follow">`, "no-follow", false},
		{`<a href="/x" rel="noopener noreferrer">`, "noopener noreferrer", false},
		{`<a href="/x" rel="">`, "", false},
		{`<a href="/x">`, "", false},
		{`<area href="/x" rel="NOFOLLOW">`, "nofollow", true},
		{`<link href="/x" rel="alternate nofollow">`, "alternate nofollow", true},
	}
	for _, tc := range tests {
		got := HTML([]byte(tc.html), "weft", Limits{})
		if len(got.Links) != 1 {
			t.Errorf("%s: %d links", tc.html, len(got.Links))
			continue
		}
		if l := got.Links[0]; l.Rel != tc.rel || l.NoFollow != tc.nofollow {
			t.Errorf("%s: rel %q nofollow %v, want %q %v", tc.html, l.Rel, l.NoFollow, tc.rel, tc.nofollow)
		}
	}
}

func TestBase(t *testing.T) {
	tests := []struct{ name, html, want string }{
		{"none", `<a href="/x">`, ""},
		{"absolute", `<base href="https://example.com/dir/"><a href="x">`, "https://example.com/dir/"},
		{"relative returned raw", `<base href="../other/">`, "../other/"},
		{"first wins", `<base href="/first/"><base href="/second/">`, "/first/"},
		{"after links", `<a href="x">x</a><base href="/late/">`, "/late/"},
		{"without href skipped", `<base target="_blank"><base href="/real/">`, "/real/"},
		{"empty href counts", `<base href=""><base href="/second/">`, ""},
		{"trimmed and decoded", "<BASE HREF=\" /a?b=1&amp;c=2\n\">", "/a?b=1&c=2"},
	}
	for _, tc := range tests {
		got := HTML([]byte(tc.html), "weft", Limits{})
		if got.Base != tc.want {
			t.Errorf("%s: Base = %q, want %q", tc.name, got.Base, tc.want)
		}
		if slices.ContainsFunc(got.Links, func(l Link) bool { return l.Tag == "base" }) {
			t.Errorf("%s: base returned as a link", tc.name)
		}
	}
}

func TestMeta(t *testing.T) {
	tests := []struct {
		html              string
		noindex, nofollow bool
	}{
		{`<meta name="robots" content="noindex">`, true, false},
		{`<meta name="robots" content="nofollow">`, false, true},
		{`<meta name="robots" content="noindex, nofollow">`, true, true},
		{`<meta name="robots" content="noindex,nofollow">`, true, true},
		{`<meta name="robots" content="noindex nofollow">`, true, true},
		{`<meta name="robots" content="none">`, true, true},
		{`<meta name="robots" content="NONE">`, true, true},
		{`<META NAME="ROBOTS" CONTENT="NoIndex">`, true, false},
		{`<meta name=" Robots " content=" nofollow ">`, false, true},
		{`<meta name="robots" content="index, follow">`, false, false},
		{`<meta name="robots" content="all">`, false, false},
		{`<meta name="robots" content="noarchive, max-snippet:-1, nosnippet">`, false, false},
		{`<meta name="robots" content="noindexing">`, false, false},
		{`<meta name="robots">`, false, false},
		{`<meta content="noindex">`, false, false},
		{`<meta name="weft" content="noindex">`, true, false},
		{`<meta name="WEFT" content="nofollow">`, false, true},
		{`<meta name="weftbot" content="noindex">`, false, false},
		{`<meta name="googlebot" content="noindex, nofollow">`, false, false},
		{`<meta http-equiv="robots" content="noindex">`, false, false},
		{`<meta name="robots" content="noindex"><meta name="weft" content="nofollow">`, true, true},
		{`<meta name="robots" content="nofollow"><meta name="robots" content="index">`, false, true},
		{`<body><p><meta name="robots" content="noindex"></p></body>`, true, false},
		{`<script><meta name="robots" content="noindex"></script>`, false, false},
	}
	for _, tc := range tests {
		got := HTML([]byte(tc.html), "weft", Limits{})
		if got.MetaNoIndex != tc.noindex || got.MetaNoFollow != tc.nofollow {
			t.Errorf("%s: noindex %v nofollow %v, want %v %v", tc.html, got.MetaNoIndex, got.MetaNoFollow, tc.noindex, tc.nofollow)
		}
	}
	// An empty token matches no meta name.
	if got := HTML([]byte(`<meta name="" content="noindex">`), "", Limits{}); got.MetaNoIndex {
		t.Error("empty token matched an empty meta name")
	}
}

func TestRobotsTag(t *testing.T) {
	tests := []struct {
		values            []string
		noindex, nofollow bool
	}{
		{nil, false, false},
		{[]string{""}, false, false},
		{[]string{"noindex"}, true, false},
		{[]string{"nofollow"}, false, true},
		{[]string{"noindex, nofollow"}, true, true},
		{[]string{"NOINDEX,NOFOLLOW"}, true, true},
		{[]string{"none"}, true, true},
		{[]string{"noindex", "nofollow"}, true, true},
		{[]string{"all"}, false, false},
		{[]string{"weft: nofollow"}, false, true},
		{[]string{"WEFT: noindex"}, true, false},
		{[]string{"weft:none"}, true, true},
		{[]string{"otherbot: noindex"}, false, false},
		{[]string{"otherbot: noindex, nofollow"}, false, false},
		{[]string{"otherbot: noindex", "nofollow"}, false, true},
		{[]string{"noindex, otherbot: nofollow"}, true, false},
		{[]string{"otherbot: noindex, weft: nofollow"}, false, true},
		{[]string{"weftbot: noindex"}, false, false},
		{[]string{"unavailable_after: 25 Jun 2010 15:00:00 PST"}, false, false},
		{[]string{"unavailable_after: Friday, 25-Jun-2010 15:00:00 PST, noindex"}, true, false},
		{[]string{"max-snippet: 20, nofollow"}, false, true},
		{[]string{"max-image-preview: large, noindex"}, true, false},
		{[]string{"weft: max-snippet: 0, noindex"}, true, false},
		{[]string{"noindexed"}, false, false},
	}
	for _, tc := range tests {
		noindex, nofollow := RobotsTag(tc.values, "weft")
		if noindex != tc.noindex || nofollow != tc.nofollow {
			t.Errorf("RobotsTag(%q) = %v, %v, want %v, %v", tc.values, noindex, nofollow, tc.noindex, tc.nofollow)
		}
	}
}

func TestTitle(t *testing.T) {
	long := strings.Repeat("é", 600) // 1,200 bytes
	tests := []struct{ name, html, want string }{
		{"none", `<p>x`, ""},
		{"simple", `<title>Hello</title>`, "Hello"},
		{"trimmed and collapsed", "<title>\n  Hello \t\n  World  </title>", "Hello World"},
		{"entities", `<title>Fish &amp; Chips &lt;3</title>`, "Fish & Chips <3"},
		{"markup is text", `<title>a<b>c</b></title>`, "a<b>c</b>"},
		{"first wins", `<title>One</title><title>Two</title>`, "One"},
		{"empty first wins", `<title></title><title>Two</title>`, ""},
		{"unclosed", `<title>Open`, "Open"},
		{"capped at a rune boundary", "<title>" + long + "</title>", strings.Repeat("é", 512)},
		{"capped, no trailing space", "<title>" + strings.Repeat("a", 1023) + " bcd</title>", strings.Repeat("a", 1023)},
	}
	for _, tc := range tests {
		got := HTML([]byte(tc.html), "weft", Limits{})
		if got.Title != tc.want {
			t.Errorf("%s: Title = %q, want %q", tc.name, got.Title, tc.want)
		}
		if len(got.Title) > maxTitle || !utf8.ValidString(got.Title) {
			t.Errorf("%s: Title of %d bytes, valid %v", tc.name, len(got.Title), utf8.ValidString(got.Title))
		}
	}
}

func TestLimits(t *testing.T) {
	page := []byte(`<title>t</title><a href="/1">1</a><a href="/2">2</a><a href="/3">3</a>`)
	// Tokens: <title>, text, </title>, then <a>, text, </a> three times.
	tests := []struct {
		name      string
		lim       Limits
		links     []string
		truncated bool
		tokens    int
	}{
		{"defaults", Limits{}, []string{"/1", "/2", "/3"}, false, 12},
		{"negative means default", Limits{MaxLinks: -1, MaxTokens: -1}, []string{"/1", "/2", "/3"}, false, 12},
		{"links at limit", Limits{MaxLinks: 3}, []string{"/1", "/2", "/3"}, false, 12},
		{"links over limit", Limits{MaxLinks: 2}, []string{"/1", "/2"}, true, 10},
		{"tokens at limit", Limits{MaxTokens: 12}, []string{"/1", "/2", "/3"}, false, 12},
		{"tokens over limit", Limits{MaxTokens: 7}, []string{"/1", "/2"}, true, 7},
		{"one token", Limits{MaxTokens: 1}, nil, true, 1},
	}
	for _, tc := range tests {
		got := HTML(page, "weft", tc.lim)
		if !slices.Equal(urls(got.Links), tc.links) || got.Truncated != tc.truncated || got.Tokens != tc.tokens {
			t.Errorf("%s: links %v truncated %v tokens %d, want %v %v %d",
				tc.name, urls(got.Links), got.Truncated, got.Tokens, tc.links, tc.truncated, tc.tokens)
		}
		if wantCut := tc.name == "links over limit"; got.LinksCut != wantCut {
			t.Errorf("%s: LinksCut %v, want %v", tc.name, got.LinksCut, wantCut)
		}
	}

	var b strings.Builder
	for i := range DefaultMaxLinks + 5 {
		fmt.Fprintf(&b, `<a href="/%d">`, i)
	}
	if got := HTML([]byte(b.String()), "weft", Limits{}); len(got.Links) != DefaultMaxLinks || !got.Truncated {
		t.Errorf("default MaxLinks: %d links, truncated %v", len(got.Links), got.Truncated)
	}
}

// TestHostile feeds malformed, deep, unclosed and invalid input: nothing
// may panic, and what can be found is.
func TestHostile(t *testing.T) {
	deep := strings.Repeat("<div><span><table><tr><td>", 20000) + `<a href="/deep">x</a>`
	tests := []struct {
		name, html string
		links      []string
	}{
		{"empty", "", nil},
		{"text only", "just text", nil},
		{"deeply nested", deep, []string{"/deep"}},
		{"unclosed elements", `<html><body><div><p><a href="/1">one<a href="/2">two`, []string{"/1", "/2"}},
		{"eof inside tag", `<a href="/ok">x</a><a href="/cut`, []string{"/ok"}},
		{"eof inside unquoted value", `<a href=/cut`, nil},
		{"unterminated quote", `<a href='/q>text</a><a href="/next">`, nil},
		{"eof in comment", `<a href="/before"><!-- <a href="/in">`, []string{"/before"}},
		{"eof in script", `<a href="/before"><script> <a href="/in">`, []string{"/before"}},
		{"eof in noscript", `<noscript><a href="/ns">`, []string{"/ns"}},
		{"plaintext swallows the rest", `<a href="/1"><plaintext><a href="/2">`, []string{"/1"}},
		{"angle soup", `<<<>>><a <a href="/x">></<//>`, []string{"/x"}}, // "<a" is an attribute name
		{"stray end tags", `</a></html></body><a href="/x"></a></a>`, []string{"/x"}},
		{"bogus comment", `<!a href="/c"><? a href="/pi" ?><a href="/x">`, []string{"/x"}},
		{"cdata", `<![CDATA[<a href="/cd">]]><a href="/x">`, []string{"/x"}},
		{"doctype", `<!DOCTYPE html><a href="/x">`, []string{"/x"}},
		{"invalid utf-8", "<a href=\"/\xff\xfe\x80\">\xc3\x28</a><title>\xe2\x82</title>", []string{"/\xff\xfe\x80"}},
		{"nul bytes", "<a\x00 href=\"/n\x00ul\"><a href=\"/x\">", []string{"/x"}},
		{"nul in value", "<a href=\"/n\x00ul\">", []string{"/n\ufffdul"}},
		{"attribute without value", `<a href rel=nofollow><a href="/x">`, []string{"/x"}},
		{"equals soup", `<a =href="/1" href==/2 href="/3">`, []string{"=/2"}},
		{"many attributes", `<a ` + strings.Repeat(`data-x="1" `, 5000) + `href="/many">`, []string{"/many"}},
		{"huge attribute", `<a href="/` + strings.Repeat("x", 1<<20) + `">`, []string{"/" + strings.Repeat("x", 1<<20)}},
	}
	for _, tc := range tests {
		got := HTML([]byte(tc.html), "weft", Limits{})
		if !slices.Equal(urls(got.Links), tc.links) {
			t.Errorf("%s: links %q, want %q", tc.name, urls(got.Links), tc.links)
		}
	}
}

func FuzzHTML(f *testing.F) {
	f.Add([]byte(`<!DOCTYPE html><html><head><title>T &amp; U</title><link rel="next" href="/2"><script>var a="<a href=/s>";</script></head>`+
		`<body><div class="x"><a class=y href="/a?b=1&amp;c=2" rel="nofollow">a</a><iframe src="/i"></iframe><!-- c --></div></body></html>`), "weft")
	f.Add([]byte(`<base href="/b/"><meta name="robots" content="none"><title> t </title><a href="/x" rel="NoFollow ugc">`), "weft")
	f.Add([]byte(`<noscript><a href="/ns"></noscript><link rel="alternate" href="/alt"><iframe src="/if">`), "weft")
	f.Add([]byte("<a href=\"java\tscript:x\"><area href=\" /a \"><frame src=/f>\xff\x00"), "")
	f.Fuzz(func(t *testing.T, body []byte, token string) {
		lim := Limits{MaxLinks: 50, MaxTokens: 2000}
		r := HTML(body, token, lim)
		if len(r.Links) > lim.MaxLinks || r.Tokens > lim.MaxTokens {
			t.Fatalf("limits exceeded: %d links, %d tokens", len(r.Links), r.Tokens)
		}
		if len(r.Title) > maxTitle || strings.Trim(r.Title, " \t\n\f\r") != r.Title { // HTML's white space
			t.Fatalf("bad title %q", r.Title)
		}
		for _, l := range r.Links {
			if l.URL == "" || string(trimURL([]byte(l.URL))) != l.URL || skipScheme([]byte(l.URL)) {
				t.Fatalf("bad URL %q", l.URL)
			}
			switch l.Tag {
			case "a", "area", "frame", "iframe":
			case "link":
				if !relWanted([]byte(l.Rel)) {
					t.Fatalf("link with rel %q", l.Rel)
				}
			default:
				t.Fatalf("bad tag %q", l.Tag)
			}
			// Rel is lowercased in ASCII only, and split at ASCII white space.
			asciiSpace := func(r rune) bool { return strings.ContainsRune(" \t\n\f\r", r) }
			if strings.ContainsAny(l.Rel, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") ||
				l.NoFollow != slices.Contains(strings.FieldsFunc(l.Rel, asciiSpace), "nofollow") {
				t.Fatalf("bad rel %q nofollow %v", l.Rel, l.NoFollow)
			}
		}
		// Without limits, the same page gives a superset of links.
		full := HTML(body, token, Limits{})
		if !r.Truncated && (!slices.Equal(full.Links, r.Links) || full.Base != r.Base || full.Title != r.Title) {
			t.Fatal("result depends on limits that were not hit")
		}
		noindex, nofollow := RobotsTag([]string{string(body)}, token)
		_, _ = noindex, nofollow
	})
}

// A page's alternates for programs (a REST API's JSON, oEmbed, JSON-LD,
// ActivityPub, RSD, a wiki's source) are not links to follow; its feeds, its HTML
// alternates and a document of it are, however the tag is written, and
// whether requisites are read or not.
func TestAlternatesForProgramsNotFollowed(t *testing.T) {
	page := `<html><head>
<link rel="alternate" type="application/rss+xml" title="Blog &raquo; Feed" href="/feed/">
<link rel="alternate" type="application/atom+xml" href="/atom">
<link rel="alternate" type="application/feed+json" href="/feed.json">
<link rel="alternate" hreflang="de" href="/de/">
<link rel="alternate" type="text/html" media="only screen and (max-width: 640px)" href="/m/">
<link rel="alternate" type="application/pdf" href="/page.pdf">
<link rel="alternate" type="application/json" title="JSON" href="/wp-json/wp/v2/posts/7">
<link rel="alternate" title="oEmbed (JSON)" type="application/json+oembed" href="/wp-json/oembed/1.0/embed?url=x">
<link rel="alternate" title="oEmbed (XML)" type="text/xml+oembed" href="/wp-json/oembed/1.0/embed?url=x&#038;format=xml">
<LINK REL="Alternate" TYPE="Application/LD+JSON; charset=utf-8" HREF="/ld">
<link rel="alternate" type="application/activity+json" href="/ap">
<link rel="alternate" type="application/rsd+xml" href="/rsd">
<link rel="EditURI" type="application/rsd+xml" href="/xmlrpc.php?rsd">
<link rel="alternate" type="application/x-wiki" title="Edit this page" href="/index.php?title=Main_Page&amp;action=edit">
<link rel="next" type="application/json" href="/2">
<link rel="alternate" type="application/json">
</head><body><a href="/wp-json/wp/v2/posts/8" type="application/json">data</a></body></html>`
	want := []string{"/feed/", "/atom", "/feed.json", "/de/", "/m/", "/page.pdf", "/2", "/wp-json/wp/v2/posts/8"}
	for _, raw := range []bool{true, false} {
		useRawAttrs = raw
		for _, embeds := range []bool{false, true} {
			got := HTML([]byte(page), "weft", Limits{Embeds: embeds})
			if !slices.Equal(urls(got.Links), want) {
				t.Errorf("requisites read %v, raw attributes %v: links %q, want %q", embeds, raw, urls(got.Links), want)
			}
		}
	}
	useRawAttrs = true
	// A feed link's title with a character reference (WordPress's
	// "&raquo;") costs its type no trip through the tokenizer's slow path,
	// some 25 allocations a link: reading the type costs next to nothing
	// (the race detector's pools drop a few at random).
	head := []byte(strings.Repeat(`<link rel="alternate" type="application/rss+xml" title="Blog &raquo; Feed" href="/feed/">`+"\n", 3))
	plain := []byte(strings.Repeat(`<link rel="alternate" href="/feed/">`+"\n", 3))
	if a, b := testing.AllocsPerRun(50, func() { HTML(head, "weft", Limits{Embeds: true}) }),
		testing.AllocsPerRun(50, func() { HTML(plain, "weft", Limits{Embeds: true}) }); a > b+20 {
		t.Errorf("three feed links titled with &raquo;: %.0f allocations, %.0f without the title and type", a, b)
	}
}

// A page's text fields filled in with words, of forms that send a GET,
// are read with their form's action, with or without its requisites: a
// search box with what was asked, a field with no type; not an empty
// one, a number (a page's, an item's), a hidden one, a checkbox or a
// password, one of a form that posts or of no form; at most maxFilled.
func TestFilledFields(t *testing.T) {
	page := []byte(`<html><body><form action="/search"><input type="search" name="q" value="Anna &amp; Berg">` +
		`<input name="page" value="2"><input name="p" value="Café"><input type="text" name="empty" value=""><input type="hidden" name="id" value="x7">` +
		`<input type="checkbox" name="color" value="red" checked><input type="password" name="pw" value="x"></form>` +
		`<input type="text" name="loose" value="out of any form">` +
		`<form method="post" action="/comment"><input name="author" value="Ann"></form>` +
		`<FORM Method="GET"><input type="TEXT" name="a" value="a1"><input type="text" name="b" value="b2"><input type="text" name="c" value="c3"></FORM></body></html>`)
	want := []Field{{"q", "Anna & Berg", "/search"}, {"p", "Café", "/search"}, {"a", "a1", ""}, {"b", "b2", ""}}
	for _, lim := range []Limits{{}, {Embeds: true}, {Words: 100}, {Embeds: true, Words: 100}} {
		if got := HTML(page, "weft", lim).Filled; !slices.Equal(got, want) {
			t.Errorf("%+v: filled %v, want %v", lim, got, want)
		}
	}
	for _, c := range []struct {
		page string
		want []Field
	}{
		{`<form><input type="search" name="q" placeholder="Search"></form>`, nil},                         // empty
		{`<form method="post"><form><input name="q" value="x"></form>`, nil},                              // a form in a form is none
		{`<form method="fetch" action="/s"><input name="q" value="x"></form>`, []Field{{"q", "x", "/s"}}}, // an unknown method is a GET
		{`<form action="/s"></FORM ><input name="q" value="x">`, nil},                                     // after its end
	} {
		if got := HTML([]byte(c.page), "weft", Limits{}).Filled; !slices.Equal(got, c.want) {
			t.Errorf("%s: filled %v, want %v", c.page, got, c.want)
		}
	}
	// A form left open on one page is not open on the next, which the pool
	// may read with the same scratch.
	for range 20 {
		HTML([]byte(`<form action="/s"><input name="a" value="x">`), "weft", Limits{})
		if got := HTML([]byte(`<input name="q" value="x">`), "weft", Limits{}).Filled; got != nil {
			t.Fatalf("an input out of any form, after a page that left one open: filled %v", got)
		}
	}
}
