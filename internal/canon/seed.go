package canon

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SeedError is a seed ParseSeed refused. It wraps the canonicaliser's
// *Error, or ErrNotHTTP.
type SeedError struct {
	URL string // as given
	Err error
	// example is an absolute URL like the one meant, when one can be
	// guessed ("example.org" -> https://example.org/).
	example string
}

func (e *SeedError) Error() string { return "canon: seed " + e.Explain() }
func (e *SeedError) Unwrap() error { return e.Err }

// Explain says, for a person, what is wrong with the seed and what a seed
// must be, without the package's prefix, for a message that places it (a
// file and line, a request's body):
//
//	"foo bar" is not a URL: want an absolute http or https URL such as https://example.org/
func (e *SeedError) Explain() string {
	want := "want an absolute http or https URL such as " + cmp.Or(e.example, "https://example.org/")
	q := quoteSeed(e.URL)
	var ce *Error
	switch {
	case errors.Is(e.Err, ErrNotHTTP):
		scheme, _, _ := strings.Cut(strings.TrimSpace(e.URL), ":")
		return fmt.Sprintf("%s has the scheme %q: %s", q, strings.ToLower(scheme), want)
	case errors.As(e.Err, &ce) && !hasScheme(e.URL) && !canonsOwn(ce.Err):
		// The WHATWG parser's words for this ("does not begin with an
		// ASCII alpha...") are about its algorithm, not the input.
		return q + " is not a URL: " + want
	case errors.As(e.Err, &ce):
		return fmt.Sprintf("%s is not a URL (%s): %s", q, ce.Reason(), want)
	}
	return fmt.Sprintf("%s: %v: %s", q, e.Err, want)
}

// canonsOwn reports whether err is a cause the canonicaliser finds
// before the URL parser runs, which says more than "not a URL".
func canonsOwn(err error) bool {
	return errors.Is(err, ErrEmpty) || errors.Is(err, ErrTooLong) || errors.Is(err, ErrTooManySegments)
}

// ParseSeed parses raw as a seed: an absolute http or https URL. Its
// error is a *SeedError.
func ParseSeed(c *Canonicalizer, raw string) (URL, error) {
	u, err := c.Parse(raw)
	if err == nil && u.Scheme != "http" && u.Scheme != "https" {
		err = fmt.Errorf("canon: scheme %q: %w", u.Scheme, ErrNotHTTP)
	}
	if err == nil {
		return u, nil
	}
	se := &SeedError{URL: raw, Err: err}
	if s := strings.TrimSpace(raw); !hasScheme(s) && !strings.HasPrefix(s, "/") {
		// A host name without its scheme is the usual slip: name the
		// URL it would be.
		if g, gerr := c.Parse("https://" + s); gerr == nil && strings.Contains(g.Host, ".") {
			se.example = g.String
		}
	}
	return URL{}, se
}

// hasScheme reports whether s starts with a URL scheme and its colon, as
// the WHATWG URL standard reads one: an ASCII letter, then letters,
// digits, "+", "-" or ".".
func hasScheme(s string) bool {
	s = strings.TrimSpace(s)
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z':
		case i > 0 && (b >= '0' && b <= '9' || b == '+' || b == '-' || b == '.'):
		case i > 0 && b == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// quoteSeed quotes a seed for a message, cut short if long: a seed file's
// line may be anything.
func quoteSeed(s string) string {
	const most = 200
	if len(s) > most {
		cut := most
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q...", s[:cut])
	}
	return fmt.Sprintf("%q", s)
}

// ErrNotHTTP is what a seed's error wraps when its scheme is not http or
// https: only those are crawled.
var ErrNotHTTP = errors.New("only http and https URLs are crawled")
