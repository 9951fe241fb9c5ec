package content

import (
	"errors"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/transform"
)

// Kinds of Result.Charset trouble, stable: they label counts.
const (
	// CharsetUnknown: the Content-Type names a charset no encoding
	// answers to; the document was read by what its bytes and <meta>
	// say instead.
	CharsetUnknown = "unknown-label"
	// CharsetInvalid: read as UTF-8 (declared, or valid-looking), but holds
	// byte sequences that are not UTF-8; each reads as U+FFFD.
	CharsetInvalid = "invalid-utf8"
	// CharsetTranscoded: in another encoding (windows-1252, Shift_JIS,
	// UTF-16...), converted to UTF-8 before reading.
	CharsetTranscoded = "transcoded"
	// CharsetCut: converted, but its UTF-8 would have been more than twice
	// its size (a body of rare symbols, or a hostile one); read up to that.
	CharsetCut = "cut"
)

// ErrBinary is Result.Err for a body labelled as text that is binary: it
// is archived and not parsed, whose markup would be noise.
var ErrBinary = errors.New("content: binary data labelled as text")

// prescanLen is how much of a body the encoding prescan reads, as the
// HTML standard's does.
const prescanLen = 1024

// looksBinary reports a body that MIME sniffing (the WHATWG rules, as
// net/http implements them, on the first 512 bytes) does not take for
// text: one that opens with no markup and holds bytes that never occur in
// text, or a known binary format (an image, a PDF, an archive). HTML that
// opens with a tag stays HTML whatever follows, as it does for a browser;
// UTF-16 is known by its byte order mark.
func looksBinary(body []byte) bool {
	return !strings.HasPrefix(http.DetectContentType(body), "text/")
}

// toUTF8 returns body as UTF-8 and what was wrong or done: "" or one of
// the Charset kinds. The encoding is what the HTML standard's rules find
// (byte order mark, the Content-Type's charset, a <meta> in the first 1024
// bytes, else a guess), but for one change: a body that is valid UTF-8 is
// read as UTF-8 unless a byte order mark or the Content-Type says
// otherwise. Valid UTF-8 with non-ASCII bytes is almost never text in
// another encoding, while pages that never say their charset, or whose
// <meta> still names the encoding of an old template, are common.
//
// The converted copy is at most twice the body's size (a single-byte
// encoding needs up to three bytes a character for a few symbols, two for
// the letters), in one buffer of that size; conversion stops there, at a
// character boundary, and the second result says CharsetCut.
func toUTF8(body []byte, contentType string) ([]byte, string) {
	issue := ""
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		if label, ok := params["charset"]; ok {
			if e, _ := charset.Lookup(label); e == nil {
				issue = CharsetUnknown
			}
		}
	}
	enc, name, certain := charset.DetermineEncoding(body[:min(len(body), prescanLen)], contentType)
	// All-ASCII bodies are valid UTF-8 too, but a 7-bit encoding
	// (ISO-2022-JP) its <meta> names must still be decoded.
	if name == "utf-8" || !certain && !isASCII(body) && utf8.Valid(body) {
		if issue == "" && !utf8.Valid(body) {
			issue = CharsetInvalid
		}
		return body, issue
	}
	if name == "windows-1252" && isASCII(body) {
		return body, issue // the default guess, and nothing to convert
	}
	// One Transform into a buffer of the limit: a decoder writes whole
	// characters, and says ErrShortDst when the next does not fit.
	out := make([]byte, 2*len(body)+8)
	n, _, err := enc.NewDecoder().Transform(out, body, true)
	switch {
	case errors.Is(err, transform.ErrShortDst):
		return out[:n], CharsetCut
	case err != nil:
		// A decoder fails only on a broken stream; read the bytes as they are.
		return body, CharsetInvalid
	case issue == "":
		issue = CharsetTranscoded
	}
	return out[:n], issue
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
