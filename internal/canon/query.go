package canon

import (
	"iter"
	"strings"
)

// Readers of a canonical query (URL.Query): its parameters, "name=value"
// or a bare "name", joined by "&", as written but for their escapes.

// Params yields the name and value of each parameter of query q, in
// order ("" for a bare name's value).
func Params(q string) iter.Seq2[string, string] {
	return func(yield func(name, value string) bool) {
		for rest := q; rest != ""; {
			var pair string
			pair, rest, _ = strings.Cut(rest, "&")
			name, value, _ := strings.Cut(pair, "=")
			if !yield(name, value) {
				return
			}
		}
	}
}

// ParamValue returns the value of query q's first parameter named name,
// and whether it has one.
func ParamValue(q, name string) (string, bool) {
	for n, v := range Params(q) {
		if n == name {
			return v, true
		}
	}
	return "", false
}

// IsNumber reports whether s, a parameter's value, is a number: digits,
// at least one (a page, an id), not a word.
func IsNumber(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
