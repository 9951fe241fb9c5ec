package weft

import (
	"net/url"
	"strings"

	"github.com/weft-crawler/weft/internal/crawl"
)

// A LinkFilter accepts or refuses each URL the crawl finds within its
// scope (seeds are not judged), before robots.txt and the check for URLs
// already seen. Filter is called from many goroutines at once, on every
// link of every page: it must be quick and must not block.
type LinkFilter interface {
	// Filter returns "" to accept the link, or why it is refused: a short
	// word that stays the same for one rule ("faceted", "logout"), which
	// counts the refusal in Summary.Rejected.
	Filter(Link) (reason string)
}

// LinkFilterFunc makes a LinkFilter of a function.
type LinkFilterFunc func(Link) string

// Filter calls f(l).
func (f LinkFilterFunc) Filter(l Link) string { return f(l) }

// Link is a URL found by the crawl, as a LinkFilter judges it.
type Link struct {
	URL   string // canonical and absolute
	Host  string // host, and port when it is not the scheme's default
	Depth int    // link hops from a seed
	From  string // the page (or robots.txt) it was found on
	// Kind is how it was found: "link" (a page's link, or a page a
	// sitemap lists), "redirect", "resource" (a sitemap; an image a page
	// shows) or "requisite" (what a page needs to render).
	Kind string
}

// A Scope says which URLs a crawl may go to. A URL outside it is not
// fetched, except a page's requisites, which may be one hop outside (a
// style sheet on a CDN). Seeds are always in. weft's own rules still
// apply inside a scope: http and https only, no extensions of media and
// archives, MaxDepth, no path repeating its segments.
type Scope interface {
	// Contains reports whether the crawl may go to u, a canonical URL.
	// It is called as a LinkFilter is.
	Contains(u *url.URL) bool
}

// ScopeFunc makes a Scope of a function.
type ScopeFunc func(*url.URL) bool

// Contains calls f(u).
func (f ScopeFunc) Contains(u *url.URL) bool { return f(u) }

// Hosts is a Scope of the hosts named and their subdomains: Hosts("example.org")
// holds example.org and www.example.org, on any port, in http and https.
func Hosts(hosts ...string) Scope {
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = strings.TrimSuffix(strings.ToLower(h), ".")
	}
	return ScopeFunc(func(u *url.URL) bool {
		h := strings.TrimSuffix(u.Hostname(), ".")
		for _, n := range names {
			if h == n || strings.HasSuffix(h, "."+n) {
				return true
			}
		}
		return false
	})
}

// linkFilter is a LinkFilter as the crawl calls it.
type linkFilter struct{ f LinkFilter }

func (f linkFilter) Judge(c crawl.Candidate) string {
	return f.f.Filter(Link{URL: c.URL, Host: c.Host, Depth: c.Depth, From: c.Via, Kind: c.Kind})
}

// scopeFilter is a Scope as the crawl calls it: a filter whose refusals
// count as "scope", as weft's own scope's do.
type scopeFilter struct{ s Scope }

func (f scopeFilter) Judge(c crawl.Candidate) string {
	if f.contains(c.URL) {
		return ""
	}
	if c.Kind == crawl.LinkRequisite && f.contains(c.Via) {
		return "" // a page's requisite, one hop past the scope, as weft's own scope allows
	}
	return crawl.RejectScope
}

func (f scopeFilter) contains(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && f.s.Contains(u)
}
