package policy

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzParse: no policy file crashes Parse, and a file it accepts is
// written back, in the current names, as one it reads the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"a.test": {"crawl_delay": "5s", "disallowed": ["/x", "/*?s="], "max_urls": 3}}`,
		`{"a.test": {"delay": "5s", "disallow": ["/x"]}, "b.test:8080": {}}`,
		"{\n\"a.test\": {\"delay\": \"5s\", \"crawl_delay\": \"6s\"}}",
		`{"a.test": {"boost": 4, "boosts": [{"pattern": "/n/*", "factor": 0.5}]}}`,
		`{"a.test": null}`, `{"a.test": {"max_urls": 1e3}}`, `{} {}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, Limits{})
		if err != nil {
			return
		}
		for host, p := range s.All() {
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatalf("%s: %v", host, err)
			}
			var back Policy
			if err := json.Unmarshal(b, &back); err != nil || back.Delay != p.Delay || !slices.Equal(back.Disallow, p.Disallow) || back.MaxURLs != p.MaxURLs ||
				back.Boost != p.Boost || !slices.Equal(back.Boosts, p.Boosts) {
				t.Fatalf("%s: %+v written as %s, read back as %+v (%v)", host, p, b, back, err)
			}
		}
	})
}
