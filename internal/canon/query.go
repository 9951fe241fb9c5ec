package canon

import "strings"

// Readers of a canonical query (URL.Query): its parameters, "name=value"
// or a bare "name", joined by "&", as written but for their escapes.

// HasParam reports whether query q has the parameter pair ("name=value").
func HasParam(q, pair string) bool {
	for q != "" {
		var p string
		p, q, _ = strings.Cut(q, "&")
		if p == pair {
			return true
		}
	}
	return false
}

// ParamValue returns the value of query q's first parameter named name,
// and whether it has one.
func ParamValue(q, name string) (string, bool) {
	for q != "" {
		var p string
		p, q, _ = strings.Cut(q, "&")
		if n, v, _ := strings.Cut(p, "="); n == name {
			return v, true
		}
	}
	return "", false
}

// IsNumber reports whether s, a parameter's value, is a number: digits,
// at least one (a page, an id), not a word.
func IsNumber(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
