package extract

import "github.com/weft-crawler/weft/internal/htmltoken"

// Reading a tag through TagAttr converts each of its attributes in turn,
// the ones this package never reads included. rawAttrs instead reads the
// two attributes a tag is asked for straight from the tag's raw bytes
// (Tokenizer.Raw), by the tokenizer's own steps for splitting a tag into
// keys and values, and it hands the tag back to TagAttr whenever a value
// it found needs more than a slice of the raw bytes, "&amp;" decoded: a
// NUL, a carriage return or a '&' that Tokenizer.PlainRefs does not pass
// (a character reference other than "&amp;"; a query's "&b=2" passes).
// TestRawAttrsAgreeWithToken holds it to Token's attributes.

// useRawAttrs is false in tests that read every tag through TagAttr, the
// path rawAttrs must agree with.
var useRawAttrs = true

// isTagSpace reports whether c is white space between a tag's attributes,
// as the tokenizer has it.
func isTagSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f'
}

// rawAttrs finds the first attribute named k0 and the first named k1
// (ASCII case-insensitive; k0 and k1 lower case, k1 may be "") in raw, a
// start tag's raw bytes from its '<' to its '>', and returns their
// values, entity-decoded. ok is false if a value found needs the
// tokenizer's conversion (see above): the caller reads the tag with
// TagAttr instead. "&amp;" is decoded in place, in raw.
func rawAttrs(z *htmltoken.Tokenizer, raw []byte, k0, k1 string) (v0, v1 []byte, has0, has1, ok bool) {
	n := len(raw)
	if n < 2 || raw[0] != '<' || raw[n-1] != '>' {
		return nil, nil, false, false, false
	}
	end := n - 1 // raw[end] is the closing '>'
	// readTagName: the name runs from raw[1] to white space, '/' or '>'.
	i := 2
	for i < end && !isTagSpace(raw[i]) && raw[i] != '/' {
		i++
	}
	if i < end && isTagSpace(raw[i]) {
		i++ // consumed by readTagName
	}
	for ; i < end && isTagSpace(raw[i]); i++ {
	}
	for i < end {
		// readTagAttrKey: a key starts here and runs to white space, '/',
		// '>' or an '=' that is not its first byte.
		ks := i
		for i < end {
			c := raw[i]
			if c == '=' && i == ks {
				i++
				continue
			}
			if c == '=' || isTagSpace(c) || c == '/' {
				break
			}
			if c == '>' {
				return nil, nil, false, false, false // out of step with the tokenizer: never, but not trusted
			}
			i++
		}
		key := raw[ks:i]
		// readTagAttrVal.
		var vs, ve int
		vs, ve = i, i
		for ; i < end && isTagSpace(raw[i]); i++ {
		}
		switch {
		case i >= end:
		case raw[i] == '/':
			i++
		case raw[i] != '=':
		default:
			i++
			for ; i < end && isTagSpace(raw[i]); i++ {
			}
			if i >= end {
				vs, ve = i, i
				break
			}
			switch q := raw[i]; q {
			case '\'', '"':
				i++
				vs = i
				for i < end && raw[i] != q {
					i++
				}
				if i >= end {
					// The quoted value ran into the tag's last '>': the
					// tokenizer read on past it, so this is not the tag's end.
					return nil, nil, false, false, false
				}
				ve = i
				i++
			default:
				vs = i
				for i < end && !isTagSpace(raw[i]) {
					if raw[i] == '>' {
						return nil, nil, false, false, false // as above
					}
					i++
				}
				ve = i
				if i < end {
					i++
				}
			}
		}
		if len(key) > 0 {
			switch {
			case !has0 && equalFoldASCII(key, k0):
				v0, has0 = raw[vs:ve], true
			case k1 != "" && !has1 && equalFoldASCII(key, k1):
				v1, has1 = raw[vs:ve], true
			}
		}
		for ; i < end && isTagSpace(raw[i]); i++ {
		}
	}
	// Both are checked before either is decoded: a tag handed back to
	// TagAttr must still hold its raw bytes.
	amp0, good0 := plainValue(z, v0)
	amp1, good1 := plainValue(z, v1)
	if !good0 || !good1 {
		return nil, nil, false, false, false
	}
	if amp0 {
		v0 = htmltoken.DecodeAmp(v0)
	}
	if amp1 {
		v1 = htmltoken.DecodeAmp(v1)
	}
	return v0, v1, has0, has1, true
}

// plainValue reports whether TagAttr would give v itself (amps false) or
// v with each "&amp;" made "&" (amps true): ok is false if v holds a NUL
// or a carriage return (both converted by the tokenizer) or a '&' that
// z.PlainRefs does not pass.
func plainValue(z *htmltoken.Tokenizer, v []byte) (amps, ok bool) {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case 0, '\r':
			return false, false
		case '&':
			amps = true
		}
	}
	return amps, !amps || z.PlainRefs(v)
}

// tagAttrs returns the first values of attributes k0 and k1 (see rawAttrs)
// of the current start tag of z, from its raw bytes where it can and else
// through TagAttr. It consumes the tag's attributes.
func tagAttrs(z *htmltoken.Tokenizer, k0, k1 string) (v0, v1 []byte, has0, has1 bool) {
	if useRawAttrs {
		if v0, v1, has0, has1, ok := rawAttrs(z, z.Raw(), k0, k1); ok {
			return v0, v1, has0, has1
		}
	}
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch {
		case !has0 && string(k) == k0:
			v0, has0 = v, true
		case k1 != "" && !has1 && string(k) == k1:
			v1, has1 = v, true
		}
	}
	return v0, v1, has0, has1
}
