package crawl

import (
	"net/http"
	"net/url"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/policy"
)

// requestHeaders are the header fields operators asked to send, each only
// where it was given for, whatever URL a page, a redirect or a rendered
// script leads to: the crawl's own (Config.Headers) to the hosts under
// its seeds' registrable domains, each policy's to its host. A token given
// for a site is then never sent to a CDN, a third party or a host a
// redirect names.
type requestHeaders struct {
	canon  *canon.Canonicalizer
	global http.Header
	sites  map[string]bool          // the seeds' registrable domains (fetch.Site)
	hosts  map[string]policy.Policy // policy key -> its policy as For merges it, for Headers
}

// newRequestHeaders takes the policies' headers as they are at the start:
// the API cannot set headers (Policies.Set), so a policy it puts or
// deletes leaves them as the policy file or profile gave them.
func newRequestHeaders(cn *canon.Canonicalizer, global http.Header, seeds []canon.URL, set *policy.Set) *requestHeaders {
	h := &requestHeaders{canon: cn, global: global, sites: map[string]bool{}, hosts: map[string]policy.Policy{}}
	if len(global) > 0 {
		for _, s := range seeds {
			h.sites[fetch.Site(s.Host)] = true
		}
	}
	for key := range set.All() {
		if p := set.ForAuthority(key); p != nil && len(p.Headers) > 0 {
			h.hosts[key] = *p
		}
	}
	return h
}

// HeaderFor is fetch.HeaderSource's.
func (h *requestHeaders) HeaderFor(u *url.URL) http.Header {
	if len(h.global) == 0 && len(h.hosts) == 0 {
		return nil
	}
	cu, err := h.canon.Parse(u.String())
	if err != nil {
		return nil
	}
	var out http.Header
	if len(h.global) > 0 && h.sites[fetch.Site(cu.Host)] {
		out = h.global.Clone()
	}
	p, ok := h.hosts[cu.Authority]
	if !ok {
		p, ok = h.hosts[cu.Host]
	}
	if ok {
		if out == nil {
			out = make(http.Header, len(p.Headers))
		}
		for k, v := range p.Headers {
			out[k] = []string{v}
		}
	}
	return out
}
