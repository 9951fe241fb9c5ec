// Package extract pulls links, the base URL, the title and robots directives
// out of an HTML page in one streaming pass, without building a DOM.
//
// It reads tokens, not a tree: a crawler needs the tags, and html.Parse
// costs more than twice the CPU time and eight times the memory
// (BenchmarkHTML, BenchmarkParseTree). The tokens are those of
// golang.org/x/net/html's Tokenizer, read by package htmltoken, which
// gives the same tokens from a byte slice in a fraction of the time.
// URLs are returned raw (entity-decoded, trimmed): resolving them against
// the page URL and Result.Base is the caller's job, with a WHATWG resolver.
// Bytes are not transcoded; charset handling is out of scope, and invalid
// UTF-8 is carried through, never a panic.
package extract

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/weft-crawler/weft/internal/htmltoken"
)

// Default limits, used where a Limits field is zero (or negative).
//
// DefaultMaxLinks is above what real pages hold: the general indexes of
// large manuals have 14,000 to 28,000 links, and the sitemap protocol caps
// a file at 50,000 URLs. Reading 50,000 links of such an index takes about
// 50 ms and 23 MB of allocations (BenchmarkIndexPage); the token budget
// and the body cap bound a page that has more.
const (
	DefaultMaxLinks  = 50000
	DefaultMaxTokens = 1000000
)

// maxTitle caps Result.Title, in bytes.
const maxTitle = 1 << 10

// Limits bounds the work done on one page.
type Limits struct {
	// MaxLinks is the most links returned; zero means DefaultMaxLinks.
	// Extraction stops at the first link beyond it.
	MaxLinks int
	// MaxTokens is the parse budget in tokenizer tokens (tags, text runs,
	// comments); zero means DefaultMaxTokens. A 40 KB page is about 1,500.
	MaxTokens int
	// Words, if positive, collects up to this many word hashes of the
	// page's visible text in Result.Words, in the same pass: the text
	// outside tags and outside <script>, <style>, <template> and <noscript>,
	// entity-decoded, split at every rune that is not a letter, a digit, a
	// combining mark or a zero-width joiner, each word lower-cased and
	// hashed (WordHash). It is the input of near-duplicate detection, which
	// needs the words' identities, not their text.
	Words int
	// Embeds asks for the page's requisites in Result.Embeds: what a
	// browser fetches to render it (see Result.Embeds).
	Embeds bool
}

// Link is one outgoing link.
type Link struct {
	// URL is the attribute value, entity-decoded, with leading and trailing
	// spaces and control characters trimmed (as the WHATWG URL parser
	// would). It is not resolved.
	URL string
	// Tag is the element: "a", "area", "frame", "iframe" or "link".
	Tag string
	// Rel is the rel attribute, lowercased and trimmed; "" if none.
	Rel string
	// NoFollow reports that Rel has the token "nofollow".
	NoFollow bool
}

// Result is what HTML found.
type Result struct {
	// Base is the href of the first <base> with an href attribute, raw and
	// trimmed like Link.URL; "" if none. Browsers resolve every link of the
	// document against it, even links that come before it.
	Base string
	// Links are in document order, duplicates kept.
	Links []Link
	// MetaNoIndex and MetaNoFollow come from <meta name="robots"> and from
	// <meta name="TOKEN"> for the crawler's token; "none" sets both.
	MetaNoIndex, MetaNoFollow bool
	// Title is the text of the first <title>, entity-decoded, with runs of
	// white space collapsed to one space and trimmed (as document.title),
	// cut to at most 1 KiB at a character boundary.
	Title string
	// Truncated reports that a limit stopped extraction early; LinksCut
	// that it was MaxLinks (else the parse budget, MaxTokens).
	Truncated bool
	LinksCut  bool
	// Tokens is the number of tokens read.
	Tokens int
	// Words are the hashes of the visible words, when Limits.Words asks
	// for them.
	Words []uint64
	// Embeds are the page's requisites, when Limits.Embeds asks for them:
	// the resources a browser fetches to render it, not links it offers.
	// They are the href of <link rel=stylesheet|icon|shortcut
	// icon|apple-touch-icon|preload|modulepreload|manifest>, the src of
	// <script>, <img>, <source>, <video>, <audio>, <track>, <embed> and
	// <input type=image>, every URL of the srcset of <img> and <source>,
	// <video poster>, <object data>, and the url()s and @imports of
	// <style> elements and style attributes (CSS); raw and trimmed like
	// Link.URL, in document order, at most MaxLinks. HasIcon says a
	// <link rel=icon> named the page's icon (else a browser asks for
	// /favicon.ico).
	Embeds  []string
	HasIcon bool
	// Filled are the page's text fields filled in (<input name=N
	// value=V> of type text or search, or of no type, with a letter in
	// V) of forms that send a GET, in document order, at most maxFilled:
	// a search's results show what was asked in their search box.
	Filled []Field
}

// Field is a text field of a form, filled in: its name and value, and
// its form's action, unresolved ("" for none: the page itself), all
// entity-decoded.
type Field struct{ Name, Value, Action string }

// maxFilled is the most fields Result.Filled holds.
const maxFilled = 4

// fill adds an <input> of the form f to r.Filled if it is a text field
// filled in with words (not a number: a page's or an item's) of a form
// that sends a GET.
func (r *Result) fill(f *form, name, value, typ []byte) {
	if !f.open || !f.get || len(name) == 0 || len(r.Filled) == maxFilled || bytes.IndexFunc(value, unicode.IsLetter) < 0 {
		return
	}
	if t := bytes.TrimSpace(typ); len(t) > 0 && !equalFoldASCII(t, "text") && !equalFoldASCII(t, "search") {
		return
	}
	r.Filled = append(r.Filled, Field{Name: string(name), Value: string(value), Action: string(f.action)})
}

// start reads the current <form> start tag of z. A form inside an open
// one is no form (an HTML parser drops it), and a method other than post
// or dialog is a GET.
func (f *form) start(z *htmltoken.Tokenizer) {
	if f.open {
		return
	}
	f.open, f.get, f.action = true, true, f.action[:0]
	method, action := false, false
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch {
		case string(k) == "method" && !method:
			m := bytes.TrimSpace(v)
			f.get, method = !equalFoldASCII(m, "post") && !equalFoldASCII(m, "dialog"), true
		case string(k) == "action" && !action:
			f.action, action = append(f.action, v...), true
		}
	}
}

// HTML extracts links and directives from body. token is the crawler's
// robots.txt product token (see robots.ProductToken), for agent-specific
// <meta name="TOKEN" content="..."> tags.
//
// Link sources are a[href], area[href], frame[src], iframe[src], and
// link[href] whose rel has alternate, next or prev and has neither
// stylesheet nor icon. Empty values and javascript:, mailto:, data: and
// tel: URLs are skipped. The content of <noscript> is read as markup, as a
// browser without scripting (which a crawler is) reads it; the content of
// <script>, <style>, <textarea> and the like is not.
func HTML(body []byte, token string, lim Limits) Result {
	return HTMLInto(nil, body, token, lim)
}

// HTMLInto is HTML with Result.Words appended to words[:0], not to a
// slice of their own: a caller that reads page after page and is done
// with a page's words before the next (a crawl's fingerprint of them)
// passes the same slice each time, and a page's words, 40 KB for 5,000,
// are not garbage. A nil words is HTML.
func HTMLInto(words []uint64, body []byte, token string, lim Limits) Result {
	// Links and Words are built in pooled buffers and copied out at their
	// final size: growing them from nothing cost about ten allocations a
	// page, two of them large (a seeds-world page has 100 links and 5,000
	// words).
	s := scratchPool.Get().(*scratch)
	// The tokenizer reads a copy: the callers of TagAttr and Text convert
	// bytes in place, and body is the caller's.
	s.z.Reset(append(s.z.Buf()[:0], body...))
	pooledWords := words == nil
	if pooledWords {
		words = s.words
	}
	r := s.html(&s.z, words, token, lim)
	if links := r.Links; len(links) > 0 {
		r.Links = slices.Clone(links)
		clear(links) // the pool must not keep the URLs alive
		s.links = links[:0]
	} else {
		r.Links = nil
	}
	if words := r.Words; words != nil && pooledWords {
		r.Words = append(make([]uint64, 0, len(words)), words...)
		s.words = words[:0]
	}
	if cap(s.links) <= maxPooledLinks && cap(s.words) <= maxPooledWords && cap(s.z.Buf()) <= maxPooledPage && cap(s.form.action) <= maxPooledAction {
		scratchPool.Put(s)
	}
	return r
}

// scratch holds the buffers of one HTML call.
type scratch struct {
	links []Link
	words []uint64
	z     htmltoken.Tokenizer
	form  form // the <form> the tokenizer is in
}

// form is what a text field's form says of it (Result.Filled): whether it
// is open and sends a GET, and its action, raw.
type form struct {
	open, get bool
	action    []byte // reused page after page
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// The largest buffers kept in scratchPool: a page with more links or words
// than this does not pin its buffers.
const (
	maxPooledAction = 4096
	maxPooledLinks  = 4096
	maxPooledWords  = 1 << 16
	maxPooledPage   = 1 << 20
)

// html is HTML on the page z reads, with r.Links in s's buffer and
// r.Words appended to words[:0].
func (s *scratch) html(z *htmltoken.Tokenizer, words []uint64, token string, lim Limits) Result {
	maxLinks, maxTokens := lim.MaxLinks, lim.MaxTokens
	if maxLinks <= 0 {
		maxLinks = DefaultMaxLinks
	}
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	var (
		r         Result
		baseSeen  bool
		titleSeen bool
		inTitle   bool
		inStyle   bool // the next text token is a <style> element's sheet
		hidden    int  // depth of elements whose text is not visible
	)
	r.Links = s.links[:0]
	s.form.open = false
	if lim.Words > 0 {
		r.Words = words[:0]
		if r.Words == nil {
			r.Words = make([]uint64, 0, min(lim.Words, len(z.Buf())/4))
		}
	}
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return r // the end of the page, or of a tag it ends inside
		}
		if r.Tokens == maxTokens {
			r.Truncated = true
			return r
		}
		r.Tokens++
		if inStyle {
			inStyle = false
			if tt == html.TextToken {
				r.addEmbeds(CSS(z.Text(), maxLinks), maxLinks)
				continue
			}
		}
		if inTitle {
			inTitle = false
			if tt == html.TextToken {
				text := z.Text()
				r.Title = cleanTitle(text)
				if lim.Words > 0 {
					r.Words = appendWordHashes(r.Words, text, lim.Words)
				}
				continue
			}
		}
		if tt == html.EndTagToken && s.form.open && endsForm(z.Raw()) {
			s.form.open = false
		}
		if lim.Words > 0 {
			switch tt {
			case html.TextToken:
				if hidden == 0 {
					r.Words = appendWordHashes(r.Words, z.Text(), lim.Words)
				}
				continue
			case html.EndTagToken:
				if hidden > 0 && hiddenTag(z.Raw()[1:]) {
					hidden--
				}
				continue
			case html.StartTagToken:
				if hiddenTag(z.Raw()) {
					hidden++
				}
			case html.SelfClosingTagToken:
				// "<script src=x />" still opens raw text up to </script>.
				// (noscript is markup here, and template has no raw text.)
				if name, _ := z.TagName(); string(name) == "script" || string(name) == "style" {
					hidden++
				}
			}
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		var attr string // the attribute holding the URL
		tag := tagOf(z.Raw())
		if lim.Embeds && tag == "style" && tt == html.StartTagToken {
			inStyle = true
		}
		if lim.Embeds && tag != "base" && tag != "meta" && tag != "title" && tag != "noscript" {
			if rel, url, ok := r.requisites(z, &s.form, tag, maxLinks); ok {
				if rel == nil || len(url) == 0 {
					continue // a requisite, or nothing
				}
				// A <link> that is not a requisite: read as a link.
				if r.addLink(url, rel, tag, maxLinks) {
					return r
				}
				continue
			}
		}
		switch tag {
		case "a", "area", "link":
			attr = "href"
		case "frame", "iframe":
			attr = "src"
		case "base":
			if !baseSeen {
				if href, _, ok, _ := tagAttrs(z, "href", ""); ok {
					baseSeen = true
					r.Base = string(trimURL(href))
				}
			}
			continue
		case "meta":
			r.meta(z, token)
			continue
		case "title":
			if !titleSeen {
				titleSeen, inTitle = true, true
			}
			continue
		case "noscript":
			z.NextIsNotRawText()
			continue
		case "input":
			r.input(z, &s.form, maxLinks, false)
			continue
		case "form":
			s.form.start(z)
			continue
		default:
			continue
		}

		var url, rel []byte
		var hasURL bool
		if tag == "link" {
			var typ []byte
			if url, rel, typ, hasURL = linkAttrs(z); forPrograms(rel, typ) {
				continue
			}
		} else {
			url, rel, hasURL, _ = tagAttrs(z, attr, "rel")
		}
		if !hasURL {
			continue
		}
		if r.addLink(url, rel, tag, maxLinks) {
			return r
		}
	}
}

// requisites adds to r.Embeds what the current start tag of z (named tag
// by tagOf) needs fetched to render, and reports whether it read the
// tag's attributes (handled): then a <link> that is no requisite comes
// back as its href and rel, for the caller to read as a link. Other tags
// (a, iframe, unknown ones) have only their style attribute read, from
// the raw tag, and are left to the caller whole.
func (r *Result) requisites(z *htmltoken.Tokenizer, f *form, tag string, max int) (rel, url []byte, handled bool) {
	switch tag {
	case "link":
		href, rel, typ, _ := linkAttrs(z)
		if requisiteRel(rel) {
			if hasToken(rel, "icon") {
				r.HasIcon = true
			}
			r.addEmbeds([]string{string(href)}, max)
			return nil, nil, true
		}
		if forPrograms(rel, typ) {
			return nil, nil, true
		}
		return rel, href, true
	case "input":
		r.input(z, f, max, true)
		return nil, nil, true
	case "script", "img", "source", "video", "audio", "track", "embed", "object":
		var src, srcset, poster, data, style []byte
		for more := true; more; {
			var k, v []byte
			k, v, more = z.TagAttr()
			switch string(k) {
			case "src":
				src = v
			case "srcset":
				srcset = v
			case "poster":
				poster = v
			case "data":
				data = v
			case "style":
				style = v
			}
		}
		if tag == "object" {
			src = data
		}
		if src != nil {
			r.addEmbeds([]string{string(src)}, max)
		}
		if srcset != nil && (tag == "img" || tag == "source") {
			r.addEmbeds(srcsetURLs(srcset), max)
		}
		if poster != nil && tag == "video" {
			r.addEmbeds([]string{string(poster)}, max)
		}
		if style != nil {
			r.addEmbeds(CSS(style, max), max)
		}
		return nil, nil, true
	}
	if raw := z.Raw(); containsFoldASCII(raw, "style") {
		// A copy: rawAttrs decodes in place, and the caller reads the
		// tag's raw bytes again.
		if style, _, ok, _, fine := rawAttrs(z, bytes.Clone(raw), "style", ""); fine && ok {
			r.addEmbeds(CSS(style, max), max)
		}
	}
	return nil, nil, false
}

// input reads the current <input> start tag of z, in the form f, for
// Result.Filled and, when embeds, for the requisites it shows: an image
// button's src, and its style attribute's url()s.
func (r *Result) input(z *htmltoken.Tokenizer, f *form, max int, embeds bool) {
	var name, value, typ, src, style []byte
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case "name":
			name = v
		case "value":
			value = v
		case "type":
			typ = v
		case "src":
			src = v
		case "style":
			style = v
		}
	}
	r.fill(f, name, value, typ)
	if !embeds {
		return
	}
	if src != nil && equalFoldASCII(bytes.TrimSpace(typ), "image") {
		r.addEmbeds([]string{string(src)}, max)
	}
	if style != nil {
		r.addEmbeds(CSS(style, max), max)
	}
}

// requisiteRel reports whether a <link>'s rel (lower case) names a
// resource the page needs, not a page it points to.
func requisiteRel(rel []byte) bool {
	for _, t := range bytes.Fields(rel) {
		switch string(t) {
		case "stylesheet", "icon", "apple-touch-icon", "preload", "modulepreload", "manifest":
			return true
		}
	}
	return false
}

// addEmbeds adds the raw URLs us to r.Embeds, trimmed, without empty ones
// and skipped schemes, up to max.
func (r *Result) addEmbeds(us []string, max int) {
	for _, u := range us {
		if len(r.Embeds) >= max {
			return
		}
		t := trimURL([]byte(u))
		if len(t) == 0 || skipScheme(t) {
			continue
		}
		r.Embeds = append(r.Embeds, string(t))
	}
}

// srcsetURLs are the URLs of a srcset attribute's image candidates, as the
// HTML standard parses it: each candidate is a URL (a run of characters
// that are not white space; trailing commas end it) and optional
// descriptors up to the next comma outside parentheses.
func srcsetURLs(v []byte) []string {
	var out []string
	i := 0
	for i < len(v) {
		for i < len(v) && (isSpace(rune(v[i])) || v[i] == ',') {
			i++
		}
		start := i
		for i < len(v) && !isSpace(rune(v[i])) {
			i++
		}
		url := v[start:i]
		ended := false
		for len(url) > 0 && url[len(url)-1] == ',' {
			url, ended = url[:len(url)-1], true
		}
		if len(url) > 0 {
			out = append(out, string(url))
		}
		if ended {
			continue
		}
		for depth := 0; i < len(v); i++ { // the descriptors
			switch v[i] {
			case '(':
				depth++
			case ')':
				depth = max(depth-1, 0)
			case ',':
				if depth == 0 {
					i++
					goto next
				}
			}
		}
	next:
	}
	return out
}

// containsFoldASCII reports whether b contains s (lower case ASCII) in
// any case.
func containsFoldASCII(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if equalFoldASCII(b[i:i+len(s)], s) {
			return true
		}
	}
	return false
}

// addLink adds the link of a tag's url attribute (raw) and its rel
// (raw; this token's bytes, lowered in place), unless it is empty, of a
// skipped scheme or a <link> that is not wanted; it reports that MaxLinks
// stopped extraction.
func (r *Result) addLink(url, rel []byte, tag string, maxLinks int) (full bool) {
	url = trimURL(url)
	if len(url) == 0 || skipScheme(url) {
		return false
	}
	rel = bytes.TrimSpace(rel)
	lowerASCII(rel) // this token's bytes, which nothing reads again
	if tag == "link" && !relWanted(rel) {
		return false
	}
	if len(r.Links) == maxLinks {
		r.Truncated, r.LinksCut = true, true
		return true
	}
	r.Links = append(r.Links, Link{
		URL:      string(url),
		Tag:      tag,
		Rel:      internRel(rel),
		NoFollow: hasToken(rel, "nofollow"),
	})
	return false
}

// tagOf returns, as a constant, the name of a tag this package reads,
// taken from the start tag's raw bytes ("<A HREF=..." gives "a"), or "".
// Reading the name from Raw avoids Tokenizer.TagName, which copies it.
func tagOf(raw []byte) string {
	const longest = len("noscript")
	if len(raw) < 2 || raw[0] != '<' {
		return ""
	}
	n := 1 // raw[1:n] is the name so far
	for n < len(raw) && !isNameEnd(raw[n]) {
		if n++; n > 1+longest {
			return ""
		}
	}
	name := raw[1:n]
	for _, t := range [...]string{"a", "area", "base", "frame", "iframe", "img", "link", "meta", "noscript", "title",
		"script", "style", "source", "video", "audio", "track", "embed", "object", "input", "form"} {
		if equalFoldASCII(name, t) {
			return t
		}
	}
	return ""
}

// endsForm reports whether raw, an end tag, is </form>.
func endsForm(raw []byte) bool {
	name, ok := bytes.CutPrefix(raw, []byte("</"))
	return ok && len(name) >= 4 && equalFoldASCII(name[:4], "form") && (len(name) == 4 || isNameEnd(name[4]))
}

// isNameEnd reports whether c ends a tag name, as in the tokenizer.
func isNameEnd(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '/' || c == '>'
}

// meta applies a <meta name="robots"|"TOKEN" content="..."> tag.
func (r *Result) meta(z *htmltoken.Tokenizer, token string) {
	name, content, _, hasContent := tagAttrs(z, "name", "content")
	name = bytes.TrimSpace(name)
	if !hasContent || !(equalFoldASCII(name, "robots") || token != "" && equalFoldASCII(name, token)) {
		return
	}
	// Directives are comma-separated; some sites separate them by spaces.
	for _, d := range bytes.FieldsFunc(content, func(c rune) bool { return c == ',' || isSpace(c) }) {
		applyDirective(d, &r.MetaNoIndex, &r.MetaNoFollow)
	}
}

// applyDirective sets noindex and nofollow for "noindex", "nofollow" and
// "none" (any case); other directives (all, index, follow, noarchive,
// max-snippet:...) change nothing.
func applyDirective(d []byte, noindex, nofollow *bool) {
	switch {
	case equalFoldASCII(d, "noindex"):
		*noindex = true
	case equalFoldASCII(d, "nofollow"):
		*nofollow = true
	case equalFoldASCII(d, "none"):
		*noindex, *nofollow = true, true
	}
}

// trimURL trims what the WHATWG URL parser strips from both ends of an
// input: C0 control characters and spaces.
func trimURL(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && b[i] <= ' ' {
		i++
	}
	for j > i && b[j-1] <= ' ' {
		j--
	}
	return b[i:j]
}

// skipScheme reports whether a trimmed URL is a javascript:, mailto:, data:
// or tel: URL. Tabs and newlines inside it are ignored, as the WHATWG URL
// parser removes them: "java\tscript:" is javascript:.
func skipScheme(u []byte) bool {
	for _, s := range [...]string{"javascript:", "mailto:", "data:", "tel:"} {
		if hasPrefixFoldIgnoringTabs(u, s) {
			return true
		}
	}
	return false
}

func hasPrefixFoldIgnoringTabs(b []byte, prefix string) bool {
	j := 0
	for i := 0; i < len(b) && j < len(prefix); i++ {
		c := b[i]
		if c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if lower(c) != prefix[j] {
			return false
		}
		j++
	}
	return j == len(prefix)
}

// relWanted reports whether a lowercased link rel names a page worth
// crawling: alternate, next or prev, and not a stylesheet or an icon
// ("alternate stylesheet" is a style sheet).
func relWanted(rel []byte) bool {
	want := false
	for _, t := range bytes.Fields(rel) {
		switch string(t) {
		case "stylesheet", "icon":
			return false
		case "alternate", "next", "prev":
			want = true
		}
	}
	return want
}

// linkAttrs returns the first href (and whether the tag has one), rel
// (trimmed, lower case) and type of the current <link> start tag of z,
// which it consumes. href and rel are read as tagAttrs reads them. The
// type is read from the raw tag, which that leaves whole, and is nil when
// it needs more than a slice of the raw bytes: read with the others
// through TagAttr, a title of "Blog &raquo; Feed", which every WordPress
// page's feed links have, would send each tag through the tokenizer's
// slow path.
func linkAttrs(z *htmltoken.Tokenizer) (href, rel, typ []byte, hasHref bool) {
	if t, _, _, _, ok := rawAttrs(z, z.Raw(), "type", ""); ok {
		typ = t
	}
	href, rel, hasHref, _ = tagAttrs(z, "href", "rel")
	rel = bytes.TrimSpace(rel)
	lowerASCII(rel)
	return href, rel, typ, hasHref
}

// forPrograms reports whether a <link> of rel (lower case) and type is
// an alternate of the page for programs, not for readers: JSON (a REST
// API's record of the page, ActivityPub's, JSON-LD; but a JSON Feed that
// says so, application/feed+json: one typed application/json, as JSON
// Feed 1.0 has it, is not told from an API's record), oEmbed (JSON or XML), RSD, and a wiki page's source for its
// editors (MediaWiki's application/x-wiki, its ?action=edit view, linked
// from every page). A WordPress post links three such
// (its REST API record, its oEmbed JSON and XML), more than half of what
// a crawl of a blog would otherwise ask for; they replay nothing and
// hold nothing the page does not. Feeds, HTML alternates (a translation,
// a mobile page) and documents (a PDF of the page) are followed. typ is
// this token's bytes, lowered in place.
func forPrograms(rel, typ []byte) bool {
	if !hasToken(rel, "alternate") || len(typ) == 0 {
		return false
	}
	mt := typ
	if i := bytes.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	mt = bytes.TrimSpace(mt)
	lowerASCII(mt)
	_, sub, _ := bytes.Cut(mt, []byte("/"))
	switch {
	case string(sub) == "feed+json":
		return false
	case string(sub) == "json", bytes.HasSuffix(sub, []byte("+json")),
		bytes.HasSuffix(sub, []byte("+oembed")), string(sub) == "rsd+xml", string(sub) == "x-wiki":
		return true
	}
	return false
}

// hasToken reports whether the space-separated list has the token.
func hasToken(list []byte, token string) bool {
	for len(list) > 0 {
		i := bytes.IndexAny(list, " \t\n\f\r")
		if i < 0 {
			return string(list) == token
		}
		if string(list[:i]) == token {
			return true
		}
		list = list[i+1:]
	}
	return false
}

// internRel returns rel as a string, without allocating for common values.
func internRel(rel []byte) string {
	switch string(rel) {
	case "":
		return ""
	case "nofollow":
		return "nofollow"
	case "noopener":
		return "noopener"
	case "noreferrer":
		return "noreferrer"
	case "noopener noreferrer":
		return "noopener noreferrer"
	case "noreferrer noopener":
		return "noreferrer noopener"
	case "nofollow noopener":
		return "nofollow noopener"
	case "nofollow noopener noreferrer":
		return "nofollow noopener noreferrer"
	case "external":
		return "external"
	case "ugc":
		return "ugc"
	case "nofollow ugc":
		return "nofollow ugc"
	case "sponsored":
		return "sponsored"
	case "alternate":
		return "alternate"
	case "next":
		return "next"
	case "prev":
		return "prev"
	case "bookmark":
		return "bookmark"
	case "tag":
		return "tag"
	}
	return string(rel)
}

// cleanTitle collapses and trims white space, as document.title does, and
// caps the result at maxTitle bytes without splitting a UTF-8 sequence.
func cleanTitle(text []byte) string {
	b := make([]byte, 0, min(len(text), maxTitle+utf8.UTFMax))
	space := false
	for _, c := range text {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' {
			space = len(b) > 0
			continue
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		b = append(b, c)
		if len(b) > maxTitle {
			break
		}
	}
	if len(b) > maxTitle {
		n := maxTitle
		for i := 0; i < utf8.UTFMax && n > 0 && !utf8.RuneStart(b[n]); i++ {
			n--
		}
		b = bytes.TrimRight(b[:n], " ")
	}
	return string(b)
}

func isSpace(c rune) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func lowerASCII(b []byte) {
	for i, c := range b {
		b[i] = lower(c)
	}
}

func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

// RobotsTag reads X-Robots-Tag header values for the crawler's token:
// "noindex, nofollow", "none", "weft: nofollow" (applies only when weft is
// token), "otherbot: noindex" (ignored). Names are case-insensitive. An
// agent prefix applies to the directives after it in the same value, up to
// the next agent prefix ("otherbot: noindex, nofollow" is all otherbot's),
// as Google documents. Directives that carry a value (unavailable_after:,
// max-snippet: and the like) are recognised and ignored.
func RobotsTag(values []string, token string) (noindex, nofollow bool) {
	for _, v := range values {
		agent := "" // the directives that follow are for everyone
		for part := range strings.SplitSeq(v, ",") {
			part = strings.TrimSpace(part)
			if i := strings.IndexByte(part, ':'); i >= 0 {
				name := strings.TrimSpace(part[:i])
				switch {
				case valuedDirective(name):
					continue
				case isAgentName(name):
					agent = name
					part = strings.TrimSpace(part[i+1:])
				}
			}
			if agent != "" && !strings.EqualFold(agent, token) {
				continue
			}
			applyDirective([]byte(part), &noindex, &nofollow)
		}
	}
	return noindex, nofollow
}

// valuedDirective reports whether name is a robots directive that takes a
// value after a colon, so that "max-snippet: 20" is not read as an agent.
func valuedDirective(name string) bool {
	for _, d := range [...]string{"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"} {
		if strings.EqualFold(name, d) {
			return true
		}
	}
	return false
}

// isAgentName reports whether s can be a user-agent product token; a part
// of a date ("Friday, 25-Jun-2010 15:00:00 PST" split at the comma) cannot.
func isAgentName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
