package pct

import (
	"strconv"
	"testing"
)

// TestDecodeEveryPair checks Decode on all 65,536 pairs of octets against
// strconv's hex parser: a value where both are hex digits (either case),
// and no escape otherwise.
//
// canon and robots each had an unhex, alike on hex digits and apart on
// everything else: robots' took ':' (between '9' and 'A') for the digit
// 3 and '!' for a wrapped-around 241, canon's took 'G' for 16 and 'z' for
// 67. Only their callers' isHex kept either from a wrong octet. Decode
// answers for non-hex octets itself: not an escape.
func TestDecodeEveryPair(t *testing.T) {
	for hi := range 256 {
		for lo := range 256 {
			got, ok := Decode(byte(hi), byte(lo))
			want, err := strconv.ParseUint(string([]byte{byte(hi), byte(lo)}), 16, 8)
			if ok != (err == nil) || ok && got != byte(want) {
				t.Fatalf("Decode(%q, %q) = %#x, %v; want %#x, %v", byte(hi), byte(lo), got, ok, want, err == nil)
			}
		}
	}
	for _, c := range []byte{':', '@', '`', 'G', 'g', 'z', '/', '!', '%', ' ', 0, 0xff} {
		if _, ok := Decode(c, '0'); ok || IsHex(c) {
			t.Errorf("%q taken for a hex digit", c)
		}
	}
}

// TestIsUnreserved pins RFC 3986 §2.3's set: 66 octets.
func TestIsUnreserved(t *testing.T) {
	n := 0
	for c := range 256 {
		if IsUnreserved(byte(c)) {
			n++
		}
	}
	if n != 66 {
		t.Errorf("%d unreserved octets, want 66 (ALPHA DIGIT - . _ ~)", n)
	}
	for _, c := range []byte("-._~azAZ09") {
		if !IsUnreserved(c) {
			t.Errorf("%q not unreserved", c)
		}
	}
	for _, c := range []byte("!$&'()*+,;=:@/?#[]% ") {
		if IsUnreserved(c) {
			t.Errorf("%q unreserved", c)
		}
	}
}
