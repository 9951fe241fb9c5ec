// Package pct holds the octet classes of RFC 3986 §2's percent-encoding
// (pct-encoded = "%" HEXDIG HEXDIG), which URL canonicalisation (package
// canon) and robots.txt path matching (package robots, RFC 9309 §2.2.2)
// both decode by.
package pct

// IsHex reports whether c is a HEXDIG: '0'-'9', 'A'-'F' or, equivalent
// by RFC 3986 §2.1, 'a'-'f'.
func IsHex(c byte) bool {
	_, ok := unhex(c)
	return ok
}

// IsUnreserved reports whether c is in RFC 3986 §2.3's unreserved set
// (ALPHA / DIGIT / "-" / "." / "_" / "~"): an escape of one means the
// octet itself, and decoding it changes nothing (§6.2.2.2).
func IsUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// Decode returns the octet that the escape "%" hi lo encodes, and false
// if hi or lo is not a hex digit: then the three octets are no escape at
// all (a '%' followed by "zz", say), and must be kept as they are.
func Decode(hi, lo byte) (byte, bool) {
	h, ok1 := unhex(hi)
	l, ok2 := unhex(lo)
	if !ok1 || !ok2 {
		return 0, false
	}
	return h<<4 | l, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
