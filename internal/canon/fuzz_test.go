package canon

import "testing"

// FuzzCanonical checks that Parse never panics and that its output is a fixed
// point: parsing a canonical URL again changes nothing.
func FuzzCanonical(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.in)
	}
	c := New(Config{})
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := c.Parse(raw)
		if err != nil {
			return
		}
		again, err := c.Parse(u.String)
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", raw, u.String, err)
		}
		if again != u {
			t.Fatalf("Parse(%q) not idempotent:\n first %+v\nsecond %+v", raw, u, again)
		}
	})
}

// FuzzResolve checks that resolution never panics, that its output is
// canonical, and that resolving against the canonical base gives what
// resolving against the base as written gives.
func FuzzResolve(f *testing.F) {
	for _, tc := range resolveCases {
		f.Add(tc.base, tc.ref)
	}
	c := New(Config{})
	f.Fuzz(func(t *testing.T, base, ref string) {
		u, err := c.ResolveString(base, ref)
		if err != nil {
			return
		}
		again, err := c.Parse(u.String)
		if err != nil {
			t.Fatalf("ResolveString(%q, %q) = %q, which does not parse: %v", base, ref, u.String, err)
		}
		if again != u {
			t.Fatalf("ResolveString(%q, %q) not canonical:\n first %+v\nsecond %+v", base, ref, u, again)
		}
		cb, err := c.Parse(base)
		if err != nil {
			t.Fatalf("base %q resolves but does not parse: %v", base, err)
		}
		viaCanon, err := c.Resolve(cb, ref)
		if err != nil || viaCanon != u {
			t.Fatalf("ref %q: against base %q: %q; against canonical base %q: %q, %v",
				ref, base, u.String, cb.String, viaCanon.String, err)
		}
	})
}
