package synthweb

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// WorldOrder is a web for judging the order in which a crawl fetches
// pages: what it reaches first when it cannot fetch everything. Each host
// is a site: a home page; a navigation of three pages (the home page, a
// tags index, an about page) in the header and again in the footer of
// every page, and a breadcrumb to the page's section; six sections and a
// year archive one hop from the home page; a long shallow tail two hops
// from it of pagination (/SECTION/?page=N), facets of each section's
// listing (/SECTION/?sort=new&view=grid, ...), months of the archive and
// tag pages (/tag/WORD/); and articles, most of the pages, three to six
// levels below the home page in the site's tree. Listings show only the
// recent articles, three levels down; older ones hang below them, from
// article to article (a parent and its children).
//
// The in-degree is heavy-tailed: besides the links of its place in the
// tree (its parent, its children, its tags), an article links other
// articles of its host and of other hosts drawn by a Zipf law over their
// popularity, a random order of every article of the web that has
// nothing to do with their depth or paths; listings link other hosts'
// articles by the same law. So the pages that hold the most PageRank are
// articles; those links put almost every article three or four hops from
// some home page, behind the shallow tail, which a breadth-first crawl
// fetches first and which holds little PageRank. About CrossHostFraction
// of the links (zero means 0.3 in this world) lead to another host: from
// the home page and the pages one hop from it, to other hosts' home and
// section pages; from the rest, to other hosts' articles and, one in
// ten, home pages. Pages have MinLinks to MaxLinks distinct links (zero
// means 40 and 80; a small host's pages lend their spare room to other
// hosts' home and section pages) and MinPageBytes to MaxPageBytes bytes
// (zero means 6 KB and 16 KB), mostly prose. Every host's robots.txt is
// an empty file, which allows everything, whatever RobotsKinds says, and
// there is no sitemap.
//
// A host has PagesPerHost pages (zero means 500) in its own deterministic
// count between half and one and a half times that, but at least
// orderMinPages. The link graph is built when the web starts (its links
// take about 250 bytes a page) and OrderGraph returns it, so that a crawl's order can be
// judged against PageRank; OrderPage names the page of a logged request.
// Of the other fields, WorldOrder reads Seed, Hosts, the link and page
// size bounds, CrossHostFraction, MaxLatency, the hostile hosts, Domain,
// IPPrefix and IPAuthorities; Page, AllPages and Body know nothing of its
// pages.
const WorldOrder World = "order"

// Fixed pages of every host of WorldOrder, by index in the host; the
// shallow tail (months, pagination, facets, tags) and the articles follow.
const (
	orderHome  = 0 // then the tags index
	orderAbout = 2
	// orderNav is the number of pages every page links in its header
	// and footer: the first ones.
	orderNav       = 3
	orderContact   = orderNav // linked from the about page alone
	orderFirstSect = orderContact + 1
	orderSections  = 6
	orderFirstYear = orderFirstSect + orderSections
	// The archive has a page a year from orderArchiveFrom, at most
	// orderMaxYears, and a page a month.
	orderArchiveFrom = 2010
	orderMaxYears    = 16
	// orderMinPages leaves every host a few pages of each kind.
	orderMinPages = 80

	// The shares of a host's pages in each part of its shallow tail.
	orderMonthShare = 0.07
	orderPagerShare = 0.08
	orderTagShare   = 0.08
	orderFacetShare = 0.12
	// orderListing is the number of articles a listing shows.
	orderListing = 20
	// orderDeepest is the depth of the deepest articles; the shares of
	// the articles at each depth from 3 are orderDepthShare.
	orderDeepest = 6

	// The Zipf-Mandelbrot law of the article links: the article of
	// popularity rank r (from 0) is drawn with weight 1/(r+q)^orderZipfS,
	// q being orderZipfQ among all the articles (the links to other
	// hosts) and orderZipfQLocal among a host's own.
	orderZipfS      = 1.0
	orderZipfQ      = 10.0
	orderZipfQLocal = 2.0
	// orderHomeShare is the share of an article's links to other hosts
	// that lead to a home page rather than to an article.
	orderHomeShare = 0.1
)

var (
	orderDepthShare = [orderDeepest - 2]float64{0.2, 0.3, 0.3, 0.2}
	orderSectNames  = [orderSections]string{"news", "sport", "culture", "science", "travel", "opinion"}
	// orderFacetQueries are the facets of a section's listing, their
	// parameters in canonical order.
	orderFacetQueries = func() []string {
		var out []string
		for _, view := range []string{"", "grid", "list"} {
			for _, sort := range []string{"new", "old", "popular", "az"} {
				q := "sort=" + sort
				if view != "" {
					q += "&view=" + view
				}
				out = append(out, q)
			}
		}
		return out
	}()
)

// orderKind is the kind of a WorldOrder page.
type orderKind uint8

const (
	orderKindHome orderKind = iota
	orderKindTagsIndex
	orderKindStatic
	orderKindSection
	orderKindYear
	orderKindMonth
	orderKindPager
	orderKindFacet
	orderKindTag
	orderKindArticle
)

// orderWorld is a WorldOrder web's pages and links, by page id: the
// pages of host h are ids first[h] to first[h+1]-1, its fixed pages first.
type orderWorld struct {
	first  []int32
	host   []int32
	kind   []orderKind
	depth  []uint8 // the page's level in its host's tree: 0 for the home page
	paths  []string
	off    []int32 // page p links links[off[p]:off[p+1]]: navigation, then content
	links  []int32
	byPath []map[string]int32 // by host: canonical path+query -> id
	bufs   sync.Pool          // *[]byte
}

// orderHost is what building one host's pages leaves for building links.
type orderHost struct {
	h        int
	first    int32
	n        int32
	years    []int32
	months   [][]int32 // by year
	pagers   [orderSections][]int32
	facets   [orderSections][]int32
	tags     []int32
	recent   [orderSections][]int32 // the articles three levels down, by section
	articles []int32                // every article, by level
	sect     map[int32]int          // the section of a page of one
	parent   map[int32]int32        // an article's parent: a pagination page or an article
	children map[int32][]int32      // a page's articles one level down
	artTags  map[int32][]int32
	byRank   []int32   // the articles by popularity
	cdf      []float64 // the Zipf law over byRank
	// the pools listings draw from
	allPagers, allFacets, allRecent, allMonths []int32
}

// buildOrder lays out the pages of every ordinary host and draws their
// links, which are kept; bodies are rendered from them when asked for.
func (w *Web) buildOrder() {
	cfg := &w.cfg
	o := &orderWorld{first: make([]int32, w.nOrdinary+1), byPath: make([]map[string]int32, w.nOrdinary)}
	hosts := make([]*orderHost, w.nOrdinary)
	for h := range w.nOrdinary {
		hosts[h] = o.buildHost(w, h)
		o.first[h+1] = o.first[h] + hosts[h].n
	}
	// Popularity is a random order of every article of the web.
	var all []int32
	for _, oh := range hosts {
		all = append(all, oh.articles...)
	}
	r := newRNG(cfg.Seed, streamOrder, 1<<40, 0)
	for i := len(all) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		all[i], all[j] = all[j], all[i]
	}
	rank := make(map[int32]int32, len(all))
	for i, a := range all {
		rank[a] = int32(i)
	}
	global := zipfCDF(len(all), orderZipfQ)
	for _, oh := range hosts {
		oh.byRank = slices.Clone(oh.articles)
		slices.SortFunc(oh.byRank, func(a, b int32) int { return int(rank[a] - rank[b]) })
		oh.cdf = zipfCDF(len(oh.byRank), orderZipfQLocal)
	}
	mark := make([]int32, o.first[w.nOrdinary])
	o.off = make([]int32, 1, o.first[w.nOrdinary]+1)
	for _, oh := range hosts {
		for p := oh.first; p < oh.first+oh.n; p++ {
			o.links = o.pageLinks(w, hosts, oh, p, all, global, mark, o.links)
			o.off = append(o.off, int32(len(o.links)))
		}
	}
	o.bufs.New = func() any { b := make([]byte, 0, cfg.MaxPageBytes+4<<10); return &b }
	w.order = o
}

// zipfCDF is the cumulative Zipf-Mandelbrot law over n ranks.
func zipfCDF(n int, q float64) []float64 {
	cdf := make([]float64, n)
	sum := 0.0
	for r := range n {
		sum += math.Pow(float64(r)+q, -orderZipfS)
		cdf[r] = sum
	}
	return cdf
}

// draw returns a rank drawn by the law cdf.
func draw(r *rng, cdf []float64) int {
	i, _ := slices.BinarySearch(cdf, r.float()*cdf[len(cdf)-1])
	return min(i, len(cdf)-1)
}

// buildHost lays out host h's pages: their kinds, paths and tree.
func (o *orderWorld) buildHost(w *Web, h int) *orderHost {
	cfg := &w.cfg
	r := newRNG(cfg.Seed, streamOrder, uint64(h), 0)
	n := max(orderMinPages, r.between(cfg.PagesPerHost/2, cfg.PagesPerHost*3/2))
	share := func(s float64, least int) int { return max(least, int(math.Round(s*float64(n)))) }
	nYears := min(orderMaxYears, share(orderMonthShare/12, 1))
	nPager := share(orderPagerShare, orderSections)
	nTags := share(orderTagShare, 4)
	nFacets := min(share(orderFacetShare, orderSections), orderSections*len(orderFacetQueries))
	nArt := n - orderFirstYear - 13*nYears - nPager - nTags - nFacets
	oh := &orderHost{h: h, first: o.first[h], parent: map[int32]int32{}, children: map[int32][]int32{},
		artTags: map[int32][]int32{}, sect: map[int32]int{}}
	byPath := make(map[string]int32, n)
	add := func(k orderKind, depth int, path string) int32 {
		id := int32(len(o.paths))
		o.paths = append(o.paths, path)
		o.kind = append(o.kind, k)
		o.depth = append(o.depth, uint8(depth))
		o.host = append(o.host, int32(h))
		byPath[path] = id
		return id
	}
	add(orderKindHome, 0, "/")
	add(orderKindTagsIndex, 1, "/tags/")
	add(orderKindStatic, 1, "/about/")
	add(orderKindStatic, 2, "/contact/")
	for s := range orderSections {
		oh.sect[add(orderKindSection, 1, "/"+orderSectNames[s]+"/")] = s
	}
	for y := range nYears {
		oh.years = append(oh.years, add(orderKindYear, 1, "/archive/"+strconv.Itoa(orderArchiveFrom+y)+"/"))
	}
	for y := range nYears {
		var ms []int32
		for m := range 12 {
			ms = append(ms, add(orderKindMonth, 2, monthPath(orderArchiveFrom+y, m+1)))
		}
		oh.months = append(oh.months, ms)
		oh.allMonths = append(oh.allMonths, ms...)
	}
	for i := range nPager {
		s := i % orderSections
		id := add(orderKindPager, 2, "/"+orderSectNames[s]+"/?page="+strconv.Itoa(i/orderSections+2))
		oh.pagers[s] = append(oh.pagers[s], id)
		oh.sect[id] = s
		oh.allPagers = append(oh.allPagers, id)
	}
	for i := range nFacets {
		s := i % orderSections
		id := add(orderKindFacet, 2, "/"+orderSectNames[s]+"/?"+orderFacetQueries[i/orderSections])
		oh.facets[s] = append(oh.facets[s], id)
		oh.sect[id] = s
		oh.allFacets = append(oh.allFacets, id)
	}
	words := w.text.words
	perm := make([]int, len(words))
	for i := range perm {
		j := r.intn(i + 1)
		perm[i], perm[j] = perm[j], i
	}
	for i := range nTags {
		name := words[perm[i%len(perm)]]
		if i >= len(perm) {
			name += "-" + strconv.Itoa(i/len(perm)+1)
		}
		oh.tags = append(oh.tags, add(orderKindTag, 2, "/tag/"+name+"/"))
	}
	// Article numbers are a random order of the articles, so that a path
	// tells nothing of an article's depth.
	nums := make([]int, nArt)
	for i := range nums {
		j := r.intn(i + 1)
		nums[i], nums[j] = nums[j], i
	}
	var count [orderDeepest - 2]int
	left := nArt
	for d := range count {
		count[d] = int(math.Round(orderDepthShare[d] * float64(nArt)))
		if d == 0 {
			count[d] = max(count[d], nPager)
		}
		count[d] = min(count[d], left)
		left -= count[d]
	}
	count[len(count)-1] += left
	var prev, cur []int32
	a := 0
	for d, c := range count {
		prev, cur = cur, nil
		for range c {
			var parent int32
			var s int
			switch {
			case d == 0:
				s = a % orderSections
				pg := oh.pagers[s]
				parent = pg[(a/orderSections)%len(pg)]
			case len(prev) > 0:
				parent = prev[r.intn(len(prev))]
				s = oh.sect[parent]
			default:
				continue
			}
			var path []byte
			path = append(path, '/')
			path = append(path, orderSectNames[s]...)
			path = append(path, '/')
			path = strconv.AppendInt(path, int64(orderArchiveFrom+r.intn(orderMaxYears)), 10)
			path = append(path, '/')
			for range r.between(2, 4) {
				path = append(path, words[r.intn(len(words))]...)
				path = append(path, '-')
			}
			path = strconv.AppendInt(path, int64(nums[a]+1), 10)
			path = append(path, ".html"...)
			id := add(orderKindArticle, d+3, string(path))
			oh.parent[id] = parent
			oh.children[parent] = append(oh.children[parent], id)
			oh.sect[id] = s
			oh.articles = append(oh.articles, id)
			if d == 0 {
				oh.recent[s] = append(oh.recent[s], id)
				oh.allRecent = append(oh.allRecent, id)
			}
			// Every tag is some article's first.
			tags := []int32{oh.tags[a%len(oh.tags)]}
			for range r.between(1, 2) {
				if t := oh.tags[r.intn(len(oh.tags))]; !slices.Contains(tags, t) {
					tags = append(tags, t)
				}
			}
			oh.artTags[id] = tags
			cur = append(cur, id)
			a++
		}
	}
	oh.n = int32(len(o.paths)) - oh.first
	o.byPath[h] = byPath
	return oh
}

func monthPath(y, m int) string {
	s := "/archive/" + strconv.Itoa(y) + "/"
	if m < 10 {
		s += "0"
	}
	return s + strconv.Itoa(m) + "/"
}

// pageLinks appends the links of page p to dst: the navigation (the
// host's orderNav pages but p), then the content, each target once and
// never p itself. mark[t] == p+1 says t is among them already.
func (o *orderWorld) pageLinks(w *Web, hosts []*orderHost, oh *orderHost, p int32, all []int32, global []float64, mark []int32, dst []int32) []int32 {
	cfg := &w.cfg
	r := newRNG(cfg.Seed, streamOrder, uint64(oh.h), 1<<32+uint64(p-oh.first))
	start := len(dst)
	mark[p] = p + 1
	add := func(t int32) bool {
		if mark[t] == p+1 {
			return false
		}
		mark[t] = p + 1
		dst = append(dst, t)
		return true
	}
	for i := range int32(orderNav) {
		add(oh.first + i)
	}
	total := r.between(cfg.MinLinks, cfg.MaxLinks)
	room := func() int { return total - (len(dst) - start) }
	otherHost := func() *orderHost {
		k := r.intn(len(hosts) - 1)
		if k >= oh.h {
			k++
		}
		return hosts[k]
	}
	// cross links p to another host: to one of its home and section
	// pages from a page one hop from the home page or less, else to a
	// popular article or, one time in ten, a home page.
	cross := func() {
		if len(hosts) < 2 {
			return
		}
		for range 8 {
			if o.depth[p] < 2 || r.chance(orderHomeShare) {
				t := otherHost()
				k := r.intn(1 + orderSections)
				if k > 0 {
					k += orderFirstSect - 1
				}
				if add(t.first + int32(k)) {
					return
				}
				continue
			}
			if t := all[draw(&r, global)]; o.host[t] != int32(oh.h) && add(t) {
				return
			}
		}
	}
	fill := func(pools ...[]int32) {
		n := 0
		for _, pl := range pools {
			n += len(pl)
		}
		for tries := 0; n > 0 && room() > 0 && tries < 4*total; tries++ {
			k := r.intn(n)
			for _, pl := range pools {
				if k < len(pl) {
					add(pl[k])
					break
				}
				k -= len(pl)
			}
		}
	}
	crossN := 0
	if cfg.CrossHostFraction > 0 {
		crossN = int(math.Round(cfg.CrossHostFraction * float64(total)))
	}
	// A page links what its place in the tree needs (add), then what it
	// has room for beside its links to other hosts (opt, pick), then those
	// links, then what fills it up (fill).
	opt := func(t int32) {
		if room() > crossN {
			add(t)
		}
	}
	pick := func(pool []int32) { // a page of pool not linked yet, if a few tries find one
		for range 4 {
			if len(pool) == 0 || room() <= crossN || add(pool[r.intn(len(pool))]) {
				return
			}
		}
	}
	shallow := func(pools ...[]int32) {
		for range crossN {
			cross()
		}
		fill(pools...)
	}
	if s, ok := oh.sect[p]; ok && o.kind[p] != orderKindSection {
		add(oh.first + orderFirstSect + int32(s)) // the breadcrumb
	}
	// pagers links the pagination pages around page i of section s, and
	// its last, which keeps them all within reach however many there are.
	pagers := func(s, i int) {
		pg := oh.pagers[s]
		for j := max(0, i-2); j <= min(len(pg)-1, i+2); j++ {
			add(pg[j])
		}
		add(pg[len(pg)-1])
	}
	switch o.kind[p] {
	case orderKindHome:
		for s := range int32(orderSections) {
			add(oh.first + orderFirstSect + s)
		}
		for _, y := range oh.years {
			add(y)
		}
		shallow()
	case orderKindSection:
		s := oh.sect[p]
		pagers(s, 0)
		for _, t := range oh.facets[s] {
			add(t)
		}
		for _, t := range oh.pagers[s] {
			opt(t)
		}
		shallow(oh.allPagers, oh.allFacets)
	case orderKindTagsIndex:
		for _, t := range oh.tags {
			opt(t)
		}
		shallow(oh.tags)
	case orderKindStatic:
		if p == oh.first+orderAbout {
			add(oh.first + orderContact)
		}
		shallow(oh.tags, oh.allPagers, oh.allFacets, oh.allMonths)
	case orderKindYear:
		for y, yp := range oh.years {
			if yp == p {
				for _, m := range oh.months[y] {
					add(m)
				}
			}
		}
		for _, yp := range oh.years {
			opt(yp)
		}
		shallow(oh.tags, oh.allMonths)
	case orderKindMonth:
		for range orderListing {
			pick(oh.allRecent)
		}
		shallow(oh.allMonths, oh.tags)
	case orderKindPager, orderKindFacet:
		s := oh.sect[p]
		for _, t := range oh.children[p] {
			add(t)
		}
		if i := slices.Index(oh.pagers[s], p); i >= 0 {
			pagers(s, i)
		}
		for range orderListing - len(oh.children[p]) {
			pick(oh.recent[s])
		}
		for _, t := range oh.facets[s] {
			opt(t)
		}
		shallow(oh.tags, oh.allRecent, oh.pagers[s])
	case orderKindTag:
		for range orderListing {
			pick(oh.allRecent)
		}
		for range 5 {
			pick(oh.tags)
		}
		shallow(oh.tags, oh.allRecent)
	case orderKindArticle:
		// The body: related articles of the host and links to other
		// hosts, mixed; then the series (the article's children and
		// parent) and its tags.
		body := len(dst)
		structure := len(oh.children[p]) + 1 + len(oh.artTags[p])
		for range crossN {
			cross()
		}
		for tries := 0; room()-structure > 0 && tries < 4*total; tries++ {
			add(oh.byRank[draw(&r, oh.cdf)])
		}
		for i := len(dst) - 1; i > body; i-- {
			j := body + r.intn(i-body+1)
			dst[i], dst[j] = dst[j], dst[i]
		}
		for _, t := range oh.children[p] {
			add(t)
		}
		add(oh.parent[p])
		for _, t := range oh.artTags[p] {
			add(t)
		}
	}
	// A page its host cannot fill (the home page, a small host's pages)
	// takes the rest of its links to other hosts' home and section pages.
	for tries := 0; room() > 0 && len(hosts) > 1 && tries < 4*total; tries++ {
		cross()
	}
	return dst
}

// navLinks is the number of navigation links at the head of page p's links.
func (o *orderWorld) navLinks(p int32) int {
	if p-o.first[o.host[p]] < orderNav {
		return orderNav - 1
	}
	return orderNav
}

// OrderGraph returns the link graph of a WorldOrder web, every page of
// its ordinary hosts, with their home pages as the seeds (Seeds' order);
// nil for other worlds. Links to the page itself are left out, as are the
// repeats of the navigation in the footer.
func (w *Web) OrderGraph() *LinkGraph {
	o := w.order
	if o == nil {
		return nil
	}
	n := len(o.paths)
	g := &LinkGraph{URLs: make([]string, n), Hosts: slices.Clone(o.host), Off: slices.Clone(o.off), To: slices.Clone(o.links)}
	for p, path := range o.paths {
		g.URLs[p] = "http://" + w.hosts[o.host[p]].authority + path
	}
	for h := range w.nOrdinary {
		g.Seeds = append(g.Seeds, o.first[h]+orderHome)
	}
	return g
}

// OrderPage returns the id in OrderGraph of the page a logged request
// asked for, if it was a GET of a page of a WorldOrder web answered 200
// (in any spelling the web answers: with tracking parameters, a reordered
// query); false for anything else (robots.txt, a 404, another world).
func (w *Web) OrderPage(req Request) (int32, bool) {
	if w.order == nil || req.Method != http.MethodGet || req.Status != http.StatusOK {
		return 0, false
	}
	h, ok := w.byAuthority[req.Host]
	if !ok || h >= w.nOrdinary {
		return 0, false
	}
	path, query, _ := strings.Cut(req.Path, "?")
	p, ok := w.order.byPath[h][canonicalPath(path, query)]
	return p, ok
}

// serveOrder answers a request of a WorldOrder host; robots.txt has been
// answered already.
func (w *Web) serveOrder(rw *logWriter, r *http.Request, h *host) {
	o := w.order
	p, ok := o.byPath[h.idx][canonicalPath(r.URL.EscapedPath(), r.URL.RawQuery)]
	if !ok {
		writeBody(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundBody)
		return
	}
	bp := o.bufs.Get().(*[]byte)
	b := w.renderOrder((*bp)[:0], p)
	writeBody(rw, r, http.StatusOK, "text/html; charset=utf-8", b)
	*bp = b[:0]
	o.bufs.Put(bp)
}

// renderOrder appends the body of page p: its size drawn between
// MinPageBytes and MaxPageBytes, reached with prose once the markup is
// known.
func (w *Web) renderOrder(dst []byte, p int32) []byte {
	r := newRNG(w.cfg.Seed, streamOrder, uint64(p), 2<<32)
	size := r.between(w.cfg.MinPageBytes, w.cfg.MaxPageBytes)
	start := len(dst)
	probe := w.renderOrderOnce(dst, p, r, 0)
	fill := max(1<<10, size-(len(probe)-start))
	return w.renderOrderOnce(probe[:start], p, r, fill)
}

// renderOrderOnce renders page p with fill bytes of prose; r is passed by
// value so that both passes draw alike.
func (w *Web) renderOrderOnce(dst []byte, p int32, r rng, fill int) []byte {
	o := w.order
	h := w.hosts[o.host[p]]
	links := o.links[o.off[p]:o.off[p+1]]
	content := links[o.navLinks(p):]
	pr := newRNG(w.cfg.Seed, streamOrder, uint64(p), 3<<32)
	anchor := func(dst []byte, t int32) []byte {
		dst = append(dst, `<a href="`...)
		if o.host[t] != o.host[p] {
			dst = append(dst, "http://"...)
			dst = append(dst, w.hosts[o.host[t]].authority...)
		}
		dst = appendEscapedPath(dst, o.paths[t])
		dst = append(dst, `">`...)
		ar := newRNG(w.cfg.Seed, streamOrder, uint64(t), 4<<32)
		dst = w.text.appendWords(dst, &ar, ar.between(1, 4))
		return append(dst, "</a>"...)
	}
	nav := func(dst []byte) []byte {
		dst = append(dst, "<nav><ul>\n"...)
		first := o.first[o.host[p]]
		for i := range int32(orderNav) {
			dst = append(dst, "<li>"...)
			dst = anchor(dst, first+i)
			dst = append(dst, "</li>\n"...)
		}
		return append(dst, "</ul></nav>\n"...)
	}
	dst = append(dst, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	dst = w.text.appendWords(dst, &r, r.between(3, 8))
	dst = append(dst, " | "...)
	dst = append(dst, h.name...)
	dst = append(dst, "</title>\n<meta name=\"description\" content=\""...)
	dst = w.text.appendWords(dst, &r, r.between(10, 20))
	dst = append(dst, "\">\n</head>\n<body>\n<header>\n"...)
	dst = nav(dst)
	dst = append(dst, "</header>\n<main>\n<h1>"...)
	dst = w.text.appendWords(dst, &r, r.between(4, 9))
	dst = append(dst, "</h1>\n"...)
	// Prose in paragraphs, each with a few of the content links.
	paras := max(3, (len(content)+5)/6)
	per := fill / paras
	ci := 0
	for i := range paras {
		n := per
		if i == paras-1 {
			n = fill - per*(paras-1)
		}
		dst = append(dst, "<p>"...)
		dst = w.text.appendExact(dst, &pr, n/2)
		for k := 0; k < 6 && ci < len(content); k, ci = k+1, ci+1 {
			dst = append(dst, ' ')
			dst = anchor(dst, content[ci])
			dst = append(dst, ' ')
		}
		dst = w.text.appendExact(dst, &pr, n-n/2)
		dst = append(dst, "</p>\n"...)
	}
	dst = append(dst, "</main>\n<footer>\n"...)
	dst = nav(dst)
	dst = append(dst, "<p>&copy; 2026 "...)
	dst = append(dst, h.name...)
	return append(dst, "</p>\n</footer>\n</body>\n</html>\n"...)
}
