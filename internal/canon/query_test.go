package canon

import "testing"

// TestQueryReaders: a canonical query's parameters, read whole, by name,
// and a value told a number or a word.
func TestQueryReaders(t *testing.T) {
	const q = "color=red&page=2&q=&sort"
	for pair, want := range map[string]bool{"color=red": true, "page=2": true, "q=": true, "sort": true, "page=3": false, "color": false, "sort=": false} {
		if got := HasParam(q, pair); got != want {
			t.Errorf("HasParam(%q, %q) = %v, want %v", q, pair, got, want)
		}
	}
	for name, want := range map[string]struct {
		v  string
		in bool
	}{"color": {"red", true}, "page": {"2", true}, "q": {"", true}, "sort": {"", true}, "size": {"", false}} {
		if v, in := ParamValue(q, name); v != want.v || in != want.in {
			t.Errorf("ParamValue(%q, %q) = %q, %v; want %q, %v", q, name, v, in, want.v, want.in)
		}
	}
	for s, want := range map[string]bool{"2": true, "0042": true, "": false, "2a": false, "-1": false, "1.5": false, "red": false} {
		if got := IsNumber(s); got != want {
			t.Errorf("IsNumber(%q) = %v, want %v", s, got, want)
		}
	}
}
