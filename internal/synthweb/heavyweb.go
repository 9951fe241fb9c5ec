package synthweb

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// WorldHeavy is shaped like the bench web of issue 37, a copy of a real
// one's costs: every ordinary host has exactly PagesPerHost pages (zero
// means 200, at least heavyMinPages) of 20-60 KB with 40-80 links each
// (the page size and link bounds), CrossHostFraction of them (zero means
// 0.3) to pages of other hosts. About 85 % of pages also answer at a
// second URL that redirects to them: a short link (/s/CODE, 301, or 302
// for one in eight), a click tracker (/r/CODE, 302, always linked with
// utm_ parameters), the page's directory path without its trailing slash
// (301), or the page on the host's "www." name (301 to the bare name),
// and every link to such a page goes through that URL, as on a site that
// links its pages that way throughout: most pages are first reached
// through a redirect, and a crawl of the whole web makes about 0.85
// redirects a page. Links spell their URL in many ways: absolute,
// host-relative, path-relative, protocol-relative, upper-case scheme and
// host, a reordered query, and about a third with tracking or session
// parameters (utm_*, fbclid, gclid, sid), all of which canonicalise to
// one URL.
//
// Pages form a tree below each home page (page k links pages
// heavyFanout×k+1 ... heavyFanout×k+heavyFanout), so that every page is
// reachable from the seeds; the other links are drawn uniformly. Nothing
// is kept per page: paths, links, redirects and bodies are computed from
// (Seed, host, page), so a web of a million pages costs what one of a
// thousand does. Of the other fields, WorldHeavy reads Seed, Hosts,
// PagesPerHost, the page size and link bounds (MinLinks at least
// heavyChrome+heavyFanout), CrossHostFraction (negative: none),
// MaxLatency, CrawlDelay, RobotsKinds, the hostile hosts, Domain,
// IPPrefix, IPAuthorities (then no "www." redirects: short links instead)
// and RawAmpersands; it has no live pages and answers /sitemap.xml 404.
const WorldHeavy World = "heavy"

// The fixed pages of every WorldHeavy host; items follow.
const (
	heavyHome      = 0
	heavyFirstSect = 1
	heavyFirstItem = heavyFirstSect + numSections
	heavyMinPages  = heavyFirstItem + 1
	// heavyFanout is the number of pages each page links below it in the
	// host's tree.
	heavyFanout = 6
	// heavyChrome is the navigation every page carries: home and sections.
	heavyChrome = 1 + numSections
)

// The redirecting URL of a WorldHeavy page, if it has one.
const (
	aliasNone    = iota
	aliasNoSlash // the directory path without its "/": 301
	aliasShort   // /s/CODE: 301, one in eight 302
	aliasTracker // /r/CODE, linked with utm_ parameters: 302
	aliasWWW     // the page on "www." + the host's name: 301
)

// heavyWorld is what a WorldHeavy web keeps: the page count of every
// host, and with Config.Prerendered every page's body (bodies[h][u]).
type heavyWorld struct {
	pages  int32
	bodies [][][]byte
}

// prerenderHeavy renders every page of every ordinary host once.
func (w *Web) prerenderHeavy() {
	w.heavy.bodies = make([][][]byte, w.nOrdinary)
	var links []heavyLink
	for h := range w.nOrdinary {
		w.heavy.bodies[h] = make([][]byte, w.heavy.pages)
		for u := range w.heavy.pages {
			links = w.heavyPlan(h, u, links)
			w.heavy.bodies[h][u] = w.renderHeavy(nil, h, u, links)
		}
	}
}

func (w *Web) buildHeavy() {
	w.heavy = &heavyWorld{pages: int32(max(heavyMinPages, w.cfg.PagesPerHost))}
}

// heavyForm is the shape of page u's path: 0 "/article/slug-u/", 1
// "/item?cat=C&id=u&lang=en", 2 "/archive/YYYY/MM/slug-u.html"; the home
// and sections are directories.
func (w *Web) heavyForm(h int, u int32) (form int, r rng) {
	r = newRNG(w.cfg.Seed, streamHeavy, uint64(h), uint64(u))
	if u < heavyFirstItem {
		return 0, r
	}
	switch x := r.intn(10); {
	case x < 5:
		return 0, r
	case x < 8:
		return 1, r
	}
	return 2, r
}

// heavyPath appends the canonical path+query of page u of host h.
func (w *Web) heavyPath(dst []byte, h int, u int32) []byte {
	switch {
	case u == heavyHome:
		return append(dst, '/')
	case u < heavyFirstItem:
		return append(append(append(dst, "/section/"...), sectionNames[u-heavyFirstSect]...), '/')
	}
	form, r := w.heavyForm(h, u)
	words := func(dst []byte, n int) []byte {
		for range n {
			dst = append(dst, w.text.words[r.intn(len(w.text.words))]...)
			dst = append(dst, '-')
		}
		return strconv.AppendInt(dst, int64(u), 10)
	}
	switch form {
	case 0:
		return append(words(append(dst, "/article/"...), r.between(2, 4)), '/')
	case 1:
		dst = append(append(dst, "/item?cat="...), sectionNames[r.intn(numSections)]...)
		dst = strconv.AppendInt(append(dst, "&id="...), int64(u), 10)
		return append(dst, "&lang=en"...)
	}
	dst = strconv.AppendInt(append(dst, "/archive/"...), int64(2015+r.intn(12)), 10)
	m := 1 + r.intn(12)
	dst = append(dst, '/', byte('0'+m/10), byte('0'+m%10), '/')
	return append(words(dst, r.between(2, 3)), ".html"...)
}

// heavyAlias is the kind of the redirecting URL of page u of host h.
func (w *Web) heavyAlias(h int, u int32) int {
	www := aliasWWW
	if w.cfg.IPAuthorities {
		www = aliasShort // an address has no "www." name
	}
	if u == heavyHome {
		return www
	}
	r := newRNG(w.cfg.Seed, streamHeavy, uint64(h), 1<<32+uint64(u))
	x := r.intn(100)
	form, _ := w.heavyForm(h, u)
	switch {
	case x < 15:
		return aliasNone
	case form == 0 && x < 45:
		return aliasNoSlash
	case x < 60:
		return aliasShort
	case x < 80:
		return aliasTracker
	}
	return www
}

// heavyURL returns the canonical URL of URL u of host h: page u, or for u
// at or past the host's page count the redirecting URL of page u-pages.
func (w *Web) heavyURL(h int, u int32) string {
	n := w.heavy.pages
	auth := w.hosts[h].authority
	var buf [160]byte
	if u < n {
		return "http://" + auth + string(w.heavyPath(buf[:0], h, u))
	}
	k := u - n
	switch w.heavyAlias(h, k) {
	case aliasNoSlash:
		p := w.heavyPath(buf[:0], h, k)
		return "http://" + auth + string(p[:len(p)-1])
	case aliasShort:
		return "http://" + auth + string(appendCode(append(buf[:0], "/s/"...), k))
	case aliasTracker:
		return "http://" + auth + string(appendCode(append(buf[:0], "/r/"...), k))
	}
	return "http://www." + auth + string(w.heavyPath(buf[:0], h, k))
}

// heavyIndex maps the canonical path+query of a request to host h (on
// its "www." name if www) to its URL index.
func (w *Web) heavyIndex(h int, pq string, www bool) (int32, bool) {
	n := w.heavy.pages
	page := func(pq string) (int32, bool) {
		var k int64 = -1
		switch {
		case pq == "/":
			return heavyHome, true
		case strings.HasPrefix(pq, "/section/"):
			i := slices.Index(sectionNames[:], strings.TrimSuffix(pq[len("/section/"):], "/"))
			k = int64(heavyFirstSect + i)
			if i < 0 {
				k = -1
			}
		case strings.HasPrefix(pq, "/item?"):
			_, q, _ := strings.Cut(pq, "&id=")
			id, _, _ := strings.Cut(q, "&")
			k, _ = strconv.ParseInt(id, 10, 32)
		case strings.HasSuffix(pq, "/") || strings.HasSuffix(pq, ".html"):
			s := strings.TrimSuffix(strings.TrimSuffix(pq, "/"), ".html")
			if i := strings.LastIndexByte(s, '-'); i >= 0 {
				k, _ = strconv.ParseInt(s[i+1:], 10, 32)
			}
		}
		if k < 0 || k >= int64(n) {
			return 0, false
		}
		var buf [160]byte
		return int32(k), string(w.heavyPath(buf[:0], h, int32(k))) == pq
	}
	alias := func(k int32, kind int) (int32, bool) { return n + k, w.heavyAlias(h, k) == kind }
	if www {
		if k, ok := page(pq); ok {
			return alias(k, aliasWWW)
		}
		return 0, false
	}
	for _, c := range [...]struct {
		prefix string
		kind   int
	}{{"/s/", aliasShort}, {"/r/", aliasTracker}} {
		if code, ok := strings.CutPrefix(pq, c.prefix); ok {
			k, ok := decodeCode(code)
			if !ok || k < 0 || k >= n {
				return 0, false
			}
			return alias(k, c.kind)
		}
	}
	if k, ok := page(pq); ok {
		return k, true
	}
	if k, ok := page(pq + "/"); ok && !strings.Contains(pq, "?") {
		return alias(k, aliasNoSlash)
	}
	return 0, false
}

// heavyRedirect is the status and Location of redirecting URL n+k of
// host h.
func (w *Web) heavyRedirect(h int, k int32) (int, string) {
	var buf [160]byte
	path := string(w.heavyPath(buf[:0], h, k))
	abs := "http://" + w.hosts[h].authority + path
	switch w.heavyAlias(h, k) {
	case aliasNoSlash:
		return http.StatusMovedPermanently, path
	case aliasShort:
		status := http.StatusMovedPermanently
		if mix64(uint64(k)^uint64(h)<<32)%8 == 0 {
			status = http.StatusFound
		}
		if k%2 == 0 {
			return status, path
		}
		return status, abs
	case aliasTracker:
		return http.StatusFound, abs
	}
	return http.StatusMovedPermanently, abs
}

// heavyLink is one link of a WorldHeavy page.
type heavyLink struct {
	h, u int32  // target host and page
	v    uint64 // the draws of its spelling
}

// heavyPlan lists the links of page u of host h in page order: the
// navigation, the pages below u, links within the host, links to others.
func (w *Web) heavyPlan(h int, u int32, links []heavyLink) []heavyLink {
	n := w.heavy.pages
	self := int32(h)
	r := newRNG(w.cfg.Seed, streamHeavy, uint64(h), 2<<32+uint64(u))
	add := func(t, to int32) { links = append(links, heavyLink{h: t, u: to, v: r.next()}) }
	links = links[:0]
	for i := range int32(heavyChrome) {
		add(self, heavyHome+i)
	}
	total := r.between(w.cfg.MinLinks, w.cfg.MaxLinks)
	cross := 0
	if w.crossHostAllowed() {
		cross = min(int(math.Round(w.cfg.CrossHostFraction*float64(total))), total-heavyChrome-heavyFanout)
	}
	for c := heavyFanout*u + 1; c <= heavyFanout*u+heavyFanout && c < n; c++ {
		add(self, c)
	}
	for len(links) < total-cross {
		add(self, int32(r.intn(int(n))))
	}
	for range cross {
		add(int32(w.otherHost(&r, h)), int32(r.intn(int(n))))
	}
	return links
}

// heavyLinkURL is the canonical URL link l leads to: its target's
// redirecting URL if it has one, as every link to such a page goes
// through it, like a site that links its pages without their trailing
// slash, by their short links or through a click tracker everywhere.
func (w *Web) heavyLinkURL(l heavyLink) string {
	if w.heavyAlias(int(l.h), l.u) != aliasNone {
		return w.heavyURL(int(l.h), w.heavy.pages+l.u)
	}
	return w.heavyURL(int(l.h), l.u)
}

// appendHeavyHref appends the attribute value (HTML-escaped unless
// RawAmpersands) of link l on a page of host h whose directory is dir.
func (w *Web) appendHeavyHref(dst []byte, h int, dir string, l heavyLink) []byte {
	start := len(dst)
	dst = w.appendHeavyHrefEscaped(dst, h, dir, l)
	if w.cfg.RawAmpersands {
		dst = unescapeAmps(dst, start)
	}
	return dst
}

func (w *Web) appendHeavyHrefEscaped(dst []byte, h int, dir string, l heavyLink) []byte {
	t := w.hosts[l.h]
	x := mix64(l.v)
	var pbuf [160]byte
	pq := w.heavyPath(pbuf[:0], int(l.h), l.u)
	www, tracker := false, false
	switch w.heavyAlias(int(l.h), l.u) {
	case aliasNoSlash:
		pq = pq[:len(pq)-1]
	case aliasShort:
		pq = appendCode(append(pbuf[:0], "/s/"...), l.u)
	case aliasTracker:
		pq = appendCode(append(pbuf[:0], "/r/"...), l.u)
		tracker = true
	case aliasWWW:
		www = true
	}
	path, query, _ := strings.Cut(string(pq), "?")
	if form := x % 100; www {
		// A relative link cannot name the "www." host: absolute, or
		// upper-case (10 in 100) or protocol-relative (15).
		switch {
		case form < 10:
			dst = append(append(dst, "HTTP://WWW."...), t.upperAuthority...)
		case form < 25:
			dst = append(append(dst, "//www."...), t.authority...)
		default:
			dst = append(append(dst, "http://www."...), t.authority...)
		}
		dst = append(dst, path...)
	} else {
		dst = appendLinkForm(dst, t, int(l.h) != h, form, dir, path)
	}
	var ps [3]string
	params := appendParams(ps[:0], query, x>>8)
	// About a third of links, and every link through a click tracker,
	// carry tracking or session parameters, their values few for each
	// target, as a page is shared through a few campaigns.
	var tr [64]byte
	extra := tr[:0]
	choice := x >> 30 % 3
	tgt := mix64(uint64(l.h)<<32 | uint64(l.u))
	if tracker {
		extra = append(extra, [...]string{"utm_source=newsletter&amp;utm_medium=email",
			"utm_medium=social&amp;utm_source=twitter", "utm_source=partner&amp;utm_medium=referral"}[choice]...)
	} else if x>>12%100 < 35 {
		switch x >> 20 % 5 {
		case 0:
			extra = append(extra, [...]string{"utm_source=newsletter&amp;utm_medium=email",
				"utm_medium=social&amp;utm_source=twitter", "utm_source=rss"}[choice]...)
		case 1:
			extra = append(extra, "utm_campaign="...)
			extra = append(extra, sectionNames[tgt%numSections]...)
			extra = append(extra, "&amp;utm_source=homepage"...)
		case 2:
			extra = appendHex(append(extra, "fbclid=IwAR"...), mix64(tgt^choice), 16, false)
		case 3:
			extra = appendHex(append(extra, "gclid=Cj0KCQ"...), mix64(tgt^choice^7), 16, false)
		default:
			extra = appendHex(append(extra, "sid="...), mix64(0x5e55+uint64(h)<<8^choice), 16, false)
		}
	}
	dst = appendQuery(dst, params, extra, x>>40&1 == 0)
	if x>>44%10 == 0 {
		dst = append(dst, "#comments"...)
	}
	return dst
}

// renderHeavy appends the body of page u of host h.
func (w *Web) renderHeavy(dst []byte, h int, u int32, links []heavyLink) []byte {
	r := newRNG(w.cfg.Seed, streamHeavy, uint64(h), 3<<32+uint64(u))
	size := r.between(w.cfg.MinPageBytes, w.cfg.MaxPageBytes)
	start := len(dst)
	// Two passes: the page without prose tells how much prose fills it to
	// its size.
	probe := w.renderHeavyOnce(dst, h, u, links, 0)
	fill := max(0, size-(len(probe)-start))
	return w.renderHeavyOnce(probe[:start], h, u, links, fill)
}

// heavyParas is the number of paragraphs of prose of every page.
const heavyParas = 12

// renderHeavyOnce renders page u of host h with fill bytes of prose.
func (w *Web) renderHeavyOnce(dst []byte, h int, u int32, links []heavyLink, fill int) []byte {
	hst := w.hosts[h]
	var pbuf [160]byte
	self := w.heavyPath(pbuf[:0], h, u)
	docPath, _, _ := strings.Cut(string(self), "?")
	dir := dirOf(docPath)
	r := newRNG(w.cfg.Seed, streamHeavy, uint64(h), 4<<32+uint64(u))

	dst, title, titleEnd := w.appendNewsHead(dst, &r, hst, string(self), "")
	dst = append(dst, "</head>\n<body class=\"page\">\n<header class=\"masthead\">\n<nav class=\"site-nav\" aria-label=\"Sections\"><ul>\n"...)

	anchor := func(dst []byte, l heavyLink, class string, words int) []byte {
		dst = append(dst, `<a class="`...)
		dst = append(dst, class...)
		dst = append(dst, `" href="`...)
		dst = w.appendHeavyHref(dst, h, dir, l)
		dst = append(dst, `">`...)
		ar := newRNG(w.cfg.Seed, streamHeavy, uint64(l.h), 5<<32+uint64(l.u))
		dst = w.text.appendWords(dst, &ar, words)
		return append(dst, "</a>"...)
	}
	for _, l := range links[:heavyChrome] {
		dst = append(dst, "<li>"...)
		dst = anchor(dst, l, "nav-link", 1)
		dst = append(dst, "</li>\n"...)
	}
	dst = append(dst, "</ul></nav>\n</header>\n<main>\n<article class=\"story\">\n<h1>"...)
	dst = append(dst, dst[title:titleEnd]...)
	dst = append(dst, "</h1>\n<p class=\"byline\">By "...)
	dst = w.text.appendWords(dst, &r, 2)
	dst = append(dst, "</p>\n"...)
	content := links[heavyChrome:]
	ci := 0
	written := 0
	for p := range heavyParas {
		n := fill / heavyParas
		if p == heavyParas-1 {
			n = fill - written
		}
		written += n
		dst = append(dst, "<p>"...)
		// Prose with a few of the content links inline.
		dst = w.text.appendExact(dst, &r, n/2)
		for range 2 {
			if ci < len(content) && content[ci].h == int32(h) {
				dst = append(dst, ' ')
				dst = anchor(dst, content[ci], "inline", 2)
				dst = append(dst, ' ')
				ci++
			}
		}
		dst = w.text.appendExact(dst, &r, n-n/2)
		dst = append(dst, "</p>\n"...)
	}
	dst = append(dst, "</article>\n<aside class=\"related\"><h2>Related</h2><ul>\n"...)
	for ; ci < len(content) && content[ci].h == int32(h); ci++ {
		dst = append(dst, "<li>"...)
		dst = anchor(dst, content[ci], "related-link", 3)
		dst = append(dst, "</li>\n"...)
	}
	dst = append(dst, "</ul></aside>\n</main>\n<footer class=\"site-footer\"><h2>Around the web</h2><ul class=\"footer-links\">\n"...)
	for ; ci < len(content); ci++ {
		dst = append(dst, "<li>"...)
		dst = anchor(dst, content[ci], "partner-link", 3)
		dst = append(dst, "</li>\n"...)
	}
	dst = append(dst, "</ul>\n<p class=\"copyright\">&copy; 2026 "...)
	dst = append(dst, hst.name...)
	return append(dst, "</p></footer>\n<script src=\"/static/js/app.js\" defer></script>\n</body>\n</html>\n"...)
}

// serveHeavy answers a request of a WorldHeavy host, on its name or its
// "www." name; robots.txt has been answered already.
func (w *Web) serveHeavy(rw *logWriter, r *http.Request, h *host) {
	if r.URL.Path == sitemapPath {
		writeBody(rw, r, http.StatusNotFound, htmlUTF8, notFoundBody)
		return
	}
	www := !w.cfg.IPAuthorities && strings.HasPrefix(strings.ToLower(r.Host), "www.")
	u, ok := w.heavyIndex(h.idx, canonicalPath(r.URL.EscapedPath(), r.URL.RawQuery), www)
	if !ok {
		writeBody(rw, r, http.StatusNotFound, htmlUTF8, notFoundBody)
		return
	}
	if n := w.heavy.pages; u >= n {
		status, loc := w.heavyRedirect(h.idx, u-n)
		redirect(rw, loc, status)
		return
	}
	if w.heavy.bodies != nil {
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.heavy.bodies[h.idx][u])
		return
	}
	b := w.heavyBufs.Get().(*heavyBuf)
	b.links = w.heavyPlan(h.idx, u, b.links)
	b.body = w.renderHeavy(b.body[:0], h.idx, u, b.links)
	writeBody(rw, r, http.StatusOK, htmlUTF8, b.body)
	w.heavyBufs.Put(b)
}

// heavyBuf is the scratch of one served page, pooled in Web.heavyBufs.
type heavyBuf struct {
	links []heavyLink
	body  []byte
}

// heavyLookup maps the authority and path+query of a canonical URL of a
// WorldHeavy web (lookup has cut them) to its host and URL index.
func (w *Web) heavyLookup(auth, pq string) (target, bool) {
	www := false
	if a, ok := strings.CutPrefix(auth, "www."); ok && !w.cfg.IPAuthorities {
		auth, www = a, true
	}
	hi, ok := w.byAuthority[auth]
	if !ok || hi >= w.nOrdinary {
		return target{}, false
	}
	u, ok := w.heavyIndex(hi, pq, www)
	return target{int32(hi), u}, ok
}

// heavyInfo assembles the PageInfo of URL u of host h.
func (w *Web) heavyInfo(h int, u int32) PageInfo {
	hst := w.hosts[h]
	n := w.heavy.pages
	pi := PageInfo{URL: w.heavyURL(h, u), Status: http.StatusOK, ContentType: htmlUTF8, Role: "article"}
	page := u
	switch {
	case u >= n:
		page = u - n
		pi.Status, _ = w.heavyRedirect(h, page)
		pi.Role, pi.ContentType = "redirect", ""
		pi.RedirectTo = w.heavyURL(h, page)
	case u == heavyHome:
		pi.Role = "home"
	case u < heavyFirstItem:
		pi.Role = "page"
	}
	var path [160]byte
	pi.Disallowed = hst.disallowAll || !allowed(hst.rules, string(w.heavyPath(path[:0], h, page)))
	// Every page is in its host's tree below the home page, a seed, and
	// every redirecting URL is linked wherever its page is (with dozens
	// of links to each page, all but surely from a page fetched). Of a
	// host whose robots.txt forbids everything, only the home page is
	// counted: its other URLs are discovered, if at all, through links
	// of other hosts.
	pi.Reachable = !hst.disallowAll || u == heavyHome
	if pi.Role != "redirect" {
		for _, l := range w.heavyPlan(h, u, nil) {
			pi.Links = append(pi.Links, w.heavyLinkURL(l))
		}
		slices.Sort(pi.Links)
		pi.Links = slices.Compact(pi.Links)
	}
	return pi
}

// heavyURLs is the number of URLs of host h: pages and redirecting URLs.
func (w *Web) heavyURLs(h int) int32 {
	n := w.heavy.pages
	for k := range w.heavy.pages {
		if w.heavyAlias(h, k) != aliasNone {
			n++
		}
	}
	return n
}
