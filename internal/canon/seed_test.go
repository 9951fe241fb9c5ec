package canon

import (
	"errors"
	"strings"
	"testing"
)

// ParseSeed takes absolute http and https URLs; what it refuses it
// explains in words about the input, naming it and what a seed must be,
// with the URL meant when a scheme was left out of a host name.
func TestParseSeed(t *testing.T) {
	c := New(Config{})
	for _, ok := range []string{"http://a.test/", " https://A.test/x ", "HTTP://a.test:8080"} {
		if _, err := ParseSeed(c, ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	const want = "want an absolute http or https URL such as "
	for _, tc := range []struct{ in, explain string }{
		{"foo bar", `"foo bar" is not a URL: ` + want + "https://example.org/"},
		{"example.org", `"example.org" is not a URL: ` + want + "https://example.org/"},
		{"www.shop.test/a?b=1", `"www.shop.test/a?b=1" is not a URL: ` + want + "https://www.shop.test/a?b=1"},
		{"localhost", `"localhost" is not a URL: ` + want + "https://example.org/"},
		{"/about", `"/about" is not a URL: ` + want + "https://example.org/"},
		{"ftp://a.test/", `"ftp://a.test/" has the scheme "ftp": ` + want + "https://example.org/"},
		{"mailto:x@a.test", `"mailto:x@a.test" has the scheme "mailto": ` + want},
		{"http://[::1/", `"http://[::1/" is not a URL (`},
		{"", `"" is not a URL (empty url): ` + want},
		{"http://a.test/" + strings.Repeat("x", 9000), `"http://a.test/xxx`},
	} {
		_, err := ParseSeed(c, tc.in)
		var se *SeedError
		if !errors.As(err, &se) {
			t.Errorf("%.40q: error %v, want a *SeedError", tc.in, err)
			continue
		}
		if got := se.Explain(); !strings.HasPrefix(got, tc.explain) || len(got) > 500 {
			t.Errorf("%.40q: %q, want it to begin %q (and be short)", tc.in, got, tc.explain)
		}
		if !strings.HasPrefix(err.Error(), "canon: seed ") {
			t.Errorf("%.40q: %q lacks the package's prefix", tc.in, err)
		}
	}
}
