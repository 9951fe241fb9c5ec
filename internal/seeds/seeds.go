// Package seeds holds what a crawl knows of each seed: its own limits
// (scope, depth, page budget, include and exclude rules), the small id
// every URL it leads to carries, and the pages, bytes and errors counted
// against it, which persist with the crawl's state so that a resumed
// crawl does not overspend a seed's budget.
//
// A URL belongs to the seed that found it first: the seen set admits a
// URL once, and the URL's queue entry carries the id of the seed of the
// page (or redirect, sitemap, requisite) that led to it.
package seeds

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/weft-crawler/weft/internal/scope"
)

// ID is a seed's small stable id: a 32-bit FNV-1a hash of its canonical
// URL, moved on to the next free value when two seeds of one crawl
// collide (the first one registered keeps it). Zero means no seed (a URL
// queued before ids existed, or by a recrawl of no seed).
type ID uint32

// IDOf is the id a seed with this canonical URL gets when no other seed
// holds it.
func IDOf(canonicalURL string) ID {
	h := fnv.New32a()
	h.Write([]byte(canonicalURL))
	if id := ID(h.Sum32()); id != 0 {
		return id
	}
	return 1
}

// Options are one seed's own limits. The zero Options inherits the
// crawl's. A seed whose Scope, MaxDepth, Include or Exclude is set judges
// the links found under it by a scope of its own (the crawl's scope
// settings with these in place), and does not widen the crawl's scope;
// MaxPages alone leaves it under the crawl's scope.
type Options struct {
	// Scope is how the seed widens its own scope; "" means the crawl's.
	Scope scope.Mode `json:"scope,omitempty"`
	// MaxDepth is the most link hops from the seed; zero means the
	// crawl's, negative no limit.
	MaxDepth int `json:"max_depth,omitempty"`
	// MaxPages is the most pages fetched under the seed (robots.txt,
	// requisites and sitemaps do not count); zero means no budget of its
	// own. Past it the seed's queued pages are dropped unrequested, with
	// the reason "seed-budget".
	MaxPages int64 `json:"max_pages,omitempty"`
	// Include and Exclude replace the crawl's expressions (RE2, matched
	// against the canonical URL) for the seed when not nil.
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// IsZero reports whether o inherits everything from the crawl.
func (o Options) IsZero() bool {
	return !o.OwnScope() && o.MaxPages == 0
}

// OwnScope reports whether o needs a scope of its own.
func (o Options) OwnScope() bool {
	return o.Scope != "" || o.MaxDepth != 0 || o.Include != nil || o.Exclude != nil
}

// Validate reports the first invalid field of o.
func (o Options) Validate() error {
	if o.Scope != "" {
		if _, err := scope.ParseMode(string(o.Scope)); err != nil {
			return fmt.Errorf("seeds: scope %q: want domain, host, prefix or any", o.Scope)
		}
	}
	if o.MaxPages < 0 {
		return fmt.Errorf("seeds: max-pages %d is negative", o.MaxPages)
	}
	_, err := scope.New(o.ScopeConfig(scope.Config{}))
	if err != nil {
		return fmt.Errorf("seeds: %w", err)
	}
	return nil
}

// ScopeConfig is the crawl's scope configuration with o's fields in
// place.
func (o Options) ScopeConfig(crawl scope.Config) scope.Config {
	c := crawl
	if o.Scope != "" {
		c.Mode = o.Scope
	}
	if o.MaxDepth != 0 {
		c.MaxDepth = o.MaxDepth
	}
	if o.Include != nil {
		c.Include = o.Include
	}
	if o.Exclude != nil {
		c.Exclude = o.Exclude
	}
	return c
}

// ParseLine parses one line of a seeds file: a URL, then optional
// key=value fields separated by white space:
//
//	https://a.example/ scope=host depth=3 max-pages=500 include=/docs/ exclude=\.pdf$
//
// scope is domain, host, prefix or any; depth the most link hops (-1: no
// limit); max-pages the page budget; include and exclude a regular
// expression each, and may be given more than once. A line with the URL
// alone is a seed with the crawl's limits. An error names the field.
func ParseLine(line string) (string, Options, error) {
	fields := strings.Fields(line)
	var o Options
	if len(fields) == 0 {
		return "", o, fmt.Errorf("seeds: empty line")
	}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok || v == "" {
			return "", o, fmt.Errorf("seeds: field %q: want key=value (scope, depth, max-pages, include, exclude)", f)
		}
		switch strings.ToLower(k) {
		case "scope":
			m, err := scope.ParseMode(v)
			if err != nil {
				return "", o, fmt.Errorf("seeds: field scope=%s: want domain, host, prefix or any", v)
			}
			o.Scope = m
		case "depth", "max-depth":
			n, err := strconv.Atoi(v)
			if err != nil {
				return "", o, fmt.Errorf("seeds: field %s=%s: not a whole number", k, v)
			}
			o.MaxDepth = n
		case "max-pages", "pages":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return "", o, fmt.Errorf("seeds: field %s=%s: want a whole number of pages, 0 or more", k, v)
			}
			o.MaxPages = n
		case "include":
			o.Include = append(o.Include, v)
		case "exclude":
			o.Exclude = append(o.Exclude, v)
		default:
			return "", o, fmt.Errorf("seeds: field %q: unknown key %q (want scope, depth, max-pages, include or exclude)", f, k)
		}
	}
	if err := o.Validate(); err != nil {
		return "", o, err
	}
	return fields[0], o, nil
}
