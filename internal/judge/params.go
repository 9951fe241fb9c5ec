package judge

import (
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
// (ObserveParams): two URLs of a host that differ in that one parameter's
// value alone, whose pages read the same, word for word (the same
// fingerprint, not a near one), are evidence that it changes nothing;
// two that read differently prove that it matters, and then it is never
// learnt. Once inertEvidence pairs, on two paths of the host at least,
// have shown it and none has proved otherwise, the host's links are
// queued without it. A single path is not enough: a search page that
// answers "no results" to every query would teach that its query is
// inert. What is learnt is kept in memory only: after a restart it is
// learnt again, from a few pairs.
const (
	inertEvidence = 3
	// maxParamHosts bounds the hosts whose evidence is kept, and
	// maxHostParams the parameters of one host: past them nothing more is
	// learnt, and what was learnt stays. maxVariants bounds the pages
	// remembered to compare others with (forgotten all at once when full),
	// and maxVariantParams the parameters of a URL that are compared.
	maxParamHosts    = 1 << 16
	maxHostParams    = 16
	maxVariants      = 1 << 15
	maxVariantParams = 4
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
// its fingerprint.
type variant struct {
	pair string
	fp   uint64
}

type hostParams struct {
	seen  map[string]*evidence // by parameter name
	inert map[string]bool
}

// evidence is what pairs of pages have shown of one parameter.
type evidence struct {
	pairs   int
	path    string // the first pair's path
	paths   bool   // a pair on another path came since
	matters bool   // a pair read differently
}

// observe takes a page fetched at u (canonical, with a query) whose words
// have the fingerprint fp, compares it with the pages remembered whose
// URLs differ from u in one parameter's value, and remembers it. It
// returns the parameter this made inert, if any, and its host.
func (ps *params) observe(u canon.URL, fp uint64) (host, name string) {
	if u.NQuery == 0 || u.NQuery > maxVariantParams {
		return "", ""
	}
	base := strings.TrimSuffix(u.String, "?"+u.Query)
	pairs := strings.Split(u.Query, "&")
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.variants == nil || len(ps.variants) >= maxVariants {
		ps.variants = make(map[string]variant, 64)
	}
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
		v, ok := ps.variants[key.String()]
		ps.variants[key.String()] = variant{pair: pair, fp: fp}
		if ok && v.pair != pair {
			if ps.evidence(u.Authority, u.Path, name, v.fp == fp) {
				return u.Authority, name
			}
		}
	}
	return "", ""
}

// evidence counts a pair of pages of host, on path, whose URLs differ in
// parameter name alone: same says they read the same. It reports whether
// the pair made the parameter inert.
func (ps *params) evidence(host, path, name string, same bool) bool {
	if ps.hosts == nil {
		ps.hosts = map[string]*hostParams{}
	}
	h := ps.hosts[host]
	if h == nil {
		if len(ps.hosts) >= maxParamHosts {
			return false
		}
		h = &hostParams{seen: map[string]*evidence{}}
		ps.hosts[host] = h
	}
	e := h.seen[name]
	if e == nil {
		if len(h.seen) >= maxHostParams {
			return false
		}
		e = &evidence{path: path}
		h.seen[name] = e
	}
	if !same {
		e.matters = true
		return false
	}
	e.pairs++
	e.paths = e.paths || path != e.path
	if e.pairs < inertEvidence || !e.paths || e.matters || h.inert[name] {
		return false
	}
	if h.inert == nil {
		h.inert = map[string]bool{}
	}
	h.inert[name] = true
	ps.any.Store(true)
	return true
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

// ObserveParams takes a page fetched at u, a canonical URL with a query,
// whose words have the fingerprint fp (simhash): pages whose URLs differ
// in one parameter's value, read the same or not, teach whether the
// parameter changes anything. Once one is learnt inert, the host's links
// are queued without it.
func (j *Judge) ObserveParams(u canon.URL, fp uint64) {
	if host, name := j.params.observe(u, fp); name != "" {
		j.cfg.Log.Info("query parameter learnt inert: the host's pages read the same whatever its value; its links are queued without it",
			"host", host, "parameter", name, "pairs", inertEvidence)
	}
}

// InertParams returns the number of hosts with a query parameter learnt
// inert (ObserveParams), and the first most of those parameters, by host
// name, each as "host: name".
func (j *Judge) InertParams(most int) (hosts int, named []string) { return j.params.inertHosts(most) }

// WithoutInertParams returns u without the query parameters learnt inert
// on its host, and whether it had any.
func (j *Judge) WithoutInertParams(u canon.URL) (canon.URL, bool) { return j.params.strip(u) }
