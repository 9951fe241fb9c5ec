package judge

import (
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/crawllog"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/scope"
)

// Offsite redirectors: a host's click tracker or affiliate link
// (/out?url=..., /go/1234) is one URL of its own for each link out, and
// each answers with a redirect out of the crawl's scope. A news or shop
// site links a dozen of them from every page, and a crawl spends most of
// its requests on them for nothing.
//
// The judge learns them by shape: a URL's pattern (scope.Pattern: its
// host and path, digits and tokens written alike) and the names of its
// query parameters, so that /index.php?action=out&url= and
// /index.php?topic= are two shapes; and a URL that adds parameters to
// the page that links it by its variant shape too (variantShape: a
// blog's share buttons, /2026/12/a-slug/?share=twitter, under every
// post). Once redirectEvidence URLs of one
// shape have all redirected out of the scope, to redirectHosts other
// hosts at least, and none has answered as a page (a 2xx or a 304) or
// redirected to a page within the scope, the shape's further page links
// are refused when found (OffsiteRedirect), and those queued before are
// dropped unrequested when leased, but one in probeEvery, and fewer as
// the shape refuses more (probeFor), which is asked for: should it
// answer as a page or redirect within the scope, the shape is unlearnt. A redirect to the same shape (http to https) and one
// refused for another reason than the scope say nothing; a section moved
// to one other site, whose redirects all go to one host, is not learnt.
// Seeds, requisites, sitemaps and what sitemaps list are never refused so.
// What is learnt is kept in memory only, for at most maxRedirectShapes
// shapes, and the pages' shapes among them: past that nothing more is
// learnt.
const (
	redirectEvidence  = 10
	redirectHosts     = 3
	probeEvery        = 50
	maxRedirectShapes = 1 << 18
)

type redirectors struct {
	any    atomic.Bool // a shape has been learnt
	mu     sync.RWMutex
	shapes map[string]*redirectState // by shapeOf
	learnt int
}

type redirectState struct {
	out     int      // redirects out of the scope
	targets []string // the first redirectHosts hosts they went to
	in      bool     // a page, or a redirect to one within the scope
	learnt  bool
	judged  atomic.Uint64 // URLs judged since it was learnt, found or leased (probeFor)
}

// shapeOf is u's pattern and the sorted names of its query's parameters.
func shapeOf(u canon.URL) string {
	p := scope.Pattern(u)
	if u.Query == "" {
		return p
	}
	var names []string
	for pair := range strings.SplitSeq(u.Query, "&") {
		n, _, _ := strings.Cut(pair, "=")
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return p + "?" + strings.Join(names, "&")
}

// variantShape is the shape of u as a variant of via, the page that
// links it, when u is via's own URL with parameters added to its query
// and none of via's dropped or changed (a blog's ?replytocom= under each
// comment, ?share=twitter, ?amp=1, a print view): its host and the names
// of the parameters added, sorted ("host?+replytocom"); else "". Each of
// a site's pages under a slug of its own is a shape of its own (shapeOf
// keeps words), with a few variants: the judge would learn nothing of
// them, page by page, while its host's every page has them. Put
// together by what they add, they are learnt once for the host (walls,
// offsite redirectors). It never equals a shapeOf, whose host is
// followed by a path. A redirect's target is judged as a variant of
// the URL that redirected to it (the lease's Via), which it seldom is.
func variantShape(u canon.URL, via string) string {
	if u.Query == "" || !strings.Contains(via, u.Path) {
		return ""
	}
	path, q, ok := pathQuery(u.Authority, via)
	if !ok || path != u.Path || len(q) >= len(u.Query) {
		return ""
	}
	for name, value := range canon.Params(q) {
		if v, in := canon.ParamValue(u.Query, name); !in || v != value {
			return ""
		}
	}
	var added []string
	for name := range canon.Params(u.Query) {
		if _, in := canon.ParamValue(q, name); !in && !slices.Contains(added, name) {
			added = append(added, name)
		}
	}
	if len(added) == 0 {
		return ""
	}
	slices.Sort(added)
	return u.Authority + "?+" + strings.Join(added, "&")
}

// toolHash is the hash (fnvString) of the shape of u, a URL without a
// query, as a tool of via, the page that links it, and false for none.
// u is a tool when its path names via's page, by the last segment of
// via's path, in a path of its own (MediaWiki's
// /wiki/Special:WhatLinksHere/Paris and /wiki/Talk:Paris, linked from
// /wiki/Paris; a /comments/ or /print/ view of an article), and via has
// no query; its shape is its host and its path with the name written
// "\x00" ("host?/wiki/Special:WhatLinksHere/\x00"; toolShape in the
// tests builds it). Each of a wiki's articles is a shape of its own
// (shapeOf keeps words), and so is each of its tools; put together by
// what they name, they are learnt once, as walls only, and from closed
// pages and copies of their page only (judgeWalls). The name is a
// segment of u's path, or the end of one after a ':' (a wiki's
// namespace). The page itself with or without a trailing slash (a
// redirect's target) is none. A shape never equals a shapeOf, nor a
// query's variant shape ("host?+").
func toolHash(u canon.URL, via string) (uint64, bool) {
	at, end, ok := toolName(u, via)
	if !ok {
		return 0, false
	}
	h := fnvByte(fnvString(fnvOffset, u.Authority), '?')
	return fnvString(fnvByte(fnvString(h, u.Path[:at]), 0), u.Path[end:]), true
}

// toolName finds where u's path names via's page (toolHash): the name is
// u.Path[at:end].
func toolName(u canon.URL, via string) (at, end int, ok bool) {
	path, q, ok := pathQuery(u.Authority, via)
	if !ok || q != "" || strings.TrimSuffix(path, "/") == strings.TrimSuffix(u.Path, "/") {
		return 0, 0, false
	}
	name := strings.TrimSuffix(path, "/")
	name = name[strings.LastIndexByte(name, '/')+1:]
	if name == "" {
		return 0, 0, false
	}
	for end := len(u.Path); end > 0; {
		start := strings.LastIndexByte(u.Path[:end], '/') + 1
		if rest, ok := strings.CutSuffix(u.Path[start:end], name); ok && (rest == "" || strings.HasSuffix(rest, ":")) {
			return end - len(name), end, true
		}
		end = start - 1
	}
	return 0, 0, false
}

// state returns the state of shape k, made if missing and there is room
// (nil otherwise). Under the write lock.
func (r *redirectors) state(k string) *redirectState {
	if r.shapes == nil {
		r.shapes = map[string]*redirectState{}
	}
	s := r.shapes[k]
	if s == nil && len(r.shapes) < maxRedirectShapes {
		s = &redirectState{}
		r.shapes[k] = s
	}
	return s
}

// sawIn records that a URL of shape s answered as a page, or led to one
// within the scope: it is no offsite redirector. Under the write lock.
func (r *redirectors) sawIn(s *redirectState) {
	s.in = true
	if s.learnt {
		s.learnt = false
		r.learnt--
	}
}

// redirected takes a redirect from a URL of shape k to a URL of host to:
// out says it left the scope for another host, in that it led to a page
// within it. It reports whether that made the shape an offsite
// redirector.
func (r *redirectors) redirected(k, to string, out, in bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state(k)
	switch {
	case s == nil:
		return false
	case in:
		r.sawIn(s)
		return false
	case !out:
		return false
	}
	s.out++
	if len(s.targets) < redirectHosts && !slices.Contains(s.targets, to) {
		s.targets = append(s.targets, to)
	}
	if s.in || s.learnt || s.out < redirectEvidence || len(s.targets) < redirectHosts {
		return false
	}
	s.learnt = true
	r.learnt++
	r.any.Store(true)
	return true
}

// answered takes a page that answered at u (a 2xx or a 304), linked from
// via: its shape, and its variant shape, are no offsite redirector.
func (r *redirectors) answered(u canon.URL, via string) {
	r.answeredShape(shapeOf(u))
	if k := variantShape(u, via); k != "" {
		r.answeredShape(k)
	}
}

func (r *redirectors) answeredShape(k string) {
	r.mu.RLock()
	s := r.shapes[k]
	in := s != nil && s.in
	r.mu.RUnlock()
	if in {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s = r.state(k); s != nil {
		r.sawIn(s)
	}
}

// offsite reports whether u's shape, or its variant shape as linked from
// via, is a learnt offsite redirector, and u not one of the URLs let
// through to probe it (by its hash, probeFor, fewer as the shape judges
// more: a URL let through when found may be dropped when leased, a
// little later, but not the other way round).
func (r *redirectors) offsite(u canon.URL, via string) bool {
	if !r.any.Load() {
		return false
	}
	k := shapeOf(u)
	r.mu.RLock()
	defer r.mu.RUnlock()
	s := r.shapes[k]
	if s == nil || !s.learnt {
		if k = variantShape(u, via); k == "" {
			return false
		}
		if s = r.shapes[k]; s == nil || !s.learnt {
			return false
		}
	}
	return !probeFor(fnvString(fnvOffset, u.String), s.judged.Add(1), probeEvery)
}

// probeFor reports whether a URL of hash h is let through to probe what
// was learnt of its shape, which has judged n URLs: one in every (by the
// hash) of the shape's first every URLs, then one in twice as many, and
// so on up to one in every<<maxProbeShift, so that a shape of a million
// URLs costs some thirty probes, not twenty thousand, and one that keeps
// coming is still probed now and then. A URL that is a probe at one
// period is one at every shorter period.
func probeFor(h, n, every uint64) bool {
	return h%(every<<min(bits.Len64(n/every), maxProbeShift)) == 0
}

// maxProbeShift bounds how far probes thin out: one URL in 51,200 at the
// most for a period of 50.
const maxProbeShift = 10

// Redirected takes where a URL, linked from via, redirected: to, whose
// verdict is why ("" when queued). A redirect to another host refused by
// the scope is one out of it; one queued, known or handed to another
// node, to another shape, leads to a page within it. Once
// redirectEvidence URLs of a shape (or of a variant shape) have all gone
// out, to several hosts, the shape's URLs are refused (OffsiteRedirect).
func (j *Judge) Redirected(from canon.URL, via string, to canon.URL, why string) {
	shape := shapeOf(from)
	out := why == Scope && to.Authority != from.Authority
	in := (why == "" || why == Seen || why == Forwarded) && shapeOf(to) != shape
	for _, k := range [2]string{shape, variantShape(from, via)} {
		if k != "" && j.redirectors.redirected(k, to.Authority, out, in) {
			j.cfg.Log.Info("URL shape learnt to redirect out of the crawl's scope: its URLs are no longer asked for, but a few probes",
				"host", from.Authority, "shape", k, "redirects", redirectEvidence)
		}
	}
}

// Answered takes a page that answered at u, linked from via (a 2xx, or a
// 304 to a conditional request): its shape, and its variant shape, are
// no offsite redirector.
func (j *Judge) Answered(u canon.URL, via string) { j.redirectors.answered(u, via) }

// OffsiteRedirector reports whether u, linked from via, is a URL of a
// shape (or a variant shape) its host has shown to redirect out of the
// crawl's scope, and nowhere else (but for its probes, probeFor, which
// are asked for again).
func (j *Judge) OffsiteRedirector(u canon.URL, via string) bool {
	return j.redirectors.offsite(u, via)
}

// Dropped says why the lease l of u is not requested, for what the judge
// has learnt since its URL was queued ("" when it is): a page link whose
// host's parameter was learnt inert (InertParam; su is the URL without
// it), or that Learnt stops (a shape that redirects out of scope, a wall
// of copies or a barren parameter, which hold it again if it was never
// fetched, a directory cut off), or a redirect's target into a wall.
// Seeds and their redirects, requisites, sitemaps, what sitemaps list
// and robots.txt hops are kept.
func (j *Judge) Dropped(l frontier.Lease, u canon.URL) (why string, su canon.URL) {
	if l.Depth == 0 || l.Requisite || l.Sitemap || l.RobotsFor != "" || l.Fetch != "" ||
		strings.HasSuffix(l.Path, string(crawllog.Manifest)) {
		return "", su
	}
	target := l.Hops > 0
	if su, ok := j.WithoutInertParams(u); ok && !target {
		return InertParam, su
	}
	return j.Learnt(u, l.Via, l.Priority == HeldPriority, target), su
}

// Learnt says why a page link queued before is not requested when
// leased, for what the judge has learnt of its host since: its shape
// redirects out of the crawl's scope (OffsiteRedirect), it leads from
// another family of its host into a wall of copies (HeldCopies, walls.go),
// or, in a crawl that ends (Config.Ends), it carries a parameter since
// learnt barren (HeldBarren, barren.go), or it is in a directory since
// cut off for its copies, as deep as they were (Trap, cutdirs.go); "" when
// it is not. One held (held: at HeldPriority, leased by a continuous crawl
// when nothing else waits) is not stopped by a wall or a barren
// parameter, which its caller holds again otherwise (Hold). A redirect's
// target (target) is stopped only by a wall: the login page a gated link
// redirects to, queued before the wall was learnt, as one queued after is
// held.
func (j *Judge) Learnt(u canon.URL, via string, held, target bool) string {
	switch {
	case !target && j.redirectors.offsite(u, via):
		return OffsiteRedirect
	case !held && j.walled(u, via):
		return HeldCopies
	case !held && !target && j.cfg.Ends && j.budgets.barrenLink(u, via, 2*barrenAfter) != "":
		return HeldBarren
	case !target && j.copies.inCutDir(u):
		return Trap
	}
	return ""
}

// OffsiteRedirectors returns the number of URL shapes learnt to redirect
// out of the crawl's scope.
func (j *Judge) OffsiteRedirectors() int { return j.redirectors.count() }

// count is the number of shapes learnt.
func (r *redirectors) count() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.learnt
}
