// Package media is a crawl's policy for response bodies by media type:
// which types are read and archived, and how many bytes of each. It
// answers the fetcher from the response's header (fetch.BodyPolicy), so
// a body refused or capped is never downloaded past its cap.
//
// A rule names a media type ("application/pdf"), a type's family
// ("video/*") or every type ("*/*"); the most specific rule that matches
// decides, so "video/*=0" with "video/mp4=50MiB" reads MP4 alone of the
// videos.
package media

import (
	"fmt"
	"strings"

	"github.com/weft-crawler/weft/internal/bytesize"
)

// DefaultCaps are the per-type caps of a Policy made with no caps given:
// PDFs are archived whole up to 32 MiB, beyond the 10 MiB --max-body
// most pages never reach. A worker holds one body at a time, so the
// largest cap times the workers bounds the bodies in memory.
func DefaultCaps() []Cap {
	return []Cap{{Pattern: "application/pdf", Bytes: 32 << 20}}
}

// Cap is the most body bytes read of the media types Pattern matches; 0
// refuses them.
type Cap struct {
	Pattern string
	Bytes   int64
}

// Policy decides what is read of each media type. The zero Policy reads
// every type up to the fetcher's own cap.
type Policy struct {
	accept, reject []string // patterns
	caps           []Cap
}

// New returns the policy that reads the types accept matches (every type
// when accept is empty) and reject does not, each up to the cap of the
// most specific of caps that matches it (the fetcher's own cap when none
// does). A type no rule accepts is refused: its body is not read. Every
// pattern is checked: an error names it.
func New(accept, reject []string, caps []Cap) (*Policy, error) {
	p := &Policy{}
	for _, set := range []struct {
		name string
		in   []string
		out  *[]string
	}{{"accept", accept, &p.accept}, {"reject", reject, &p.reject}} {
		for _, pat := range set.in {
			pat, err := clean(pat)
			if err != nil {
				return nil, fmt.Errorf("media: %s %w", set.name, err)
			}
			*set.out = append(*set.out, pat)
		}
	}
	for _, c := range caps {
		pat, err := clean(c.Pattern)
		if err != nil {
			return nil, fmt.Errorf("media: cap %w", err)
		}
		if c.Bytes < 0 {
			return nil, fmt.Errorf("media: cap %s=%d: negative", pat, c.Bytes)
		}
		p.caps = append(p.caps, Cap{pat, c.Bytes})
	}
	return p, nil
}

// clean checks a pattern and lower-cases it.
func clean(pat string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(pat))
	typ, sub, ok := strings.Cut(p, "/")
	if !ok || typ == "" || sub == "" || strings.ContainsAny(p, " \t;,") || (typ == "*" && sub != "*") || strings.Count(p, "/") != 1 {
		return "", fmt.Errorf("%q: not a media type, type/* or */*", pat)
	}
	return p, nil
}

// specificity ranks how closely pat matches mt: 3 exactly, 2 by its
// family (type/*), 1 as */*, 0 not at all.
func specificity(pat, mt string) int {
	switch {
	case pat == mt:
		return 3
	case pat == "*/*":
		return 1
	case strings.HasSuffix(pat, "/*") && strings.HasPrefix(mt, pat[:len(pat)-1]):
		return 2
	}
	return 0
}

// best is the highest specificity of pats for mt.
func best(pats []string, mt string) int {
	b := 0
	for _, p := range pats {
		b = max(b, specificity(p, mt))
	}
	return b
}

// Accepts reports whether a body of media type mt ("" when the response
// names none, which only an accept-everything policy reads) is read at
// all: some accept rule matches (or there are none) and no reject rule
// matches it more specifically.
func (p *Policy) Accepts(mt string) bool {
	if p == nil {
		return true
	}
	a := 1 // no accept rules: as if */*
	if len(p.accept) > 0 {
		a = best(p.accept, mt)
	}
	if a == 0 {
		return false
	}
	return best(p.reject, mt) < a
}

// BodyLimit implements fetch.BodyPolicy.
func (p *Policy) BodyLimit(mt string) (int64, bool) {
	if !p.Accepts(mt) {
		return 0, true
	}
	if p == nil {
		return 0, false
	}
	limit, rank := int64(0), 0
	for _, c := range p.caps {
		if s := specificity(c.Pattern, mt); s > rank {
			limit, rank = c.Bytes, s
		}
	}
	return limit, rank > 0
}

// ParseCap parses "type/subtype=SIZE", SIZE as package bytesize reads it
// (a number of bytes, or one with KB, MB, GB or KiB, MiB, GiB...).
func ParseCap(s string) (Cap, error) {
	pat, size, ok := strings.Cut(s, "=")
	if !ok {
		return Cap{}, fmt.Errorf("media: cap %q: want type/subtype=SIZE", s)
	}
	n, err := bytesize.Parse(size)
	if err != nil {
		return Cap{}, fmt.Errorf("media: cap %q: %w", s, err)
	}
	return Cap{strings.TrimSpace(pat), n}, nil
}
