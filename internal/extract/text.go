package extract

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// DefaultMaxWords bounds Words where its limit is zero.
const DefaultMaxWords = 100000

// FNV-1a 64, inlined: words are hashed as they are read, never copied.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// Words returns the visible text of an HTML page as hashes of its
// lower-case words, in document order: the text outside tags and outside
// <script>, <style>, <template> and <noscript> (a crawler runs no script,
// and a page's <noscript> is boilerplate), entity-decoded and split at every
// rune that is not a letter or a digit. Each word is hashed with FNV-1a 64
// of its lower-case UTF-8 (WordHash). At most maxWords are returned (zero
// means DefaultMaxWords). It is the input of near-duplicate detection,
// which needs the words' identities, not their text.
func Words(body []byte, maxWords int) []uint64 {
	if maxWords <= 0 {
		maxWords = DefaultMaxWords
	}
	words := make([]uint64, 0, min(maxWords, len(body)/32))
	hidden := 0 // depth of elements whose text is not shown
	z := html.NewTokenizer(bytes.NewReader(body))
	for len(words) < maxWords {
		switch z.Next() {
		case html.ErrorToken:
			return words
		case html.StartTagToken:
			if name, _ := z.TagName(); isHiddenTag(name) {
				hidden++
			}
		case html.SelfClosingTagToken:
			// "<script src=x />" still opens raw text up to </script>.
			if name, _ := z.TagName(); isRawTextTag(name) {
				hidden++
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); hidden > 0 && isHiddenTag(name) {
				hidden--
			}
		case html.TextToken:
			if hidden == 0 {
				words = appendWordHashes(words, z.Text(), maxWords)
			}
		}
	}
	return words
}

// WordHash is the hash Words gives the word w (already lower-case).
func WordHash(w string) uint64 {
	x := uint64(fnvOffset)
	for i := 0; i < len(w); i++ {
		x = (x ^ uint64(w[i])) * fnvPrime
	}
	return x
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

// isRawTextTag reports whether a self-closing tag of this name still
// starts raw text that an end tag closes (the tokenizer ignores the "/"
// there, as browsers do).
func isRawTextTag(tag []byte) bool {
	switch string(tag) {
	case "script", "style", "noscript", "textarea", "title", "xmp", "iframe", "noembed", "noframes":
		return isHiddenTag(tag)
	}
	return false
}

func isHiddenTag(tag []byte) bool {
	switch string(tag) {
	case "script", "style", "template", "noscript":
		return true
	}
	return false
}

// appendWordHashes hashes the lower-case words of letters and digits in text.
func appendWordHashes(words []uint64, text []byte, max int) []uint64 {
	x, in := uint64(fnvOffset), false
	var enc [utf8.UTFMax]byte
	for i := 0; i < len(text) && len(words) < max; {
		c := text[i]
		if c < utf8.RuneSelf { // ASCII, the common case
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				if in {
					words = append(words, x)
					x, in = fnvOffset, false
				}
				continue
			}
			x, in = (x^uint64(c))*fnvPrime, true
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
