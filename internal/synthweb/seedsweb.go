package synthweb

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// World names the shape of a synthetic web.
type World string

const (
	// WorldClassic is the web the end-to-end tests judge a crawl on:
	// every feature a crawler must handle (nofollow, redirects, errors,
	// near-duplicate articles, resources) on every host, 40 to 80 links a
	// page. The zero value of Config.World means it.
	WorldClassic World = "classic"
	// WorldSeeds is shaped like the web the seeds size a crawl for: a
	// news site per host with about 100 links a page, most of them the
	// site's own navigation, its most-read stories and earlier stories,
	// so that about 9 in 10 point at pages a breadth-first crawl has
	// already seen; about 10 a page lead to stories not seen yet, and one
	// to the page's own short link. Many links carry tracking and session
	// parameters or a reordered query; about one in twenty is a short
	// link (/s/CODE) that redirects (301, or 302 for one in eight) to its
	// story. Pages are 20-60 KB with a head of meta tags, scripts and a
	// style sheet, a navigation bar, prose, a sidebar and a footer.
	//
	// A host has PagesPerHost pages (zero means 1000) in its own
	// deterministic count between half and one and a half times that,
	// plus one short link per story; nothing is kept per page, so a web
	// much larger than a crawl costs nothing. The share of links to pages
	// already seen holds while a crawl covers at most about a tenth of
	// the web: a crawl of the whole web discovers every URL once, so over
	// it the share of new links falls to about 2 in 100.
	WorldSeeds World = "seeds"
)

// Fixed pages of every host of WorldSeeds, by index; stories follow.
const (
	seedsHome        = 0
	seedsFirstSect   = 1
	seedsFirstList   = seedsFirstSect + numSections
	seedsFirstStatic = seedsFirstList + numSections*listPages
	seedsAccount     = seedsFirstStatic + numStatic // /private/account: disallowed by most robots kinds
	seedsOpenData    = seedsAccount + 1             // /private/open-data: allowed again by "Allow: /private/open"
	seedsSearch      = seedsAccount + 2             // /cgi/search.cgi: disallowed by "/*.cgi$"
	seedsFirstStory  = seedsAccount + 3
	// seedsMinPages leaves every host at least 40 stories.
	seedsMinPages = seedsFirstStory + 40

	numSections = 12
	listPages   = 3 // /list?page=2..4&section=S per section
	numStatic   = 8
	topStories  = 10 // the "most read" sidebar: stories 0..9, on every page
	// storyFanout is the number of stories each story links that no
	// earlier page links ("more stories"): story k links stories
	// storyFanout*(k+1) ... storyFanout*(k+1)+storyFanout-1, so that the
	// stories form a tree below the home page's top stories.
	storyFanout = 10
	// relatedWindow bounds how far back a story's related links reach.
	relatedWindow = 400
	// teaserShort is the share of the story links of the home, section,
	// list and static pages that go through the story's short link.
	teaserShort = 0.15
	// listPool is how many of the first stories those pages draw from.
	listPool = 200
	// chromeLinks is the number of links every page of the world carries
	// whatever its kind: navigation (home, sections, sign-in, search), the
	// most-read sidebar, the footer (static pages, open data, three list
	// pages) and one mailto:.
	chromeLinks = 1 + numSections + 2 + topStories + numStatic + 1 + 3 + 1
)

var (
	sectionNames = [numSections]string{"world", "politics", "business", "tech", "science", "sport",
		"culture", "travel", "food", "health", "opinion", "video"}
	staticPaths = [numStatic]string{"/about/", "/contact/", "/privacy/", "/terms/", "/careers/",
		"/advertise/", "/help/", "/newsletter/"}
	seedsFixedPaths = func() map[string]int32 {
		m := map[string]int32{"/": seedsHome}
		for i, s := range sectionNames {
			m["/news/"+s+"/"] = int32(seedsFirstSect + i)
			for k := range listPages {
				m["/list?page="+strconv.Itoa(k+2)+"&section="+s] = int32(seedsFirstList + i*listPages + k)
			}
		}
		for i, p := range staticPaths {
			m[p] = int32(seedsFirstStatic + i)
		}
		m["/private/account"] = seedsAccount
		m["/private/open-data"] = seedsOpenData
		m["/cgi/search.cgi"] = seedsSearch
		return m
	}()
	seedsFixedByIndex = func() []string {
		out := make([]string, seedsFirstStory)
		for p, i := range seedsFixedPaths {
			out[i] = p
		}
		return out
	}()
)

// seedsWorld is what a WorldSeeds web keeps: the page count of each
// ordinary host. Everything else is computed from (Seed, host, page).
type seedsWorld struct {
	pages []int32 // by host: the fixed pages and the stories, short links not counted
}

func (w *Web) buildSeeds() {
	s := &seedsWorld{pages: make([]int32, w.nOrdinary)}
	for h := range w.nOrdinary {
		r := newRNG(w.cfg.Seed, streamHostSize, uint64(h), 0)
		s.pages[h] = int32(max(seedsMinPages, r.between(w.cfg.PagesPerHost/2, w.cfg.PagesPerHost*3/2)))
	}
	w.seeds = s
}

// stories is the number of stories of host h; URL indexes from
// pages[h] to pages[h]+stories-1 are their short links.
func (s *seedsWorld) stories(h int) int32 { return s.pages[h] - seedsFirstStory }

// urls is the number of URLs of host h: pages and short links.
func (s *seedsWorld) urls(h int) int32 { return s.pages[h] + s.stories(h) }

// The short codes of stories: a bijection of the story number, so that a
// code decodes without a table.
const (
	codeMul = 2654435761 // odd: invertible modulo 2^32
	codeLen = 7          // base-36 digits, zero-padded
)

var codeInv = func() uint32 {
	x := uint32(codeMul) // Newton's iteration for the inverse modulo 2^32
	for range 5 {
		x *= 2 - codeMul*x
	}
	return x
}()

func appendCode(dst []byte, story int32) []byte {
	v := uint64(uint32(story+1) * codeMul)
	var b [codeLen]byte
	for i := codeLen - 1; i >= 0; i-- {
		b[i] = "0123456789abcdefghijklmnopqrstuvwxyz"[v%36]
		v /= 36
	}
	return append(dst, b[:]...)
}

func decodeCode(code string) (int32, bool) {
	if len(code) != codeLen {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case c >= '0' && c <= '9':
			v = v*36 + uint64(c-'0')
		case c >= 'a' && c <= 'z':
			v = v*36 + uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	if v >= 1<<32 {
		return 0, false
	}
	return int32(uint32(v)*codeInv) - 1, true
}

// storyPath appends the canonical path+query of story k of host h: most
// are "/SECTION/YEAR/MONTH/slug-words-K.html", one in five
// "/story?id=K&lang=en&section=SECTION".
func (w *Web) storyPath(dst []byte, h int, k int32) []byte {
	r := newRNG(w.cfg.Seed, streamSeeds, uint64(h), uint64(k))
	sect := sectionNames[r.intn(numSections)]
	if r.intn(5) == 0 {
		dst = append(dst, "/story?id="...)
		dst = strconv.AppendInt(dst, int64(k), 10)
		dst = append(dst, "&lang=en&section="...)
		return append(dst, sect...)
	}
	dst = append(dst, '/')
	dst = append(dst, sect...)
	dst = append(dst, '/')
	dst = strconv.AppendInt(dst, int64(2015+r.intn(12)), 10)
	dst = append(dst, '/')
	m := 1 + r.intn(12)
	if m < 10 {
		dst = append(dst, '0')
	}
	dst = strconv.AppendInt(dst, int64(m), 10)
	dst = append(dst, '/')
	for i, n := 0, r.between(2, 5); i < n; i++ {
		dst = append(dst, w.text.words[r.intn(len(w.text.words))]...)
		dst = append(dst, '-')
	}
	dst = strconv.AppendInt(dst, int64(k), 10)
	return append(dst, ".html"...)
}

// seedsPath appends the canonical path+query of URL u of host h.
func (w *Web) seedsPath(dst []byte, h int, u int32) []byte {
	n := w.seeds.pages[h]
	switch {
	case u < seedsFirstStory:
		return append(dst, seedsFixedByIndex[u]...)
	case u < n:
		return w.storyPath(dst, h, u-seedsFirstStory)
	}
	return appendCode(append(dst, "/s/"...), u-n)
}

// seedsIndex maps a canonical path+query of host h to its URL index.
func (w *Web) seedsIndex(h int, pq string) (int32, bool) {
	if u, ok := seedsFixedPaths[pq]; ok {
		return u, true
	}
	s := w.seeds
	var k int64 = -1
	switch {
	case strings.HasPrefix(pq, "/s/"):
		story, ok := decodeCode(pq[3:])
		if !ok || story < 0 || story >= s.stories(h) {
			return 0, false
		}
		return s.pages[h] + story, true
	case strings.HasPrefix(pq, "/story?id="):
		id, _, _ := strings.Cut(pq[len("/story?id="):], "&")
		k, _ = strconv.ParseInt(id, 10, 32)
	case strings.HasSuffix(pq, ".html"):
		i := strings.LastIndexByte(pq, '-')
		if i < 0 {
			return 0, false
		}
		k, _ = strconv.ParseInt(pq[i+1:len(pq)-len(".html")], 10, 32)
	}
	if k < 0 || k >= int64(s.stories(h)) {
		return 0, false
	}
	var buf [128]byte
	if string(w.storyPath(buf[:0], h, int32(k))) != pq {
		return 0, false
	}
	return seedsFirstStory + int32(k), true
}

// seedsLink is one link of a WorldSeeds page.
type seedsLink struct {
	h, u int32 // target host and URL index; h == noHost for the mailto:
	v    uint32
	// content links are the page's own (stories, latest, related);
	// the rest is the chrome every page shares.
	content bool
}

// seedsPlan lists the links of HTML page u of host h, in page order:
// navigation, content, sidebar, footer.
func (w *Web) seedsPlan(h int, u int32, links []seedsLink) []seedsLink {
	s := w.seeds
	self := int32(h)
	stories := s.stories(h)
	r := newRNG(w.cfg.Seed, streamSeeds, uint64(h), uint64(1<<32)+uint64(u))
	add := func(t, to int32, content bool) {
		links = append(links, seedsLink{h: t, u: to, v: uint32(r.next()), content: content})
	}
	links = links[:0]
	add(self, seedsHome, false)
	for i := range int32(numSections) {
		add(self, seedsFirstSect+i, false)
	}
	add(self, seedsAccount, false)
	add(self, seedsSearch, false)

	total := r.between(w.cfg.MinLinks, w.cfg.MaxLinks)
	room := max(0, total-chromeLinks)
	story := func(k int32) int32 { return seedsFirstStory + k }
	short := func(k int32) int32 { return s.pages[h] + k }
	// earlier draws a story among the relatedWindow before k (k itself
	// when it is among the first).
	earlier := func(k int32) int32 {
		if k <= 0 {
			return int32(r.intn(int(min(topStories, stories))))
		}
		lo := max(0, k-relatedWindow)
		return lo + int32(r.intn(int(k-lo)))
	}
	switch {
	case u == seedsHome:
		// The latest stories after the most-read ones, about one in seven
		// through the short link of their share button.
		for k := int32(topStories); k < stories && room > 0; k++ {
			if r.chance(teaserShort) {
				add(self, short(k), true)
			} else {
				add(self, story(k), true)
			}
			room--
		}
	case u >= seedsFirstStory && u < s.pages[h]:
		k := u - seedsFirstStory
		add(self, short(k), true) // "share this story"
		room--
		for c := storyFanout * (k + 1); c < storyFanout*(k+2) && c < stories && room > 0; c++ {
			add(self, story(c), true)
			room--
		}
		for ; room > 0; room-- {
			switch x := r.float(); {
			case x < 0.02 && w.crossHostAllowed():
				add(int32(w.otherHost(&r, h)), seedsHome, true) // a partner site
			case x < 0.11:
				add(self, short(earlier(k)), true)
			default:
				add(self, story(earlier(k)), true)
			}
		}
	default:
		// Sections, lists and static pages link stories among the first.
		n := min(stories, listPool)
		for ; room > 0; room-- {
			if k := int32(r.intn(int(n))); r.chance(teaserShort) {
				add(self, short(k), true)
			} else {
				add(self, story(k), true)
			}
		}
	}
	for k := int32(0); k < min(topStories, stories); k++ {
		add(self, story(k), false)
	}
	for i := range int32(numStatic) {
		add(self, seedsFirstStatic+i, false)
	}
	add(self, seedsOpenData, false)
	for range 3 {
		add(self, seedsFirstList+int32(r.intn(numSections*listPages)), false)
	}
	links = append(links, seedsLink{h: noHost})
	return links
}

// Decorations of a WorldSeeds link, drawn from its v: the variants of one
// target are few (each parameter value comes from the target and a
// handful of choices), as on a real site where a story is shared through
// a few campaigns.
const (
	seedsDecoNone = iota
	seedsDecoNewsletter
	seedsDecoCampaign
	seedsDecoFbclid
	seedsDecoGclid
	seedsDecoSession
)

// seedsDeco is the tracking decoration of link l: about 40 % of content
// links and 8 % of the chrome carry one.
func seedsDeco(l seedsLink) int {
	x := mix64(uint64(l.v) | 3<<40)
	p := uint64(8)
	if l.content {
		p = 40
	}
	if x%100 >= p {
		return seedsDecoNone
	}
	return seedsDecoNewsletter + int(x>>8%5)
}

// appendSeedsHref appends the attribute value (HTML-escaped) of link l on
// page u of host h, whose directory is dir.
func (w *Web) appendSeedsHref(dst []byte, h int, dir string, l seedsLink) []byte {
	start := len(dst)
	dst = w.appendSeedsHrefEscaped(dst, h, dir, l)
	if w.cfg.RawAmpersands {
		dst = unescapeAmps(dst, start)
	}
	return dst
}

// appendSeedsHrefEscaped is appendSeedsHref with "&" written "&amp;".
func (w *Web) appendSeedsHrefEscaped(dst []byte, h int, dir string, l seedsLink) []byte {
	if l.h == noHost {
		return append(append(dst, "mailto:newsroom@"...), w.hosts[h].name...)
	}
	t := w.hosts[l.h]
	var pbuf [128]byte
	pq := w.seedsPath(pbuf[:0], int(l.h), l.u)
	path, query, _ := strings.Cut(string(pq), "?")
	x := mix64(uint64(l.v) | 5<<40)
	dst = appendLinkForm(dst, t, int(l.h) != h, x%100, dir, path)
	var ps [4]string
	params := appendParams(ps[:0], query, x>>8)
	var tr [48]byte
	extra := tr[:0]
	choice := uint64(l.v) % 2
	tgt := mix64(uint64(l.h)<<32 | uint64(l.u))
	switch seedsDeco(l) {
	case seedsDecoNewsletter:
		extra = append(extra, [...]string{"utm_source=newsletter&amp;utm_medium=email",
			"utm_medium=social&amp;utm_source=twitter"}[choice]...)
	case seedsDecoCampaign:
		extra = append(extra, "utm_campaign="...)
		extra = append(extra, sectionNames[tgt%numSections]...)
		extra = append(extra, "&amp;utm_source=homepage"...)
	case seedsDecoFbclid:
		extra = appendHex(append(extra, "fbclid=IwAR"...), mix64(tgt^choice), 12, false)
	case seedsDecoGclid:
		extra = appendHex(append(extra, "gclid=Cj0KCQ"...), mix64(tgt^choice^7), 12, false)
	case seedsDecoSession:
		extra = appendHex(append(extra, "sid="...), mix64(0x5e55+uint64(h)<<8^choice), 16, false)
	}
	dst = appendQuery(dst, params, extra, x>>20&1 == 0)
	if x>>24%10 == 0 {
		dst = append(dst, "#comments"...)
	}
	return dst
}

// The link spellings WorldSeeds and WorldHeavy share follow. A link's
// bits decide them, so that a page is the same at every request.

// appendLinkForm appends path, a canonical path of host t, in a form that
// form (0-99) draws: absolute for 15 in 100 and whenever abs, then
// upper-case scheme and authority (5), protocol-relative (8), relative to
// the directory dir (12), host-relative for the rest.
func appendLinkForm(dst []byte, t *host, abs bool, form uint64, dir, path string) []byte {
	switch {
	case abs || form < 15:
		dst = append(append(dst, "http://"...), t.authority...)
	case form < 20:
		dst = append(append(dst, "HTTP://"...), t.upperAuthority...)
	case form < 28:
		dst = append(append(dst, "//"...), t.authority...)
	case form < 40:
		return appendRelative(dst, dir, path, false)
	}
	return append(dst, path...)
}

// appendParams appends the parameters of query, a canonical and so
// sorted query, to params: in their order when bits is even, else (one
// link in two) in an order that the rest of bits draws and that is never
// sorted, so that the link spells its query in another order.
func appendParams(params []string, query string, bits uint64) []string {
	if query == "" {
		return params
	}
	start := len(params)
	for p := range strings.SplitSeq(query, "&") {
		params = append(params, p)
	}
	if bits&1 == 0 {
		return params
	}
	ps := params[start:]
	perm := bits >> 1
	for i := len(ps) - 1; i > 0; i-- {
		j := int(perm % uint64(i+1))
		perm /= uint64(i + 1)
		ps[i], ps[j] = ps[j], ps[i]
	}
	if slices.IsSorted(ps) {
		ps[0], ps[len(ps)-1] = ps[len(ps)-1], ps[0]
	}
	return params
}

// appendQuery appends the query of a link, "&" written "&amp;": params,
// then extra (parameters already escaped: tracking, a session), or extra
// first when extraFirst.
func appendQuery(dst []byte, params []string, extra []byte, extraFirst bool) []byte {
	sep := "?"
	if len(extra) > 0 && extraFirst {
		dst = append(append(dst, sep...), extra...)
		sep, extra = "&amp;", nil
	}
	for _, p := range params {
		dst = append(append(dst, sep...), p...)
		sep = "&amp;"
	}
	if len(extra) > 0 {
		dst = append(append(dst, sep...), extra...)
	}
	return dst
}

// unescapeAmps rewrites "&amp;" as "&" in dst[start:].
func unescapeAmps(dst []byte, start int) []byte {
	out := start
	for i := start; i < len(dst); i++ {
		dst[out] = dst[i]
		out++
		if dst[i] == '&' && strings.HasPrefix(string(dst[i:]), "&amp;") {
			i += len("amp;")
		}
	}
	return dst[:out]
}

const seedsHead = `<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/static/css/main.4f2a9c.css">
<link rel="icon" href="/favicon.ico">
<link rel="preconnect" href="https://cdn.example.invalid">
<script async src="/static/js/analytics.js"></script>
<script>
window.dataLayer = window.dataLayer || [];
function gtag(){dataLayer.push(arguments);}
gtag('js', new Date());
gtag('config', 'G-SYNTHWEB1', {'anonymize_ip': true, 'send_page_view': true});
(function(w,d,s){var f=d.getElementsByTagName(s)[0],j=d.createElement(s);j.async=true;
j.src='/static/js/consent.js?v=3';f.parentNode.insertBefore(j,f);})(window,document,'script');
document.documentElement.className = document.documentElement.className.replace('no-js', 'js');
</script>
<style>
body{margin:0;font:16px/1.5 Georgia,serif;color:#222;background:#fff}
.site-nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap}
.site-nav li{margin:0 .75em}.site-nav a{color:#036;text-decoration:none}
main{display:grid;grid-template-columns:1fr 18em;gap:2em;max-width:70em;margin:auto}
.sidebar ol{padding-left:1.2em}.footer-links{columns:3}
</style>
`

// appendNewsHead appends the head of a news page of host hst, drawn
// from r, up to seedsHead: a title of words and the host's name, a
// description, og:title, meta (more tags), the canonical link of
// self (a canonical path+query). dst[title:titleEnd] is the title's
// words, which the page repeats.
func (w *Web) appendNewsHead(dst []byte, r *rng, hst *host, self, meta string) (out []byte, title, titleEnd int) {
	dst = append(dst, "<!DOCTYPE html>\n<html lang=\"en\" class=\"no-js\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	title = len(dst)
	dst = w.text.appendWords(dst, r, r.between(4, 9))
	titleEnd = len(dst)
	dst = append(dst, " | "...)
	dst = append(dst, hst.name...)
	dst = append(dst, "</title>\n<meta name=\"description\" content=\""...)
	dst = w.text.appendWords(dst, r, r.between(12, 24))
	dst = append(dst, "\">\n<meta property=\"og:title\" content=\""...)
	dst = append(dst, dst[title:titleEnd]...)
	dst = append(dst, "\">\n"...)
	dst = append(dst, meta...)
	dst = append(dst, "<link rel=\"canonical\" href=\"http://"...)
	dst = append(dst, hst.authority...)
	dst = appendEscapedPath(dst, self)
	dst = append(dst, "\">\n"...)
	return append(dst, seedsHead...), title, titleEnd
}

// renderSeeds appends the body of HTML page u of host h.
func (w *Web) renderSeeds(dst []byte, h int, u int32, links []seedsLink) []byte {
	r := newRNG(w.cfg.Seed, streamSeeds, uint64(h), uint64(2<<32)+uint64(u))
	size := r.between(w.cfg.MinPageBytes, w.cfg.MaxPageBytes)
	start := len(dst)
	// Two passes: the page without prose tells how much prose fills it to
	// its size.
	paras := 8
	for _, l := range links {
		if l.content {
			paras++
		}
	}
	paras /= 4
	probe := w.renderSeedsOnce(dst, h, u, links, r, 0, paras)
	fill := max(0, size-(len(probe)-start))
	return w.renderSeedsOnce(probe[:start], h, u, links, r, fill, paras)
}

// renderSeedsOnce renders the page with fill bytes of prose in paras
// paragraphs; r is passed by value so that both passes draw alike.
func (w *Web) renderSeedsOnce(dst []byte, h int, u int32, links []seedsLink, r rng, fill, paras int) []byte {
	hst := w.hosts[h]
	var pbuf [128]byte
	self := w.seedsPath(pbuf[:0], h, u)
	docPath, _, _ := strings.Cut(string(self), "?")
	dir := dirOf(docPath)
	pr := newRNG(w.cfg.Seed, streamSeeds, uint64(h), uint64(3<<32)+uint64(u))

	dst, title, titleEnd := w.appendNewsHead(dst, &r, hst, string(self), "<meta property=\"og:type\" content=\"article\">\n")
	dst = append(dst, "<script type=\"application/ld+json\">{\"@context\":\"https://schema.org\",\"@type\":\"NewsArticle\",\"headline\":\""...)
	dst = append(dst, dst[title:titleEnd]...)
	dst = append(dst, "\",\"datePublished\":\""...)
	dst = strconv.AppendInt(dst, int64(2015+r.intn(12)), 10)
	dst = append(dst, "-0"...)
	dst = strconv.AppendInt(dst, int64(1+r.intn(9)), 10)
	dst = append(dst, "-1"...)
	dst = strconv.AppendInt(dst, int64(r.intn(10)), 10)
	dst = append(dst, "\",\"publisher\":{\"@type\":\"Organization\",\"name\":\""...)
	dst = append(dst, hst.name...)
	dst = append(dst, "\"}}</script>\n</head>\n<body class=\"page\">\n<header class=\"masthead\">\n<nav class=\"site-nav\" aria-label=\"Sections\"><ul>\n"...)

	anchor := func(dst []byte, l seedsLink, class string, words int) []byte {
		dst = append(dst, `<a class="`...)
		dst = append(dst, class...)
		dst = append(dst, `" href="`...)
		dst = w.appendSeedsHref(dst, h, dir, l)
		dst = append(dst, `">`...)
		if l.h == noHost {
			dst = append(dst, "Write to us"...)
		} else {
			ar := newRNG(w.cfg.Seed, streamSeeds, uint64(l.h), uint64(4<<32)+uint64(l.u))
			dst = w.text.appendWords(dst, &ar, words)
		}
		return append(dst, "</a>"...)
	}
	i := 0
	for ; i < len(links) && !links[i].content && i < 1+numSections+2; i++ {
		dst = append(dst, "<li>"...)
		dst = anchor(dst, links[i], "nav-link", 1)
		dst = append(dst, "</li>\n"...)
	}
	dst = append(dst, "</ul></nav>\n</header>\n<main>\n<article class=\"story\">\n<h1>"...)
	dst = w.text.appendWords(dst, &pr, pr.between(5, 10))
	dst = append(dst, "</h1>\n<p class=\"byline\">By "...)
	dst = w.text.appendWords(dst, &pr, 2)
	dst = append(dst, "</p>\n"...)
	var content []seedsLink
	for ; i < len(links) && links[i].content; i++ {
		content = append(content, links[i])
	}
	per := 0
	if paras > 0 {
		per = fill / paras
	}
	written := 0
	ci := 0
	for p := range paras {
		dst = append(dst, "<p>"...)
		n := per
		if p == paras-1 {
			n = fill - written
		}
		// Prose, with a few of the content links inline.
		half := n / 2
		dst = w.text.appendExact(dst, &pr, half)
		for range 2 {
			if ci < len(content) {
				dst = append(dst, ' ')
				dst = anchor(dst, content[ci], "inline", 2)
				dst = append(dst, ' ')
				ci++
			}
		}
		dst = w.text.appendExact(dst, &pr, n-half)
		written += n
		dst = append(dst, "</p>\n"...)
	}
	if ci < len(content) {
		dst = append(dst, "<aside class=\"more\"><h2>More stories</h2><ul>\n"...)
		for ; ci < len(content); ci++ {
			dst = append(dst, "<li>"...)
			dst = anchor(dst, content[ci], "more-link", 3)
			dst = append(dst, "</li>\n"...)
		}
		dst = append(dst, "</ul></aside>\n"...)
	}
	dst = append(dst, "</article>\n<aside class=\"sidebar\"><h2>Most read</h2><ol>\n"...)
	for ; i < len(links) && links[i].h != noHost && links[i].u >= seedsFirstStory; i++ {
		dst = append(dst, "<li>"...)
		dst = anchor(dst, links[i], "most-read", 4)
		dst = append(dst, "</li>\n"...)
	}
	dst = append(dst, "</ol></aside>\n</main>\n<footer class=\"site-footer\"><ul class=\"footer-links\">\n"...)
	for ; i < len(links); i++ {
		dst = append(dst, "<li>"...)
		dst = anchor(dst, links[i], "footer-link", 1)
		dst = append(dst, "</li>\n"...)
	}
	dst = append(dst, "</ul>\n<p class=\"copyright\">&copy; 2026 "...)
	dst = append(dst, hst.name...)
	return append(dst, "</p></footer>\n<script src=\"/static/js/app.js\" defer></script>\n</body>\n</html>\n"...)
}

// seedsBuf is the scratch of one served page, pooled in Web.seedsBufs.
type seedsBuf struct {
	links []seedsLink
	body  []byte
}

// serveSeeds answers a request for a page or short link of a WorldSeeds
// host; robots.txt has been answered already.
func (w *Web) serveSeeds(rw *logWriter, r *http.Request, h *host) {
	if r.URL.Path == sitemapPath {
		writeBody(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundBody)
		return
	}
	u, ok := w.seedsIndex(h.idx, canonicalPath(r.URL.EscapedPath(), r.URL.RawQuery))
	if !ok {
		writeBody(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundBody)
		return
	}
	if n := w.seeds.pages[h.idx]; u >= n {
		story := seedsFirstStory + u - n
		var buf [160]byte
		loc := w.seedsPath(buf[:0], h.idx, story)
		status := http.StatusMovedPermanently
		if mix64(uint64(u)^uint64(h.idx)<<32)%8 == 0 {
			status = http.StatusFound
		}
		if u%2 == 0 {
			loc = append([]byte("http://"+h.authority), loc...)
		}
		redirect(rw, string(loc), status)
		return
	}
	b := w.seedsBufs.Get().(*seedsBuf)
	b.links = w.seedsPlan(h.idx, u, b.links)
	b.body = w.renderSeeds(b.body[:0], h.idx, u, b.links)
	writeBody(rw, r, http.StatusOK, "text/html; charset=utf-8", b.body)
	w.seedsBufs.Put(b)
}

// seedsURL returns the canonical URL of URL u of host h.
func (w *Web) seedsURL(h int, u int32) string {
	return "http://" + w.hosts[h].authority + string(w.seedsPath(nil, h, u))
}

// seedsInfo assembles the PageInfo of URL u of host h.
func (w *Web) seedsInfo(h int, u int32) PageInfo {
	hst := w.hosts[h]
	var buf [160]byte
	url := func(t int, v int32) string {
		return "http://" + w.hosts[t].authority + string(w.seedsPath(buf[:0], t, v))
	}
	pi := PageInfo{URL: url(h, u), Status: http.StatusOK, ContentType: "text/html; charset=utf-8", Role: "page"}
	switch n := w.seeds.pages[h]; {
	case u >= n:
		pi.Status = http.StatusMovedPermanently
		if mix64(uint64(u)^uint64(h)<<32)%8 == 0 {
			pi.Status = http.StatusFound
		}
		pi.Role, pi.ContentType = "redirect", ""
		pi.RedirectTo = url(h, seedsFirstStory+u-n)
	case u == seedsHome:
		pi.Role = "home"
	case u >= seedsFirstStory:
		pi.Role = "article"
	}
	var path [160]byte
	pi.Disallowed = hst.disallowAll || !allowed(hst.rules, string(w.seedsPath(path[:0], h, u)))
	// Every URL is linked from an allowed page of its host (the stories
	// form a tree below the home page, the rest is in every page's
	// chrome), unless robots.txt forbids the whole host: then only its
	// home page, a seed and the partner link of other hosts, is.
	pi.Reachable = !hst.disallowAll || u == seedsHome
	if pi.Role != "redirect" {
		for _, l := range w.seedsPlan(h, u, nil) {
			if l.h != noHost {
				pi.Links = append(pi.Links, url(int(l.h), l.u))
			}
		}
		slices.Sort(pi.Links)
		pi.Links = slices.Compact(pi.Links)
	}
	return pi
}

// URLCount is the number of URLs of the ordinary hosts, len(AllPages())
// without assembling them.
func (w *Web) URLCount() int {
	if w.order != nil {
		return len(w.order.paths)
	}
	n := 0
	for h := range w.nOrdinary {
		if w.seeds != nil {
			n += int(w.seeds.urls(h))
		} else if w.heavy != nil {
			n += int(w.heavyURLs(h))
		} else {
			n += len(w.hosts[h].pages)
		}
	}
	return n
}
