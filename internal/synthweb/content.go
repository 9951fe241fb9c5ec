package synthweb

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// role is what a URL of the synthetic web is for. Roles fix which links a
// compliant crawler may follow, so tests can derive expectations from them.
type role uint8

const (
	roleHome           role = iota // "/"
	rolePage                       // ordinary HTML page
	roleMetaNoFollow               // carries <meta name="robots" content="nofollow">
	roleHeaderNoFollow             // served with X-Robots-Tag: nofollow
	roleOnlyRel                    // linked only through rel="nofollow" links
	roleOnlyMeta                   // linked only from the meta-nofollow page
	roleOnlyHeader                 // linked only from the header-nofollow page
	roleRedirect                   // 301 or 302
	roleNotFound                   // 404
	roleGone                       // 410
	roleServerError                // 500
	roleImage                      // image/jpeg
	rolePDF                        // application/pdf
	roleBoilerplate                // the same HTML document on every host and at two URLs of each: exact duplicates
	roleArticle                    // a news article, alone or one of a family of near-duplicate variants
	roleLive                       // a page that changes while the web runs (Config.LivePages)
)

func (r role) String() string {
	switch r {
	case roleHome:
		return "home"
	case rolePage:
		return "page"
	case roleMetaNoFollow:
		return "nofollow-meta"
	case roleHeaderNoFollow:
		return "nofollow-header"
	case roleOnlyRel:
		return "only-rel-nofollow"
	case roleOnlyMeta:
		return "only-meta-nofollow"
	case roleOnlyHeader:
		return "only-header-nofollow"
	case roleRedirect:
		return "redirect"
	case roleNotFound:
		return "not-found"
	case roleGone:
		return "gone"
	case roleServerError:
		return "server-error"
	case roleImage:
		return "image"
	case rolePDF:
		return "pdf"
	case roleBoilerplate:
		return "boilerplate"
	case roleArticle:
		return "article"
	case roleLive:
		return "live"
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

func (r role) isHTML() bool { return r <= roleOnlyHeader || r == roleArticle || r == roleLive }

// linkable pages may be targets of random links. The only-* pages never
// are, or they would stop being "only" reachable one way.
func (r role) linkable() bool {
	return r == roleHome || r == rolePage || r == roleMetaNoFollow || r == roleHeaderNoFollow
}

// holdsLinks tells whether a page may carry the links that make other
// pages reachable (spanning tree and obligations): its links must be
// followable, so the nofollow pages and the unreachable only-* pages are
// excluded.
func (r role) holdsLinks() bool { return r == roleHome || r == rolePage }

// Fixed page indexes on every ordinary host. Pages from firstRandomPage on
// get paths from random families.
const (
	pageHome        = 0
	pageMeta        = 1
	pageHeader      = 2
	pageOnlyRel     = 3
	pageOnlyMeta    = 4
	pageOnlyHeader  = 5
	firstRandomPage = 11
	// minPages is the least number of HTML pages a host gets, whatever
	// Config.PagesPerHost says, so every feature exists on every host.
	minPages = 12
	// treeFanout bounds the spanning-tree children of a page; with at most
	// two non-holders in the tree order, 4 guarantees a parent always comes
	// before its child.
	treeFanout = 4
)

// target names a page: host index and page index.
type target struct{ h, p int32 }

// mailto and javascript links have no target page.
const (
	noHost           = -1
	pseudoMailto     = 0
	pseudoJavaScript = 1
)

// required is a link a page must carry: a spanning-tree edge or an
// obligation (a redirect, error, resource or only-* page that must be
// linked from somewhere).
type required struct {
	to       target
	nofollow bool
}

type page struct {
	path       string // canonical path and query
	role       role
	status     int
	redirect   target
	disallowed bool
	reachable  bool
	required   []required
	// Articles: the page index of the first article of the family, and
	// which variant of it this one is.
	family  int32
	variant variant
}

// PageInfo is the ground truth about one URL of the synthetic web.
type PageInfo struct {
	URL           string   // canonical
	Status        int      // 200, 301, 302, 404, 410 or 500
	RedirectTo    string   // canonical target of a redirect (possibly another redirect)
	Links         []string // canonical, sorted, de-duplicated targets of followable links (no mailto:, javascript:)
	NoFollowLinks []string // canonical, sorted, de-duplicated targets of rel="nofollow" links
	Disallowed    bool     // robots.txt forbids it to ProductToken (RFC 9309; unreachable robots.txt disallows all)
	ContentType   string   // "" for redirects

	// Role names the purpose of the URL: "home", "page", "nofollow-meta",
	// "nofollow-header", "only-rel-nofollow", "only-meta-nofollow",
	// "only-header-nofollow", "redirect", "not-found", "gone",
	// "server-error", "image", "pdf", "boilerplate", "article" or "live".
	Role string
	// NoFollowMeta and NoFollowHeader report a page-level nofollow (meta
	// robots tag or X-Robots-Tag header): none of its Links may be followed.
	NoFollowMeta, NoFollowHeader bool
	// Embeds are the images the page shows (<img src>), canonical: each
	// article shows its host's image.
	Embeds []string
	// Family is, for an article, the canonical URL of the first article
	// of its family: the pages of one family are near-duplicates of each
	// other (the same story with a changed footer, timestamp, ad block or
	// navigation) and of no other page. It is "" for every other role.
	Family string
	// Reachable reports whether a compliant crawler starting from Seeds()
	// discovers the URL: through links of fetched pages that are not
	// nofollow (rel, meta or header) and through redirects, never fetching
	// a Disallowed URL. It fetches the URL only if it is also not
	// Disallowed (and, for images, not excluded by extension: PDFs are
	// documents, which a crawler archives).
	Reachable bool
}

// buildPages assigns the paths and roles of an ordinary host's URLs.
func (w *Web) buildPages(h *host) {
	cfg := &w.cfg
	sr := newRNG(cfg.Seed, streamHostSize, uint64(h.idx), 0)
	n := max(minPages, sr.between(cfg.PagesPerHost/2, cfg.PagesPerHost*3/2))
	r := newRNG(cfg.Seed, streamPaths, uint64(h.idx), 0)
	words := w.text.words

	add := func(path string, ro role, status int) {
		h.pages = append(h.pages, page{path: path, role: ro, status: status})
	}
	add("/", roleHome, http.StatusOK)
	add("/nofollow/meta.html", roleMetaNoFollow, http.StatusOK)
	add("/nofollow/header.html", roleHeaderNoFollow, http.StatusOK)
	add("/only/rel-nofollow.html", roleOnlyRel, http.StatusOK)
	add("/only/meta-nofollow.html", roleOnlyMeta, http.StatusOK)
	add("/only/header-nofollow.html", roleOnlyHeader, http.StatusOK)
	// Pages that the robots rules of the various kinds single out, so that
	// disallowed URLs really are linked.
	add("/private/6", rolePage, http.StatusOK)
	add("/private/7", rolePage, http.StatusOK)
	add("/private/open-8", rolePage, http.StatusOK)
	add("/cgi/9.cgi", rolePage, http.StatusOK)
	add("/p/10", rolePage, http.StatusOK) // matches the agent group's "Disallow: /p/1" prefix
	if h.robots == RobotsEncoded {
		for _, p := range []string{encodedPage, encodedLookLike, tildePage, tildeLookLike, encodedLetterPage} {
			add(p, rolePage, http.StatusOK)
		}
	}
	for p := firstRandomPage; p < n; p++ {
		ps := strconv.Itoa(p)
		var path string
		switch r.intn(10) {
		case 0, 1, 2:
			path = "/p/" + ps
		case 3:
			path = "/a/b/page-" + ps + ".html"
		case 4:
			path = "/a/c/d/page-" + ps + ".html"
		case 5:
			path = "/a/e/" + words[r.intn(len(words))] + "-" + ps + ".html"
		case 6:
			path = "/list?cat=" + strconv.Itoa(p%5) + "&page=" + ps
		case 7:
			sort := "asc"
			if r.chance(0.5) {
				sort = "desc"
			}
			path = "/list?cat=" + strconv.Itoa(p%5) + "&page=" + ps + "&sort=" + sort
		case 8:
			path = "/docs/" + words[r.intn(len(words))] + "/" + ps
		default:
			path = "/tag/" + words[r.intn(len(words))] + "?page=" + ps
		}
		add(path, rolePage, http.StatusOK)
	}
	redirects := 3 + n/15 // room for a cross-host 302 and a two-hop chain
	for k := 1; k <= redirects; k++ {
		add("/r/"+strconv.Itoa(k), roleRedirect, http.StatusMovedPermanently)
	}
	for k := 1; k <= 1+n/30; k++ {
		add("/gone/"+strconv.Itoa(k), roleNotFound, http.StatusNotFound)
	}
	add("/removed/1", roleGone, http.StatusGone)
	add("/err/1", roleServerError, http.StatusInternalServerError)
	h.image = int32(len(h.pages))
	add("/img/photo-1.jpg", roleImage, http.StatusOK)
	add("/files/report-1.pdf", rolePDF, http.StatusOK)
	add("/legal/terms.html", roleBoilerplate, http.StatusOK)
	add("/legal/terms/print.html", roleBoilerplate, http.StatusOK)
	w.addArticles(h)
	w.addLivePages(h)

	h.byPath = make(map[string]int32, len(h.pages))
	for i := range h.pages {
		pg := &h.pages[i]
		h.byPath[pg.path] = int32(i)
		pg.disallowed = h.disallowAll || !allowed(h.rules, pg.path)
		if pg.role.linkable() {
			h.linkable = append(h.linkable, int32(i))
		}
	}
}

// buildGraph gives every URL of an ordinary host at least one inbound link:
// a spanning tree from the home page over the HTML pages, then one link
// for each redirect, error, resource and only-* page. Every page ends up
// reachable from "/" through some link; the random links added at render
// time only add shortcuts.
func (w *Web) buildGraph(h *host) {
	r := newRNG(w.cfg.Seed, streamTree, uint64(h.idx), 0)
	var allowedPages, disallowedPages []int32
	for i := range h.pages {
		if h.pages[i].role != rolePage {
			continue
		}
		if h.pages[i].disallowed {
			disallowedPages = append(disallowedPages, int32(i))
		} else {
			allowedPages = append(allowedPages, int32(i))
		}
	}
	shuffle(&r, allowedPages)
	shuffle(&r, disallowedPages)
	// Allowed pages come first so that each hangs below allowed pages only
	// and stays fetchable for a compliant crawler; the two nofollow pages
	// are never parents.
	order := make([]int32, 0, len(allowedPages)+len(disallowedPages)+3)
	order = append(order, pageHome)
	order = append(order, allowedPages...)
	order = append(order, pageMeta, pageHeader)
	order = append(order, disallowedPages...)

	self := int32(h.idx)
	parent, kids := 0, 0
	for c := 1; c < len(order); c++ {
		for parent < c && (!h.pages[order[parent]].role.holdsLinks() || kids == treeFanout) {
			parent++
			kids = 0
		}
		from := int32(pageHome)
		if parent < c { // always, with treeFanout 4; home keeps the graph connected otherwise
			from = order[parent]
			kids++
		}
		h.pages[from].required = append(h.pages[from].required, required{to: target{self, order[c]}})
	}

	var holders []int32
	for _, p := range order {
		if h.pages[p].role.holdsLinks() {
			holders = append(holders, p)
		}
	}
	room := make([]int, len(h.pages))
	for _, p := range holders {
		room[p] = w.linkCount(h.idx, p) - len(h.pages[p].required)
	}
	cursor := r.intn(len(holders))
	assign := func(to int32, nofollow bool) {
		at := holders[cursor]
		for i := 0; i < len(holders); i++ {
			c := holders[(cursor+i)%len(holders)]
			if room[c] > 0 {
				at = c
				cursor = (cursor + i) % len(holders)
				break
			}
		}
		cursor = (cursor + 1) % len(holders)
		room[at]--
		h.pages[at].required = append(h.pages[at].required, required{to: target{self, to}, nofollow: nofollow})
	}

	assign(pageOnlyRel, true)
	h.pages[pageMeta].required = append(h.pages[pageMeta].required, required{to: target{self, pageOnlyMeta}})
	h.pages[pageHeader].required = append(h.pages[pageHeader].required, required{to: target{self, pageOnlyHeader}})

	or := newRNG(w.cfg.Seed, streamObligations, uint64(h.idx), 0)
	firstSameHost, lastRedirect := int32(-1), int32(-1)
	for i := range h.pages {
		pg := &h.pages[i]
		if pg.role.isHTML() && pg.role != roleArticle && pg.role != roleLive {
			continue
		}
		if pg.role == roleRedirect {
			lastRedirect = int32(i)
			if pg.path == "/r/1" && w.crossHostAllowed() {
				// A temporary redirect to a page on another host.
				oh := w.otherHost(&or, h.idx)
				pg.status = http.StatusFound
				pg.redirect = target{int32(oh), w.hosts[oh].linkable[or.intn(len(w.hosts[oh].linkable))]}
			} else {
				pg.redirect = target{self, h.linkable[or.intn(len(h.linkable))]}
				if firstSameHost < 0 {
					firstSameHost = int32(i)
				}
			}
		}
		assign(int32(i), false)
	}
	// The last redirect points at the first same-host one: a two-hop chain.
	if lastRedirect >= 0 && firstSameHost >= 0 && lastRedirect != firstSameHost {
		h.pages[lastRedirect].redirect = target{self, firstSameHost}
	}
}

func shuffle(r *rng, s []int32) {
	for i := len(s) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		s[i], s[j] = s[j], s[i]
	}
}

func (w *Web) crossHostAllowed() bool { return w.cfg.CrossHostFraction > 0 && w.nOrdinary > 1 }

// otherHost picks an ordinary host other than self.
func (w *Web) otherHost(r *rng, self int) int {
	return (self + 1 + r.intn(w.nOrdinary-1)) % w.nOrdinary
}

// linkCount is drawn from its own stream so that buildGraph can know each
// page's link budget without planning the page.
func (w *Web) linkCount(h int, p int32) int {
	r := newRNG(w.cfg.Seed, streamLinkCount, uint64(h), uint64(p))
	return r.between(w.cfg.MinLinks, w.cfg.MaxLinks)
}

// computeReachable runs the breadth-first search that defines
// PageInfo.Reachable.
func (w *Web) computeReachable() {
	var queue []target
	visit := func(t target) {
		pg := &w.hosts[t.h].pages[t.p]
		if !pg.reachable {
			pg.reachable = true
			queue = append(queue, t)
		}
	}
	for i := 0; i < w.nOrdinary; i++ {
		visit(target{int32(i), pageHome})
	}
	pl := &pagePlan{}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		h := w.hosts[t.h]
		pg := &h.pages[t.p]
		if pg.disallowed {
			continue
		}
		switch {
		case pg.role == roleRedirect:
			visit(pg.redirect)
		case pg.role.isHTML() && pg.role != roleMetaNoFollow && pg.role != roleHeaderNoFollow:
			w.plan(h, t.p, pl)
			for _, l := range pl.links {
				if l.to.h != noHost && !l.nofollow() {
					visit(l.to)
				}
			}
		}
	}
}

// Link rendering choices.
type elemKind uint8

const (
	elemA elemKind = iota
	elemArea
	elemIframe
	elemNext // <link rel="next"> in <head>
)

type formKind uint8

const (
	formAbs       formKind = iota // http://h003.weft.test:41234/p/3
	formAbsUpper                  // HTTP://H003.WEFT.TEST:41234/p/3
	formProtoRel                  // //h003.weft.test:41234/p/3
	formHostRel                   // /p/3
	formPathRel                   // ../p/3, page-4.html, ./
	formQueryOnly                 // ?page=3&cat=4 (same path as the document)
	formFragOnly                  // #sec-2 (link to the page itself)
)

// Decorations that a canonicaliser must undo.
const (
	decoFragment     = 1 << iota // #sec-N
	decoTracking                 // utm_*, gclid, fbclid
	decoSessionPath              // ;jsessionid=... in the path
	decoSessionQuery             // PHPSESSID=... or sid=...
	decoReorder                  // query parameters in reverse order
	decoNoSlash                  // http://host:port without the "/" path
	decoDotSlash                 // ./page-4.html
	decoSingleQuote              // href='...'
)

// rel attribute values; the first four contain the nofollow token.
const (
	relNone uint8 = iota
	relNoFollow
	relNoFollowNoopener
	relExternalNoFollow
	relUGCNoFollow
	relNoopener
)

func relValue(rel uint8) string {
	switch rel {
	case relNoFollow:
		return "nofollow"
	case relNoFollowNoopener:
		return "nofollow noopener"
	case relExternalNoFollow:
		return "external nofollow"
	case relUGCNoFollow:
		return "ugc nofollow"
	case relNoopener:
		return "noopener"
	}
	return ""
}

// linkSpec is one link on a page: where it points and how it is written.
type linkSpec struct {
	to   target
	elem elemKind
	form formKind
	rel  uint8
	deco uint8
	aux  uint32 // seeds the small choices of rendering (anchor text, parameter values)
}

func (l *linkSpec) nofollow() bool { return l.rel >= relNoFollow && l.rel <= relUGCNoFollow }

// pagePlan is everything about an HTML page except its prose. It is derived
// from (Seed, host, page) alone, so PageInfo, the reachability search and
// the served body always agree.
type pagePlan struct {
	size     int    // exact body size in bytes
	docPath  string // path of the page without query
	dir      string // directory that relative references resolve against
	baseDir  string // directory of <base href>, "" when the page has none
	baseForm uint8  // how <base href> is written
	links    []linkSpec
}

// plan fills pl for the HTML page p of host h.
func (w *Web) plan(h *host, p int32, pl *pagePlan) {
	pg := &h.pages[p]
	if pg.role == roleArticle {
		w.planArticle(h, p, pl)
		return
	}
	if pg.role == roleLive {
		pl.size, pl.baseDir, pl.baseForm = 0, "", 0
		pl.docPath, pl.dir = pg.path, dirOf(pg.path)
		pl.links = append(pl.links[:0], linkSpec{to: target{int32(h.idx), pageHome}})
		return
	}
	r := newRNG(w.cfg.Seed, streamPlan, uint64(h.idx), uint64(p))
	pl.size = r.between(w.cfg.MinPageBytes, w.cfg.MaxPageBytes)
	pl.docPath, _ = splitQuery(pg.path)
	pl.dir = dirOf(pl.docPath)
	pl.baseDir, pl.baseForm = "", 0
	if pg.role == rolePage && r.chance(0.25) {
		i := r.intn(len(w.baseDirs))
		if w.baseDirs[i] == pl.dir {
			i = (i + 1) % len(w.baseDirs)
		}
		pl.baseDir, pl.baseForm = w.baseDirs[i], uint8(1+r.intn(4))
		pl.dir = pl.baseDir
	}

	n := max(w.linkCount(h.idx, p), len(pg.required))
	links := pl.links[:0]
	for _, q := range pg.required {
		l := linkSpec{to: q.to}
		if q.nofollow {
			l.rel = relNoFollow + uint8(r.intn(4))
		}
		links = append(links, l)
	}
	self := int32(h.idx)
	var mailto, js bool
	for len(links) < n {
		var l linkSpec
		switch x := r.float(); {
		case x < 0.012 && !mailto:
			mailto, l.to = true, target{noHost, pseudoMailto}
		case x < 0.024 && !js:
			js, l.to = true, target{noHost, pseudoJavaScript}
		case x < 0.05:
			l.to = target{self, p}
		case x < 0.05+w.cfg.CrossHostFraction && w.crossHostAllowed():
			oh := w.otherHost(&r, h.idx)
			l.to = target{int32(oh), w.hosts[oh].linkable[r.intn(len(w.hosts[oh].linkable))]}
		default:
			l.to = target{self, h.linkable[r.intn(len(h.linkable))]}
		}
		if l.to.h != noHost {
			// Nofollow links point only at linkable pages, which the
			// spanning tree also links normally.
			switch y := r.float(); {
			case y < 0.04:
				l.rel = relNoFollow + uint8(r.intn(4))
			case y < 0.06:
				l.rel = relNoopener
			}
		}
		links = append(links, l)
	}
	for i := len(links) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		links[i], links[j] = links[j], links[i]
	}
	var next, iframe bool
	for i := range links {
		l := &links[i]
		l.aux = uint32(r.next())
		if l.to.h == noHost {
			continue
		}
		if !l.nofollow() {
			switch y := r.float(); {
			case y < 0.05 && !next:
				next, l.elem = true, elemNext
			case y < 0.11:
				l.elem = elemArea
			case y < 0.13 && !iframe:
				iframe, l.elem = true, elemIframe
			}
		}
		w.chooseForm(&r, h, p, pl, l)
	}
	pl.links = links
}

// chooseForm decides how a link to l.to is written on page p.
func (w *Web) chooseForm(r *rng, h *host, p int32, pl *pagePlan, l *linkSpec) {
	tpath, tquery := splitQuery(w.hosts[l.to.h].pages[l.to.p].path)
	switch {
	case int(l.to.h) != h.idx:
		switch y := r.intn(20); {
		case y < 12:
			l.form = formAbs
		case y < 17:
			l.form = formAbsUpper
		default:
			l.form = formProtoRel
		}
	case l.to.p == p && pl.baseDir == "" && r.chance(0.5):
		// Resolved against the document URL, "#x" is the page itself;
		// with a <base> it would be the base URL, so never combine them.
		l.form = formFragOnly
		return
	case tquery != "" && pl.baseDir == "" && tpath == pl.docPath && r.chance(0.5):
		l.form = formQueryOnly
	default:
		switch y := r.intn(100); {
		case y < 15:
			l.form = formAbs
		case y < 20:
			l.form = formAbsUpper
		case y < 25:
			l.form = formProtoRel
		case y < 60:
			l.form = formHostRel
		default:
			l.form = formPathRel
		}
	}
	var d uint8
	if r.chance(0.15) {
		d |= decoFragment
	}
	switch y := r.float(); {
	case y < 0.10:
		d |= decoTracking
	case y < 0.13 && l.form != formQueryOnly:
		d |= decoSessionPath
	case y < 0.16:
		d |= decoSessionQuery
	}
	if strings.IndexByte(tquery, '&') >= 0 && r.chance(0.5) {
		d |= decoReorder
	}
	absolute := l.form == formAbs || l.form == formAbsUpper || l.form == formProtoRel
	if absolute && tpath == "/" && d&decoSessionPath == 0 && r.chance(0.4) {
		d |= decoNoSlash
	}
	if l.form == formPathRel && r.chance(0.3) {
		d |= decoDotSlash
	}
	if r.chance(0.1) {
		d |= decoSingleQuote
	}
	l.deco = d
}

// appendHref appends the attribute value (HTML-escaped) of a link.
func (w *Web) appendHref(dst []byte, h *host, pl *pagePlan, l *linkSpec) []byte {
	if l.to.h == noHost {
		if l.to.p == pseudoMailto {
			dst = append(dst, "mailto:info@"...)
			return append(dst, h.name...)
		}
		return append(dst, "javascript:void(0)"...)
	}
	t := w.hosts[l.to.h]
	tpath, tquery := splitQuery(t.pages[l.to.p].path)
	hash := mix64(uint64(l.aux) | 1<<40)
	switch l.form {
	case formFragOnly:
		dst = append(dst, "#sec-"...)
		return strconv.AppendUint(dst, hash%50, 10)
	case formAbs:
		dst = append(dst, "http://"...)
		dst = append(dst, t.authority...)
	case formAbsUpper:
		dst = append(dst, "HTTP://"...)
		dst = append(dst, t.upperAuthority...)
	case formProtoRel:
		dst = append(dst, "//"...)
		dst = append(dst, t.authority...)
	}
	switch l.form {
	case formAbs, formAbsUpper, formProtoRel, formHostRel:
		if l.deco&decoNoSlash == 0 {
			dst = append(dst, tpath...)
		}
	case formPathRel:
		dst = appendRelative(dst, pl.dir, tpath, l.deco&decoDotSlash != 0)
	}
	if l.deco&decoSessionPath != 0 {
		dst = append(dst, ";jsessionid="...)
		dst = appendHex(dst, hash, 16, true)
	}

	var extra []byte
	var scratch [40]byte
	switch {
	case l.deco&decoTracking != 0:
		switch hash >> 60 & 3 {
		case 0:
			extra = append(scratch[:0], "utm_source=feed&amp;utm_medium=rss"...)
		case 1:
			extra = appendHex(append(scratch[:0], "gclid=cj0k"...), hash, 8, false)
		case 2:
			extra = appendHex(append(scratch[:0], "fbclid=iwar"...), hash, 8, false)
		default:
			extra = append(scratch[:0], "utm_campaign=spring"...)
		}
	case l.deco&decoSessionQuery != 0:
		if hash>>62&1 == 0 {
			extra = appendHex(append(scratch[:0], "PHPSESSID="...), hash, 16, false)
		} else {
			extra = appendHex(append(scratch[:0], "sid="...), hash, 8, false)
		}
	}
	sep := "?"
	if extra != nil && hash>>59&1 == 0 {
		dst = append(dst, sep...)
		dst = append(dst, extra...)
		sep, extra = "&amp;", nil
	}
	for rest := tquery; rest != ""; {
		var part string
		if l.deco&decoReorder != 0 {
			i := strings.LastIndexByte(rest, '&')
			part, rest = rest[i+1:], rest[:max(i, 0)]
		} else {
			var ok bool
			part, rest, ok = strings.Cut(rest, "&")
			if !ok {
				rest = ""
			}
		}
		dst = append(dst, sep...)
		dst = append(dst, part...)
		sep = "&amp;"
	}
	if extra != nil {
		dst = append(dst, sep...)
		dst = append(dst, extra...)
	}
	if l.deco&decoFragment != 0 {
		dst = append(dst, "#sec-"...)
		dst = strconv.AppendUint(dst, hash%50, 10)
	}
	return dst
}

func appendHex(dst []byte, v uint64, n int, upper bool) []byte {
	digits := "0123456789abcdef"
	if upper {
		digits = "0123456789ABCDEF"
	}
	for i := 0; i < n; i++ {
		dst = append(dst, digits[v>>(60-4*uint(i%16))&15])
	}
	return dst
}

// appendEscapedPath appends a canonical path+query as an attribute value.
func appendEscapedPath(dst []byte, pq string) []byte {
	for {
		i := strings.IndexByte(pq, '&')
		if i < 0 {
			return append(dst, pq...)
		}
		dst = append(dst, pq[:i]...)
		dst = append(dst, "&amp;"...)
		pq = pq[i+1:]
	}
}

// compactWorst bounds the bytes of a link written in compact form (see
// appendCompactLink) for the given config. Validate requires that
// MinPageBytes holds the page head plus MaxLinks of them, which is what
// lets renderPage hit the page's exact size without ever exceeding it.
func compactWorst(cfg Config) int {
	// <a href="http:// + authority + path + " rel="nofollow"> + word + </a>+space
	return len(`<a href="http://`) + cfg.maxNameLen() + len(":65535") + cfg.maxPathLen() +
		len(`" rel="nofollow">`) + maxWordLen + len("</a> ")
}

// appendCompactLink writes a link in its shortest form, used when the page
// budget runs low: host-relative (absolute for other hosts), no decoration.
func (w *Web) appendCompactLink(dst []byte, h *host, l *linkSpec, word string) []byte {
	if l.elem == elemNext {
		dst = append(dst, `<link rel="next" href="`...)
	} else {
		dst = append(dst, `<a href="`...)
	}
	if l.to.h == noHost {
		dst = w.appendHref(dst, h, nil, l)
	} else {
		t := w.hosts[l.to.h]
		if t != h {
			dst = append(dst, "http://"...)
			dst = append(dst, t.authority...)
		}
		dst = appendEscapedPath(dst, t.pages[l.to.p].path)
	}
	dst = append(dst, '"')
	if l.elem == elemNext {
		return append(dst, ">\n"...)
	}
	if l.nofollow() {
		dst = append(dst, ` rel="nofollow"`...)
	}
	dst = append(dst, '>')
	dst = append(dst, word...)
	return append(dst, "</a> "...)
}

// appendLink writes a link in its planned form.
func (w *Web) appendLink(dst []byte, h *host, pl *pagePlan, l *linkSpec, i int, tr *rng) []byte {
	q := byte('"')
	if l.deco&decoSingleQuote != 0 {
		q = '\''
	}
	attr := func(dst []byte, name string) []byte {
		dst = append(dst, ' ')
		dst = append(dst, name...)
		dst = append(dst, '=', q)
		dst = w.appendHref(dst, h, pl, l)
		return append(dst, q)
	}
	rel := func(dst []byte) []byte {
		if v := relValue(l.rel); v != "" {
			dst = append(dst, ` rel="`...)
			dst = append(dst, v...)
			dst = append(dst, '"')
		}
		return dst
	}
	switch l.elem {
	case elemNext:
		dst = append(dst, `<link rel="next"`...)
		dst = attr(dst, "href")
		return append(dst, ">\n"...)
	case elemArea:
		dst = append(dst, `<map name="m`...)
		dst = strconv.AppendInt(dst, int64(i), 10)
		dst = append(dst, `"><area shape="rect" coords="0,0,120,40"`...)
		dst = attr(dst, "href")
		dst = rel(dst)
		dst = append(dst, ` alt="`...)
		dst = w.text.appendWords(dst, tr, 1+int(l.aux%3))
		return append(dst, `"></map> `...)
	case elemIframe:
		dst = append(dst, `<iframe`...)
		dst = attr(dst, "src")
		dst = append(dst, ` width="300" height="150" title="`...)
		dst = w.text.appendWords(dst, tr, 1+int(l.aux%3))
		return append(dst, `"></iframe> `...)
	}
	dst = append(dst, `<a`...)
	dst = attr(dst, "href")
	dst = rel(dst)
	dst = append(dst, '>')
	dst = w.text.appendWords(dst, tr, 1+int(l.aux%3))
	return append(dst, "</a> "...)
}

const pageFooter = "</p>\n</body>\n</html>\n"

// renderPage appends the body of HTML page p, exactly pl.size bytes long.
//
// Invariant: before a link is written with rem links still to go,
// len <= size - len(footer) - rem*compactWorst. A link in planned form is
// kept only if it preserves that; otherwise it is rewritten compact, which
// preserves it by construction. Prose only fills the slack.
func (w *Web) renderPage(dst []byte, h *host, p int32, pl *pagePlan) []byte {
	pg := &h.pages[p]
	if pg.role == roleArticle {
		return w.renderArticle(dst, h, p, pl)
	}
	if pg.role == roleLive {
		edition, _ := h.live[pg.family].edition(w.started, time.Now())
		return w.renderLive(dst, h, p, edition)
	}
	tr := newRNG(w.cfg.Seed, streamText, uint64(h.idx), uint64(p))
	start := len(dst)
	cw := w.compactWorst
	rem := len(pl.links)
	budget := func(rem int) int { return start + pl.size - len(pageFooter) - rem*cw }
	word := func() string { return w.text.words[tr.intn(len(w.text.words))] }

	dst = append(dst, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	dst = w.text.appendWords(dst, &tr, tr.between(2, 5))
	dst = append(dst, " - "...)
	dst = append(dst, h.name...)
	dst = append(dst, "</title>\n"...)
	if pl.baseForm != 0 {
		dst = append(dst, `<base href="`...)
		switch pl.baseForm {
		case 1:
			dst = append(dst, pl.baseDir...)
		case 2:
			dst = append(dst, "HTTP://"...)
			dst = append(dst, h.upperAuthority...)
			dst = append(dst, pl.baseDir...)
		case 3:
			dst = append(dst, pl.baseDir...)
			dst = append(dst, "index.html"...)
		default:
			dst = append(dst, "http://"...)
			dst = append(dst, h.authority...)
			dst = append(dst, pl.baseDir...)
		}
		dst = append(dst, "\">\n"...)
	}
	if pg.role == roleMetaNoFollow {
		dst = append(dst, "<meta name=\"robots\" content=\"nofollow\">\n"...)
	}
	for i := range pl.links {
		if l := &pl.links[i]; l.elem == elemNext {
			rem--
			mark := len(dst)
			if dst = w.appendLink(dst, h, pl, l, i, &tr); len(dst) > budget(rem) {
				dst = w.appendCompactLink(dst[:mark], h, l, "")
			}
		}
	}
	dst = append(dst, "</head>\n<body>\n<h1>"...)
	dst = w.text.appendWords(dst, &tr, tr.between(2, 6))
	dst = append(dst, "</h1>\n<p>"...)
	written := 0
	for i := range pl.links {
		l := &pl.links[i]
		if l.elem == elemNext {
			continue
		}
		// appendText may overrun its request by maxWordLen+1 bytes, and
		// a paragraph break and a space follow: keep all of it in the gap.
		const overrun = maxWordLen + 1 + len("</p>\n<p>") + 1
		if gap := (budget(rem) - len(dst)) / (rem + 1); gap > 2*overrun {
			if written%5 == 4 {
				dst = append(dst, "</p>\n<p>"...)
			}
			dst = w.text.appendText(dst, &tr, gap-overrun) // ends with a space
		}
		written++
		rem--
		mark := len(dst)
		if dst = w.appendLink(dst, h, pl, l, i, &tr); len(dst) > budget(rem) {
			dst = w.appendCompactLink(dst[:mark], h, l, word())
		}
	}
	if fill := start + pl.size - len(pageFooter) - len(dst); fill > 0 {
		dst = w.text.appendExact(dst, &tr, fill)
	}
	return append(dst, pageFooter...)
}

// Bodies of the non-HTML and error URLs.
const (
	notFoundBody    = "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>\n"
	goneBody        = "<!DOCTYPE html>\n<html><head><title>410 Gone</title></head><body><h1>Gone</h1></body></html>\n"
	serverErrorBody = "<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1></body></html>\n"
	unavailableBody = "<!DOCTYPE html>\n<html><head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1></body></html>\n"
	// A JPEG start-of-image and JFIF header, some filler, end-of-image:
	// enough for content sniffers, not a decodable picture.
	imageBody = "\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" +
		"synthweb image placeholder" + "\xff\xd9"
	pdfBody = "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
	// The terms of use every host serves, byte for byte, at two URLs: the
	// exact duplicates a crawler should archive once.
	boilerplateBody = "<!DOCTYPE html>\n<html><head><title>Terms of use</title></head><body><h1>Terms of use</h1>\n" +
		"<p>These pages are generated for testing a web crawler. You may crawl them politely, as robots.txt says.</p>\n" +
		"<p>Nothing here is true, and nothing is for sale. Every host of this web serves this same document.</p>\n</body></html>\n"
)

func contentType(ro role) string {
	switch ro {
	case roleRedirect:
		return ""
	case roleImage:
		return "image/jpeg"
	case rolePDF:
		return "application/pdf"
	case roleBoilerplate:
		return "text/html" // written by another tool than the generated pages
	}
	return "text/html; charset=utf-8"
}

// staticBody is the body of a URL that is not a generated HTML page.
func staticBody(ro role) string {
	switch ro {
	case roleNotFound:
		return notFoundBody
	case roleGone:
		return goneBody
	case roleServerError:
		return serverErrorBody
	case roleImage:
		return imageBody
	case rolePDF:
		return pdfBody
	case roleBoilerplate:
		return boilerplateBody
	}
	return ""
}

// url returns the canonical URL of a target.
func (w *Web) url(t target) string {
	h := w.hosts[t.h]
	return "http://" + h.authority + h.pages[t.p].path
}

// info assembles the PageInfo of a target.
func (w *Web) info(t target, pl *pagePlan) PageInfo {
	h := w.hosts[t.h]
	pg := &h.pages[t.p]
	pi := PageInfo{
		URL:            w.url(t),
		Status:         pg.status,
		Disallowed:     pg.disallowed,
		ContentType:    contentType(pg.role),
		Role:           pg.role.String(),
		NoFollowMeta:   pg.role == roleMetaNoFollow,
		NoFollowHeader: pg.role == roleHeaderNoFollow,
		Reachable:      pg.reachable,
	}
	if pg.role == roleRedirect {
		pi.RedirectTo = w.url(pg.redirect)
	}
	if pg.role == roleArticle {
		pi.Family = w.url(target{t.h, pg.family})
		if h.image >= 0 {
			pi.Embeds = []string{w.url(target{t.h, h.image})}
		}
	}
	if pg.role.isHTML() {
		w.plan(h, t.p, pl)
		for _, l := range pl.links {
			switch {
			case l.to.h == noHost:
			case l.nofollow():
				pi.NoFollowLinks = append(pi.NoFollowLinks, w.url(l.to))
			default:
				pi.Links = append(pi.Links, w.url(l.to))
			}
		}
		slices.Sort(pi.Links)
		pi.Links = slices.Compact(pi.Links)
		slices.Sort(pi.NoFollowLinks)
		pi.NoFollowLinks = slices.Compact(pi.NoFollowLinks)
	}
	return pi
}

// lookup maps a canonical URL to its target.
func (w *Web) lookup(canonicalURL string) (target, bool) {
	rest, ok := strings.CutPrefix(canonicalURL, "http://")
	if !ok {
		return target{}, false
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return target{}, false
	}
	auth, pq := rest[:i], rest[i:]
	if w.heavy != nil {
		return w.heavyLookup(auth, pq)
	}
	hi, ok := w.byAuthority[auth]
	if !ok || hi >= w.nOrdinary {
		return target{}, false
	}
	if w.seeds != nil {
		p, ok := w.seedsIndex(hi, pq)
		return target{int32(hi), p}, ok
	}
	p, ok := w.hosts[hi].byPath[pq]
	return target{int32(hi), p}, ok
}

// Page returns the ground truth for a canonical URL, or false when the web
// has no such URL (robots.txt and sitemap.xml are not pages; see Body).
func (w *Web) Page(canonicalURL string) (PageInfo, bool) {
	t, ok := w.lookup(canonicalURL)
	if !ok {
		return PageInfo{}, false
	}
	if w.seeds != nil {
		return w.seedsInfo(int(t.h), t.p), true
	}
	if w.heavy != nil {
		return w.heavyInfo(int(t.h), t.p), true
	}
	return w.info(t, &pagePlan{}), true
}

// AllPages returns every URL of the link graph of the ordinary hosts: HTML
// pages, redirects, error pages, images and PDFs, host by host.
func (w *Web) AllPages() []PageInfo {
	var out []PageInfo
	if w.seeds != nil {
		for hi := 0; hi < w.nOrdinary; hi++ {
			for u := range w.seeds.urls(hi) {
				out = append(out, w.seedsInfo(hi, u))
			}
		}
		return out
	}
	if w.heavy != nil {
		for hi := 0; hi < w.nOrdinary; hi++ {
			for u := range 2 * w.heavy.pages {
				if u < w.heavy.pages || w.heavyAlias(hi, u-w.heavy.pages) != aliasNone {
					out = append(out, w.heavyInfo(hi, u))
				}
			}
		}
		return out
	}
	pl := &pagePlan{}
	for hi := 0; hi < w.nOrdinary; hi++ {
		for p := range w.hosts[hi].pages {
			out = append(out, w.info(target{int32(hi), int32(p)}, pl))
		}
	}
	return out
}

// Body returns the exact body served for a canonical URL: any URL of
// AllPages, and also each ordinary host's robots.txt (and its redirect
// hops' final file) and sitemap.xml. It returns nil for anything else and
// for URLs served without a body (redirects, hanging or empty robots.txt).
func (w *Web) Body(canonicalURL string) []byte {
	if t, ok := w.lookup(canonicalURL); ok && w.seeds != nil {
		if t.p >= w.seeds.pages[t.h] {
			return nil
		}
		return w.renderSeeds(nil, int(t.h), t.p, w.seedsPlan(int(t.h), t.p, nil))
	}
	if t, ok := w.lookup(canonicalURL); ok && w.heavy != nil {
		if t.p >= w.heavy.pages {
			return nil
		}
		return w.renderHeavy(nil, int(t.h), t.p, w.heavyPlan(int(t.h), t.p, nil))
	}
	if t, ok := w.lookup(canonicalURL); ok {
		h := w.hosts[t.h]
		pg := &h.pages[t.p]
		if !pg.role.isHTML() {
			if b := staticBody(pg.role); b != "" {
				return []byte(b)
			}
			return nil
		}
		pl := &pagePlan{}
		w.plan(h, t.p, pl)
		return w.renderPage(nil, h, t.p, pl)
	}
	rest, ok := strings.CutPrefix(canonicalURL, "http://")
	if !ok {
		return nil
	}
	auth, path, _ := strings.Cut(rest, "/")
	hi, ok := w.byAuthority[auth]
	if !ok || hi >= w.nOrdinary {
		return nil
	}
	h := w.hosts[hi]
	switch "/" + path {
	case sitemapPath:
		if w.cfg.NoSitemap || w.seeds != nil || w.heavy != nil {
			return []byte(notFoundBody)
		}
		return w.sitemap(h)
	case robotsPath:
		switch h.robots {
		case RobotsNotFound:
			return []byte(notFoundBody)
		case RobotsServerError:
			return []byte(unavailableBody)
		case RobotsRules, RobotsAgentGroup, RobotsCrawlDelay, RobotsNone, RobotsBOM, RobotsCROnly, RobotsLarge, RobotsRulesFirst, RobotsEncoded:
			return slices.Clone(h.robotsTxt)
		}
	case robotsRedirectFinal:
		if h.robots == RobotsRedirect {
			return slices.Clone(h.robotsTxt)
		}
	}
	return nil
}

// sitemap lists the pages of h that a compliant crawler fetches anyway, so
// that a crawler reading sitemaps discovers nothing that changes Reachable.
func (w *Web) sitemap(h *host) []byte {
	b := []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n")
	for i := range h.pages {
		pg := &h.pages[i]
		if (pg.role == roleHome || pg.role == rolePage) && pg.reachable && !pg.disallowed {
			b = append(b, "<url><loc>http://"...)
			b = append(b, h.authority...)
			b = appendEscapedPath(b, pg.path)
			b = append(b, "</loc></url>\n"...)
		}
	}
	return append(b, "</urlset>\n"...)
}

// Allowed reports whether robots.txt lets ProductToken fetch canonicalURL,
// a URL of an ordinary host, pages or not (its sitemap.xml, say), by RFC
// 9309 as Disallowed in PageInfo is; false for URLs of no ordinary host.
func (w *Web) Allowed(canonicalURL string) bool {
	rest, ok := strings.CutPrefix(canonicalURL, "http://")
	if !ok {
		return false
	}
	auth, path, _ := strings.Cut(rest, "/")
	hi, ok := w.byAuthority[auth]
	if !ok || hi >= w.nOrdinary {
		return false
	}
	h := w.hosts[hi]
	return !h.disallowAll && allowed(h.rules, "/"+path)
}
