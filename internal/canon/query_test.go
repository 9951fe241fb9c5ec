package canon

import (
	"slices"
	"testing"
)

// TestQueryReaders: a canonical query's parameters, read in order, by
// name, and a value told a number or a word.
func TestQueryReaders(t *testing.T) {
	const q = "color=red&page=2&q=&sort"
	var got []string
	for n, v := range Params(q) {
		got = append(got, n+"|"+v)
	}
	if want := []string{"color|red", "page|2", "q|", "sort|"}; !slices.Equal(got, want) {
		t.Errorf("Params(%q) = %v, want %v", q, got, want)
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
