package extract

import (
	"unicode"
	"unicode/utf8"
)

// DefaultMaxWords is the usual Limits.Words: far more words than a page
// has, few enough to bound a hostile one.
const DefaultMaxWords = 100000

// FNV-1a 64, inlined: words are hashed as they are read, never copied.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// WordHash is the hash HTML gives the word w (already lower-case) in
// Result.Words.
func WordHash(w string) uint64 {
	x := uint64(fnvOffset)
	for i := 0; i < len(w); i++ {
		x = (x ^ uint64(w[i])) * fnvPrime
	}
	return x
}

// TextWords returns the hashes of the words of plain text, as HTML gives
// them for a page's visible text, at most max of them.
func TextWords(text []byte, max int) []uint64 {
	return appendWordHashes(make([]uint64, 0, min(max, len(text)/32)), text, max)
}

// TextHash folds the hashes of a page's visible words (TextWords, or
// Result.Words), in their order, into one: two pages whose visible words
// are the same have the same, whatever their markup, scripts, comments
// and attributes hold (a form's token, a script's nonce, an ad's id).
// It is 0 for no words, and never 0 otherwise. Words are runs of letters
// and digits: a change of symbols alone ("$5" to "5 €") is not seen.
func TextHash(words []uint64) uint64 {
	if len(words) == 0 {
		return 0
	}
	x := uint64(fnvOffset)
	for _, w := range words {
		x = fold(x, w)
	}
	return max(x, 1)
}

// AddLinks folds the URLs a page links to, in their order, into its
// TextHash h, so that a listing whose new entries read as the old ones
// did ("Read more") hashes anew; 0 stays 0.
func AddLinks(h uint64, links []string) uint64 {
	if h == 0 {
		return 0
	}
	for _, l := range links {
		h = fold(h, WordHash(l))
	}
	return max(h, 1)
}

func fold(x, w uint64) uint64 {
	x = (x ^ w) * fnvPrime
	return x ^ x>>29
}

// AppendTextWords is TextWords appending to words[:0] (see HTMLInto).
func AppendTextWords(words []uint64, text []byte, max int) []uint64 {
	if words == nil {
		return TextWords(text, max)
	}
	return appendWordHashes(words[:0], text, max)
}

// hiddenTag reports whether raw, a start tag's raw bytes (or an end tag's
// from its '/'), opens a script, style, template or noscript element.
func hiddenTag(raw []byte) bool {
	if len(raw) < 2 {
		return false
	}
	name := raw[1:]
	for i, c := range name {
		if isNameEnd(c) {
			name = name[:i]
			break
		}
	}
	for _, t := range [...]string{"script", "style", "template", "noscript"} {
		if equalFoldASCII(name, t) {
			return true
		}
	}
	return false
}

// asciiWord maps an ASCII letter or digit to its lower case, anything else
// to 0: a word's end.
var asciiWord = func() (t [utf8.RuneSelf]byte) {
	for c := range byte(utf8.RuneSelf) {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] = c
		case 'A' <= c && c <= 'Z':
			t[c] = c + 'a' - 'A'
		}
	}
	return t
}()

// appendWordHashes hashes the lower-case words of letters and digits in text.
//
// A run of ASCII letters and digits, most of any text, is hashed by an
// inner loop that does nothing else; TestWordHashesAgree holds this to the
// plain loop it replaced (wordHashesPlain, in the tests) over any input.
func appendWordHashes(words []uint64, text []byte, max int) []uint64 {
	x, in := uint64(fnvOffset), false
	var enc [utf8.UTFMax]byte
	for i := 0; i < len(text) && len(words) < max; {
		c := text[i]
		if c < utf8.RuneSelf { // ASCII, the common case
			l := asciiWord[c]
			if l == 0 {
				i++
				if in {
					words = append(words, x)
					x, in = fnvOffset, false
				}
				continue
			}
			// The rest of the ASCII run of letters and digits.
			x = (x ^ uint64(l)) * fnvPrime
			for i++; i < len(text); i++ {
				c = text[i]
				if c >= utf8.RuneSelf {
					break
				}
				l = asciiWord[c]
				if l == 0 {
					break
				}
				x = (x ^ uint64(l)) * fnvPrime
			}
			in = true
			continue
		}
		r, n := utf8.DecodeRune(text[i:])
		i += n
		// Combining marks and the zero-width joiners belong to the word
		// (Devanagari vowel signs, decomposed accents).
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) && r != '\u200c' && r != '\u200d' {
			if in {
				words = append(words, x)
				x, in = fnvOffset, false
			}
			continue
		}
		for _, b := range enc[:utf8.EncodeRune(enc[:], unicode.ToLower(r))] {
			x = (x ^ uint64(b)) * fnvPrime
		}
		in = true
	}
	if in && len(words) < max {
		words = append(words, x)
	}
	return words
}
