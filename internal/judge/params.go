package judge

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/weft-crawler/weft/internal/canon"
)

// Inert parameters: a query parameter that a host puts in its links but
// that changes nothing its pages show, such as a session id or a nonce
// minted at each answer under a name no list of tracking parameters
// holds (?visit=, ?s=, ?cid=). Every page then links to variants of every
// other page, each fetched for nothing, and the near-duplicates they make
// can cut the host off as a trap before its real pages are found.
//
// The crawl learns such a parameter from the pages it fetches
// (ObserveParams). Two pages whose URLs differ in that one parameter's
// value alone are compared whole, modulo the parameter: their words, word
// for word (extract.TextHash), their links to their own host with the
// parameter dropped, their links elsewhere and their embeds as they are,
// in order. The same page so is evidence that the parameter changes
// nothing. A different one proves that it matters, and it is then never
// learnt (or unlearnt), unless the two differ only in the values of
// other parameters of their own host's links (a second nonce): that pair
// proves nothing. Pages read in part, pages of few words and pages to be
// rendered teach nothing. Once inertEvidence pairs have shown it, of two
// different pages at least, and none has proved otherwise, the host's
// page links are queued without it (not its seeds, sitemaps, requisites
// and redirect targets). Pairs of one page are not enough: a login wall,
// a soft 404 or a search page that answers every query alike would teach
// that its query is inert. An embed that carries the parameter (a
// gallery's /img.php?photo=) keeps the pages apart. What is learnt is
// kept in memory only: after a restart it is learnt again, from a few
// pairs; and once learnt, pages with the parameter are no longer
// fetched, so it is seldom unlearnt.
const (
	inertEvidence = 3
	// maxParamHosts bounds the hosts whose evidence is kept, and
	// maxHostParams the parameters of one host: past them nothing more is
	// learnt, and what was learnt stays. maxVariants bounds the pages
	// remembered to compare others with (forgotten all at once when full),
	// and maxObservedParams the parameters of a URL that are compared.
	maxParamHosts     = 1 << 16
	maxHostParams     = 16
	maxVariants       = 1 << 17
	maxObservedParams = 4
)

// params is what the crawl has learnt of the hosts' parameters. It is
// safe for concurrent use; a crawl that has learnt nothing pays one atomic
// load a link for it.
type params struct {
	any      atomic.Bool // a parameter of some host is inert
	mu       sync.RWMutex
	hosts    map[string]*hostParams
	variants map[string]variant // by the URL without one parameter, and that parameter's name
}

// variant is a page fetched: one parameter of its URL, as name=value, and
// what the page is with that parameter dropped from its links.
type variant struct {
	pair  string
	sig   uint64 // Page.signature of the parameter
	loose uint64 // Page.signature of every parameter
}

type hostParams struct {
	seen  map[string]*evidence // by parameter name
	inert map[string]bool
}

// evidence is what pairs of pages have shown of one parameter.
type evidence struct {
	pairs   int
	text    uint64 // the words of the first pair's page
	pages   bool   // a pair of another page came since
	matters bool   // a pair differed
}

// Page is a page fetched whole, for ObserveParams: its canonical URL (with
// a query), the hash of its words (extract.TextHash), and its links and
// embeds, resolved, in the order read. ObserveParams reads its slices
// during the call only.
type Page struct {
	URL    canon.URL
	Text   uint64
	Words  int // the words the hash is of
	Links  []string
	Embeds []string
}

// minObservedWords is the fewest words of a page that teaches whether its
// URL's parameters change anything: fewer say too little of what it is.
const minObservedWords = 50

// Observes reports whether a page at u may teach anything of its
// parameters (ObserveParams): its URL has a query of a few of them. The
// crawl reads its embeds for it.
func Observes(u canon.URL) bool { return u.NQuery > 0 && u.NQuery <= maxObservedParams }

// signature is what the page is with the parameter name dropped from its
// links to its own host, or, with name "", every parameter of them: its
// words' hash folded with its links and its embeds, in order.
func (pg *Page) signature(name string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], pg.Text)
	h.Write(b[:])
	own := pg.URL.Authority + "/"
	drop := func(n string) bool { return name == "" || n == name }
	for _, l := range pg.Links {
		if _, rest, _ := strings.Cut(l, "://"); strings.HasPrefix(rest, own) {
			l = canon.DropParams(l, drop)
		}
		h.Write([]byte(l))
		h.Write([]byte{0})
	}
	h.Write([]byte{1})
	for _, e := range pg.Embeds {
		h.Write([]byte(e))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// observe compares pg with the pages remembered whose URLs differ from
// its own in one parameter's value, and remembers it. It returns the
// parameter this made inert, if any, and what it unlearnt.
func (ps *params) observe(pg *Page) (learnt, unlearnt string) {
	u := pg.URL
	if !Observes(u) || pg.Words < minObservedWords {
		return "", ""
	}
	base := strings.TrimSuffix(u.String, "?"+u.Query)
	pairs := strings.Split(u.Query, "&")
	keys := make([]string, len(pairs))
	sigs := make([]uint64, len(pairs))
	loose := pg.signature("")
	for i, pair := range pairs {
		name, _, _ := strings.Cut(pair, "=")
		var key strings.Builder
		key.WriteString(base)
		key.WriteByte('?')
		for k, other := range pairs {
			if k != i {
				key.WriteString(other)
				key.WriteByte('&')
			}
		}
		key.WriteByte(0)
		key.WriteString(name)
		keys[i], sigs[i] = key.String(), pg.signature(name)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.variants == nil || len(ps.variants) >= maxVariants {
		ps.variants = make(map[string]variant, 64)
	}
	for i, pair := range pairs {
		v, ok := ps.variants[keys[i]]
		ps.variants[keys[i]] = variant{pair: pair, sig: sigs[i], loose: loose}
		if !ok || v.pair == pair || v.sig != sigs[i] && v.loose == loose {
			continue // no pair, or one that differs only in other parameters' values
		}
		name, _, _ := strings.Cut(pair, "=")
		switch l, un := ps.evidence(u.Authority, pg.Text, name, v.sig == sigs[i]); {
		case l:
			learnt = name
		case un:
			unlearnt = name
		}
	}
	return learnt, unlearnt
}

// evidence counts a pair of pages of host, of words text, whose URLs
// differ in parameter name alone: same says they are the same page. It
// reports whether the pair made the parameter inert, or unlearnt it.
func (ps *params) evidence(host string, text uint64, name string, same bool) (learnt, unlearnt bool) {
	if ps.hosts == nil {
		ps.hosts = map[string]*hostParams{}
	}
	h := ps.hosts[host]
	if h == nil {
		if len(ps.hosts) >= maxParamHosts {
			return false, false
		}
		h = &hostParams{seen: map[string]*evidence{}}
		ps.hosts[host] = h
	}
	e := h.seen[name]
	if e == nil {
		if len(h.seen) >= maxHostParams {
			return false, false
		}
		e = &evidence{text: text}
		h.seen[name] = e
	}
	if !same {
		e.matters = true
		if h.inert[name] {
			delete(h.inert, name)
			return false, true
		}
		return false, false
	}
	e.pairs++
	e.pages = e.pages || text != e.text
	if e.pairs < inertEvidence || !e.pages || e.matters || h.inert[name] {
		return false, false
	}
	if h.inert == nil {
		h.inert = map[string]bool{}
	}
	h.inert[name] = true
	ps.any.Store(true)
	return true, false
}

// strip returns u without the parameters learnt inert on its host, and
// whether it dropped any.
func (ps *params) strip(u canon.URL) (canon.URL, bool) {
	if u.NQuery == 0 || !ps.any.Load() {
		return u, false
	}
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	h := ps.hosts[u.Authority]
	if h == nil || len(h.inert) == 0 {
		return u, false
	}
	return u.WithoutParams(func(name string) bool { return h.inert[name] })
}

// inertHosts returns the number of hosts with a parameter learnt inert,
// and the first most of them (by name), each as "host: name".
func (ps *params) inertHosts(most int) (int, []string) {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	var named []string
	for host, h := range ps.hosts {
		for name := range h.inert {
			named = append(named, host+": "+name)
		}
	}
	slices.Sort(named)
	hosts := 0
	for _, h := range ps.hosts {
		if len(h.inert) > 0 {
			hosts++
		}
	}
	return hosts, named[:min(len(named), most)]
}

// ObserveParams takes a page fetched whole whose URL has a query: pages
// whose URLs differ in one parameter's value, the same page or not,
// teach whether the parameter changes anything. Once one is learnt inert,
// the host's page links are queued without it.
func (j *Judge) ObserveParams(pg *Page) {
	learnt, unlearnt := j.params.observe(pg)
	if learnt != "" {
		j.cfg.Log.Info("query parameter learnt inert: the host's pages are the same whatever its value; its links are queued without it",
			"host", pg.URL.Authority, "parameter", learnt, "pairs", inertEvidence)
	}
	if unlearnt != "" {
		j.cfg.Log.Info("query parameter learnt inert found to matter: the host's links keep it again",
			"host", pg.URL.Authority, "parameter", unlearnt, "url", pg.URL.String)
	}
}

// InertParams returns the number of hosts with a query parameter learnt
// inert (ObserveParams), and the first most of those parameters, by host
// name, each as "host: name".
func (j *Judge) InertParams(most int) (hosts int, named []string) { return j.params.inertHosts(most) }

// WithoutInertParams returns u without the query parameters learnt inert
// on its host, and whether it had any. It is for a page's links: a seed,
// a sitemap and a requisite keep their parameters.
func (j *Judge) WithoutInertParams(u canon.URL) (canon.URL, bool) { return j.params.strip(u) }
