package fetch

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// hostProfile converts host names to ASCII with the options of the WHATWG
// URL parser that weft's canonicaliser is built on
// (github.com/nlnwa/whatwg-url): UTS #46 non-transitional processing, as
// browsers do. A Config.Resolve name is compared with the host of a
// canonical URL, so both must come out of the same conversion.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.VerifyDNSLength(false),
	idna.StrictDomainName(true),
	idna.ValidateLabels(true),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.Transitional(false),
)

// ResolveKey returns the form of host name under which Config.Resolve
// matches it: the name a canonical URL carries (lower case, punycode:
// "bücher.test" is "xn--bcher-kva.test"), without trailing dots. A name
// that cannot be converted, that holds what no host name may (a port, a
// path, a space), or that a URL would read as an IPv4 address, is an
// error.
func ResolveKey(name string) (string, error) {
	if name == "" || strings.Trim(name, ".") == "" {
		return "", errors.New("empty host name")
	}
	if !utf8.ValidString(name) {
		return "", fmt.Errorf("%q is not valid UTF-8", name)
	}
	if i := strings.IndexFunc(name, forbiddenInHost); i >= 0 {
		if name[i] == ':' {
			return "", fmt.Errorf("%q is a host name with a port or an IPv6 address; give the name alone (the entry applies to every port)", name)
		}
		return "", fmt.Errorf("%q holds %q, which no host name may", name, name[i])
	}
	a, err := hostProfile.ToASCII(name)
	if err != nil {
		// As the WHATWG parser does, an ASCII name is taken as it is even
		// where IDNA's strict rules refuse it (an underscore), unless it
		// claims to be punycode.
		if !isASCII(name) || hasPunycodeLabel(name) {
			return "", fmt.Errorf("%q is not a valid internationalised host name: %w", name, err)
		}
		a = name
	}
	a = strings.ToLower(strings.TrimRight(a, "."))
	if a == "" {
		return "", fmt.Errorf("%q converts to an empty host name", name)
	}
	if last := a[strings.LastIndexByte(a, '.')+1:]; isNumberLabel(last) {
		return "", fmt.Errorf("%q is an IPv4 address to a URL (its last label is a number), not a host name", name)
	}
	return a, nil
}

// isNumberLabel reports whether the WHATWG URL parser reads a host whose
// last label is label as an IPv4 address: decimal digits, or 0x and hex
// digits (and, in the parser weft uses, with a sign before them).
func isNumberLabel(label string) bool {
	label = strings.TrimLeft(label, "+-")
	if len(label) >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X') {
		return strings.Trim(label[2:], "0123456789abcdefABCDEF") == ""
	}
	return label != "" && strings.Trim(label, "0123456789") == ""
}

// forbiddenInHost reports the code points the WHATWG URL standard forbids
// in a domain, controls and space included, and "%", which a URL's host
// would have decoded first.
func forbiddenInHost(r rune) bool {
	return r <= ' ' || r == 0x7f || strings.ContainsRune("#%/:<>?@[\\]^|", r)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func hasPunycodeLabel(s string) bool {
	for l := range strings.SplitSeq(strings.ToLower(s), ".") {
		if strings.HasPrefix(l, "xn--") {
			return true
		}
	}
	return false
}
