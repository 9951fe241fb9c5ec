package judge

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/scope"
)

// Offsite redirectors: a host's click tracker or affiliate link
// (/out?url=..., /go/1234) is one URL of its own for each link out, and
// each answers with a redirect out of the crawl's scope. A news or shop
// site links a dozen of them from every page, and a crawl spends most of
// its requests on them for nothing.
//
// The judge learns them by URL pattern (scope.Pattern: the path, digits
// and tokens written alike, without the query): once redirectEvidence
// URLs of one pattern of a host have all redirected out of scope, to
// redirectHosts hosts at least, and none has redirected within it or
// answered as a page, the host's further URLs of that pattern are refused
// when found (OffsiteRedirect), and those queued before are dropped
// unrequested when leased. One redirect within the scope, or one page,
// and the pattern is never learnt; nor is a section moved to one other
// site, whose redirects all go to its host. What is learnt is kept in
// memory only.
const (
	redirectEvidence = 10
	redirectHosts    = 3
	// maxRedirectPatterns bounds the patterns whose answers are kept:
	// past it nothing more is learnt, and what was learnt stays.
	maxRedirectPatterns = 1 << 16
)

// OffsiteRedirect: a URL of a pattern of its host whose every URL asked
// for so far redirected out of the crawl's scope (a click tracker).
const OffsiteRedirect = "offsite-redirect"

type redirectors struct {
	any      atomic.Bool // a pattern has been learnt
	mu       sync.RWMutex
	patterns map[string]*redirectState // by authority, NUL, pattern
	hosts    map[string]int            // authority -> its patterns learnt
}

type redirectState struct {
	out     int      // redirects out of the scope
	targets []string // the first redirectHosts hosts they went to
	in      bool     // a redirect within it, or a page
	learnt  bool
}

func redirectKey(u canon.URL) string { return u.Authority + "\x00" + scope.Pattern(u) }

// redirected takes the verdict on where a URL of u's pattern redirected
// to, a URL of host to: out of the scope, or not. It reports whether that
// made the pattern an offsite redirector.
func (r *redirectors) redirected(u canon.URL, to string, out bool) bool {
	k := redirectKey(u)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.patterns == nil {
		r.patterns, r.hosts = map[string]*redirectState{}, map[string]int{}
	}
	s := r.patterns[k]
	if s == nil {
		if len(r.patterns) >= maxRedirectPatterns {
			return false
		}
		s = &redirectState{}
		r.patterns[k] = s
	}
	if !out {
		s.in = true
		if s.learnt { // found within the scope after all: forgotten
			s.learnt = false
			r.hosts[u.Authority]--
		}
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
	r.hosts[u.Authority]++
	r.any.Store(true)
	return true
}

// answered takes a page that answered at u (not a redirect): its pattern
// is no offsite redirector.
func (r *redirectors) answered(u canon.URL) {
	k := redirectKey(u)
	r.mu.RLock()
	s := r.patterns[k]
	r.mu.RUnlock()
	if s != nil && s.in {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.patterns == nil {
		r.patterns, r.hosts = map[string]*redirectState{}, map[string]int{}
	}
	if s = r.patterns[k]; s == nil {
		if len(r.patterns) >= maxRedirectPatterns {
			return
		}
		s = &redirectState{}
		r.patterns[k] = s
	}
	s.in = true
	if s.learnt {
		s.learnt = false
		r.hosts[u.Authority]--
	}
}

// offsite reports whether u's pattern is a learnt offsite redirector.
func (r *redirectors) offsite(u canon.URL) bool {
	if !r.any.Load() {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.hosts[u.Authority] <= 0 {
		return false
	}
	s := r.patterns[redirectKey(u)]
	return s != nil && s.learnt
}

// learnt returns the number of patterns learnt.
func (r *redirectors) learnt() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := 0
	for _, c := range r.hosts {
		n += c
	}
	return n
}

// Redirected takes where a URL redirected: to, whose verdict is why (""
// when queued), out of the scope when it is Scope. Once redirectEvidence
// URLs of a pattern of a host have all gone out of it, to several hosts,
// the pattern's URLs are refused (OffsiteRedirect).
func (j *Judge) Redirected(from, to canon.URL, why string) {
	if j.redirectors.redirected(from, to.Authority, why == Scope) {
		j.cfg.Log.Info("URL pattern learnt to redirect out of the crawl's scope: its URLs are no longer asked for",
			"host", from.Authority, "pattern", scope.Pattern(from), "redirects", redirectEvidence)
	}
}

// Answered takes a page that answered at u with something other than a
// redirect: its pattern is no offsite redirector.
func (j *Judge) Answered(u canon.URL) { j.redirectors.answered(u) }

// OffsiteRedirector reports whether u is a URL of a pattern its host has
// shown to redirect out of the crawl's scope, and nowhere else.
func (j *Judge) OffsiteRedirector(u canon.URL) bool { return j.redirectors.offsite(u) }

// OffsiteRedirectors returns the number of URL patterns learnt to
// redirect out of the crawl's scope.
func (j *Judge) OffsiteRedirectors() int { return j.redirectors.learnt() }
