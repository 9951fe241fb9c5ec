package weft

import (
	"net/url"
	"strings"

	"github.com/weft-crawler/weft/internal/plugin"
)

// A LinkFilter accepts or refuses each URL the crawl finds within its
// scope (seeds are not judged), before robots.txt and the check for URLs
// already seen. Filter is called from many goroutines at once, on every
// link of every page: it must be quick and must not block.
type LinkFilter = plugin.LinkFilter

// LinkFilterFunc makes a LinkFilter of a function.
type LinkFilterFunc = plugin.LinkFilterFunc

// Link is a URL found by the crawl, as a LinkFilter judges it. Its Kind is
// how it was found: "link" (a page's link, or a page a sitemap lists),
// "redirect", "resource" (a sitemap; an image a page shows) or
// "requisite" (what a page needs to render).
type Link = plugin.Link

// A Scope says which URLs a crawl may go to. A URL outside it is not
// fetched, except a page's requisites, which may be one hop outside (a
// style sheet on a CDN). Seeds are always in. weft's own rules still
// apply inside a scope: http and https only, no extensions of media and
// archives, MaxDepth, no path repeating its segments.
type Scope = plugin.Scope

// ScopeFunc makes a Scope of a function.
type ScopeFunc = plugin.ScopeFunc

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
