// Package htmltoken splits an HTML document held in memory into tokens,
// exactly as golang.org/x/net/html's Tokenizer splits it: the same token
// types and raw bytes, the same text, tag names and attributes, token for
// token, raw text elements, comments, doctypes and the end of the input
// included. FuzzAgrees and TestAgreesOnMutations hold it to that
// tokenizer over any input, and it falls back on that tokenizer for the
// one conversion it does not repeat: character references in attribute
// values other than "&amp;" and the '&'s the attribute rule leaves as
// they are (see TagAttr).
//
// It is written here, not taken from a library, because the two choices
// available are not both exact and fast. x/net/html is exact, but it reads
// its input a byte at a time through an io.Reader and copies every
// attribute name to check for duplicates: on the pages of weft bench's
// seeds world it ran at about 137 MB/s and was the largest part of
// extraction, itself a fifth of the crawl's CPU. Faster lexers (such as
// the one of tdewolff/parse) do not follow the WHATWG tokenizer's rules
// for script data, comments and the end of the input that x/net/html
// does, so links and words would differ with the tokenizer. This one
// reads a byte slice in place, finds the next '<' with bytes.IndexByte,
// and allocates nothing per token.
package htmltoken

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// span is buf[start:end].
type span struct{ start, end int }

// Tokenizer returns the tokens of a byte slice. Its zero value is ready
// for Reset. It is not safe for concurrent use.
type Tokenizer struct {
	// buf is the input. Text converts a token's text in place, as
	// x/net/html converts its own copy: the caller hands over a slice it
	// does not read again (see Reset).
	buf []byte
	pos int  // the next byte to read (x/net/html's raw.end)
	eof bool // a read found the end of buf: every later Next is an ErrorToken

	tt   html.TokenType
	raw  int  // start of the current token's raw bytes, which end at pos
	data span // a text token's text, a tag's name, a comment's data

	// attr are the current start tag's attributes, [key, value], without
	// those whose name repeats an earlier one (ASCII case-insensitively),
	// as x/net/html keeps them; returned counts those TagAttr gave.
	attr     [][2]span
	returned int
	names    map[string]struct{} // attribute names, once a tag has many
	// entities says, of the names met after a '&' in an attribute
	// value, which x/net/html leaves as they are (notEntity).
	entities map[string]bool

	// rawTag is the lower-case name of the element whose raw text the
	// next token is ("script", "title", ...), "" for none.
	rawTag string
	// textIsRaw: the text token's character references are not decoded;
	// convertNUL: its NULs become U+FFFD.
	textIsRaw, convertNUL bool

	// out holds what TagName and TagAttr return for the current tag,
	// never reallocated under a slice already returned; slow is the
	// tag's attributes as x/net/html converts them, once a value with a
	// character reference asks for them.
	out  []byte
	slow [][2][]byte
}

// New returns a Tokenizer for buf (see Reset).
func New(buf []byte) *Tokenizer {
	z := new(Tokenizer)
	z.Reset(buf)
	return z
}

// Reset starts z on buf, keeping its buffers of ordinary size (a hostile
// page's tag of a hundred thousand attributes does not pin their spans).
// Text converts buf's bytes in place, as x/net/html converts its own
// buffer, and so may a caller that writes into what Raw returns: pass a
// copy of a slice that is read again.
func (z *Tokenizer) Reset(buf []byte) {
	const keepAttrs, keepOut = 1 << 10, 64 << 10
	attr, out, names, entities := z.attr[:0], z.out[:0], z.names, z.entities
	if cap(attr) > keepAttrs {
		attr = nil
	}
	if cap(out) > keepOut {
		out = nil
	}
	if len(names) > keepAttrs {
		names = nil
	}
	clear(names)
	*z = Tokenizer{buf: buf, attr: attr, out: out, names: names, entities: entities}
}

// Buf returns the slice z reads, for a caller that pools it.
func (z *Tokenizer) Buf() []byte { return z.buf }

// NextIsNotRawText makes the next token markup even after a start tag
// whose content is raw text (<noscript> read by a client without
// scripting, say), as in x/net/html.
func (z *Tokenizer) NextIsNotRawText() { z.rawTag = "" }

// Raw returns the current token's bytes in the input. The raw bytes of
// the tokens before an ErrorToken partition the input.
func (z *Tokenizer) Raw() []byte { return z.buf[z.raw:z.pos] }

// Token types, as x/net/html names them.
const (
	errorToken       = html.ErrorToken
	textToken        = html.TextToken
	startTagToken    = html.StartTagToken
	endTagToken      = html.EndTagToken
	selfClosingToken = html.SelfClosingTagToken
	commentToken     = html.CommentToken
	doctypeToken     = html.DoctypeToken
)

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f'
}

func isLetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// more reports whether a byte is left to read; at the end it records that
// the input ran out, as a failed read of x/net/html does.
func (z *Tokenizer) more() bool {
	if z.pos < len(z.buf) {
		return true
	}
	z.eof = true
	return false
}

// past moves past the next c and reports true; with no c left it moves to
// the end and records that the input ran out.
func (z *Tokenizer) past(c byte) bool {
	i := bytes.IndexByte(z.buf[z.pos:], c)
	if i < 0 {
		z.pos = len(z.buf)
		z.eof = true
		return false
	}
	z.pos += i + 1
	return true
}

// skipSpace moves past white space.
func (z *Tokenizer) skipSpace() {
	for z.pos < len(z.buf) && isSpace(z.buf[z.pos]) {
		z.pos++
	}
	z.more()
}

// Next reads the next token and returns its type. At the end of the input,
// and after a tag the input ends inside, it returns ErrorToken.
func (z *Tokenizer) Next() html.TokenType {
	z.raw = z.pos
	z.data = span{z.pos, z.pos}
	if z.eof {
		z.tt = errorToken
		return z.tt
	}
	if z.rawTag != "" {
		if z.rawTag == "plaintext" {
			// Everything to the end, and nothing after it.
			z.pos = len(z.buf)
			z.eof = true
			z.data.end = z.pos
			z.textIsRaw = true
		} else {
			z.readRawText()
		}
		if z.data.end > z.data.start {
			z.tt = textToken
			z.convertNUL = true
			return z.tt
		}
	}
	z.textIsRaw, z.convertNUL = false, false
	for {
		i := bytes.IndexByte(z.buf[z.pos:], '<')
		if i < 0 || z.pos+i+1 == len(z.buf) {
			// No markup left: the rest, a last '<' included, is text.
			z.pos = len(z.buf)
			z.eof = true
			break
		}
		lt := z.pos + i
		c := z.buf[lt+1]
		if !isLetter(c) && c != '/' && c != '!' && c != '?' {
			z.pos = lt + 1 // a '<' that opens nothing is text
			continue
		}
		if lt > z.raw {
			// The text before it is a token of its own.
			z.pos = lt
			z.data.end = lt
			z.tt = textToken
			return z.tt
		}
		z.pos = lt + 2
		switch {
		case isLetter(c):
			z.tt = z.readStartTag()
			return z.tt
		case c == '/':
			if !z.more() {
				// "</" at the end is text.
				z.data.end = z.pos
				z.tt = textToken
				return z.tt
			}
			switch c := z.buf[z.pos]; {
			case c == '>':
				// "</>" is nothing; x/net/html gives an empty comment.
				z.pos++
				z.tt = commentToken
			case isLetter(c):
				z.pos++
				z.readTag(false)
				z.tt = endTagToken
				if z.eof {
					z.tt = errorToken
				}
			default:
				z.readToCloseAngle() // a bogus comment
				z.tt = commentToken
			}
			return z.tt
		case c == '!':
			z.tt = z.readMarkupDeclaration()
			return z.tt
		default: // '?': a bogus comment, the '?' its first byte
			z.pos--
			z.readToCloseAngle()
			z.tt = commentToken
			return z.tt
		}
	}
	if z.raw < z.pos {
		z.data.end = z.pos
		z.tt = textToken
		return z.tt
	}
	z.tt = errorToken
	return z.tt
}

// readToCloseAngle reads to the next '>' or the end: data is what lies
// before it.
func (z *Tokenizer) readToCloseAngle() {
	z.data.start = z.pos
	if z.past('>') {
		z.data.end = z.pos - 1
	} else {
		z.data.end = z.pos
	}
}

// readMarkupDeclaration reads what follows "<!": a comment, a doctype or a
// bogus comment.
func (z *Tokenizer) readMarkupDeclaration() html.TokenType {
	z.data.start = z.pos
	if z.pos+2 > len(z.buf) {
		// One byte or none before the end: a bogus comment of it, a
		// lone '>' closing it.
		oneGT := z.pos+1 == len(z.buf) && z.buf[z.pos] == '>'
		z.pos = len(z.buf)
		z.eof = true
		z.data.end = z.pos
		if oneGT {
			z.data.end--
		}
		return commentToken
	}
	if z.buf[z.pos] == '-' && z.buf[z.pos+1] == '-' {
		z.pos += 2
		z.readComment()
		return commentToken
	}
	if z.readDoctype() {
		return doctypeToken
	}
	z.readToCloseAngle()
	return commentToken
}

// readDoctype reads "DOCTYPE" (any case) and the rest of a doctype, or
// reads nothing and returns false.
func (z *Tokenizer) readDoctype() bool {
	const s = "DOCTYPE"
	if len(z.buf)-z.pos < len(s) {
		return false // the end comes first: x/net/html backs up too
	}
	for i := range len(s) {
		if c := z.buf[z.pos+i]; c != s[i] && c != s[i]+'a'-'A' {
			return false
		}
	}
	z.pos += len(s)
	if z.skipSpace(); z.eof {
		z.data = span{z.pos, z.pos}
		return true
	}
	z.readToCloseAngle()
	return true
}

// readComment reads a comment's data after "<!--", to "-->", "--!>", or
// a '>' right after the opening ("<!-->", "<!--->").
func (z *Tokenizer) readComment() {
	z.data.start = z.pos
	dashes, first := 0, true
	for {
		if !z.more() {
			z.data.end = z.abruptCommentEnd()
			break
		}
		c := z.buf[z.pos]
		z.pos++
		if c == '-' {
			dashes++
			continue
		}
		if c == '>' && (dashes >= 2 || first) {
			z.data.end = z.pos - len("-->")
			break
		}
		if c == '!' && dashes >= 2 {
			if !z.more() {
				z.data.end = z.abruptCommentEnd()
				break
			}
			c = z.buf[z.pos]
			z.pos++
			if c == '>' {
				z.data.end = z.pos - len("--!>")
				break
			}
			if c == '-' {
				dashes, first = 1, false
				continue
			}
		}
		dashes, first = 0, false
	}
	if z.data.end < z.data.start {
		z.data.end = z.data.start
	}
}

// abruptCommentEnd is the end of the data of a comment the input ends in:
// a trailing "--!", "--" or "-" is not data.
func (z *Tokenizer) abruptCommentEnd() int {
	raw := z.Raw()
	if len(raw) < len("<!--") {
		return z.pos
	}
	raw = raw[len("<!--"):]
	for _, s := range [...]string{"--!", "--", "-"} {
		if bytes.HasSuffix(raw, []byte(s)) {
			return z.pos - len(s)
		}
	}
	return z.pos
}

// rawTextElement returns the lower-case name of the element whose content
// is raw text or RCDATA if name (any case) is one, else "".
func rawTextElement(name []byte) string {
	if len(name) < 3 || len(name) > len("plaintext") {
		return ""
	}
	for _, s := range [...]string{"iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp"} {
		if equalFold(name, s) {
			return s
		}
	}
	return ""
}

// equalFold reports whether b equals s (lower case) in ASCII case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != s[i] {
			return false
		}
	}
	return true
}

// readStartTag reads a start tag after "<x", x a letter.
func (z *Tokenizer) readStartTag() html.TokenType {
	z.readTag(true)
	if z.eof {
		return errorToken
	}
	z.rawTag = rawTextElement(z.buf[z.data.start:z.data.end])
	// Self-closing when a '/' comes right before the '>', unless it ends
	// the last attribute's unquoted value (<a href=/>).
	if z.buf[z.pos-2] == '/' && (len(z.attr) == 0 || z.pos-2 != z.attr[len(z.attr)-1][1].end-1) {
		return selfClosingToken
	}
	return startTagToken
}

// readTag reads a tag's name and attributes, after its first letter; a
// start tag's are kept (save).
func (z *Tokenizer) readTag(save bool) {
	z.attr = z.attr[:0]
	z.returned = 0
	z.slow = z.slow[:0]
	z.out = z.out[:0]
	clear(z.names)
	z.readTagName()
	if z.skipSpace(); z.eof {
		return
	}
	for {
		if !z.more() {
			return
		}
		if z.buf[z.pos] == '>' {
			z.pos++
			return
		}
		key := z.readAttrKey()
		val := z.readAttrValue()
		if save && key.end > key.start && z.newName(key) {
			z.attr = append(z.attr, [2]span{key, val})
		}
		if z.skipSpace(); z.eof {
			return
		}
	}
}

// newName reports whether key names no attribute kept before it. A tag
// with a few attributes is compared pairwise; past manyAttrs, through a
// set of names, so that a hostile tag costs linear time.
func (z *Tokenizer) newName(key span) bool {
	const manyAttrs = 16
	k := z.buf[key.start:key.end]
	if len(z.attr) < manyAttrs {
		for _, a := range z.attr {
			if equalFoldBytes(z.buf[a[0].start:a[0].end], k) {
				return false
			}
		}
		return true
	}
	if z.names == nil {
		z.names = make(map[string]struct{})
	}
	if len(z.names) == 0 {
		for _, a := range z.attr {
			z.names[lowerString(z.buf[a[0].start:a[0].end])] = struct{}{}
		}
	}
	name := lowerString(k)
	if _, dup := z.names[name]; dup {
		return false
	}
	z.names[name] = struct{}{}
	return true
}

func equalFoldBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func lowerString(b []byte) string {
	var s strings.Builder
	s.Grow(len(b))
	for _, c := range b {
		s.WriteByte(lower(c))
	}
	return s.String()
}

// readTagName sets data to the tag's name, whose first byte was read.
func (z *Tokenizer) readTagName() {
	z.data.start = z.pos - 1
	for z.more() {
		c := z.buf[z.pos]
		z.pos++
		switch c {
		case ' ', '\n', '\r', '\t', '\f':
			z.data.end = z.pos - 1
			return
		case '/', '>':
			z.pos--
			z.data.end = z.pos
			return
		}
	}
	z.data.end = z.pos
}

// readAttrKey reads an attribute's name: to white space, '/', '>' or an
// '=' that is not its first byte.
func (z *Tokenizer) readAttrKey() span {
	start := z.pos
	for z.more() {
		c := z.buf[z.pos]
		z.pos++
		switch c {
		case '=':
			if z.pos == start+1 {
				continue
			}
			z.pos--
			return span{start, z.pos}
		case ' ', '\n', '\r', '\t', '\f', '/', '>':
			z.pos--
			return span{start, z.pos}
		}
	}
	return span{start, z.pos}
}

// readAttrValue reads "= value" after an attribute's name, if it is there.
func (z *Tokenizer) readAttrValue() span {
	v := span{z.pos, z.pos}
	if z.skipSpace(); z.eof {
		return v
	}
	c := z.buf[z.pos]
	z.pos++
	if c == '/' {
		return v
	}
	if c != '=' {
		z.pos--
		return v
	}
	if z.skipSpace(); z.eof {
		return v
	}
	q := z.buf[z.pos]
	z.pos++
	switch q {
	case '>':
		z.pos--
		return v
	case '"', '\'':
		start := z.pos
		if !z.past(q) {
			return span{start, z.pos}
		}
		return span{start, z.pos - 1}
	}
	start := z.pos - 1
	for z.more() {
		c := z.buf[z.pos]
		z.pos++
		switch c {
		case ' ', '\n', '\r', '\t', '\f':
			return span{start, z.pos - 1}
		case '>':
			z.pos--
			return span{start, z.pos}
		}
	}
	return span{start, z.pos}
}

// readRawText reads the content of a raw text or RCDATA element, up to its
// end tag or the end of the input.
func (z *Tokenizer) readRawText() {
	if z.rawTag == "script" {
		z.readScript()
		z.data.end = z.pos
		z.textIsRaw = true
		z.rawTag = ""
		return
	}
	for z.past('<') {
		if !z.more() {
			break
		}
		if z.buf[z.pos] != '/' {
			continue
		}
		z.pos++
		if z.rawEndTag() || z.eof {
			break
		}
	}
	z.data.end = z.pos
	// The content of <textarea> and <title> may hold character references.
	z.textIsRaw = z.rawTag != "textarea" && z.rawTag != "title"
	z.rawTag = ""
}

// rawEndTag reads, after "</", the name of the element whose raw text is
// being read and a byte that can end a tag name. If they are there, it
// moves back before the "</" and returns true; if not, it leaves the
// first byte that differs unread.
func (z *Tokenizer) rawEndTag() bool {
	for i := range len(z.rawTag) {
		if !z.more() {
			return false
		}
		if c := z.buf[z.pos]; c != z.rawTag[i] && c != z.rawTag[i]-('a'-'A') {
			return false
		}
		z.pos++
	}
	if !z.more() {
		return false
	}
	switch z.buf[z.pos] {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		z.pos -= len("</") + len(z.rawTag)
		return true
	}
	return false
}

// The states of script data (WHATWG HTML 13.2.5.4 and those after it), as
// x/net/html follows them.
const (
	scriptData = iota
	scriptLessThan
	scriptEndTagOpen
	scriptEscapeStart
	scriptEscapeStartDash
	scriptEscapedEndTagOpen
	scriptDoubleEscapeStart
	scriptDoubleEscapeEnd

	// The escaped states and the double-escaped ones, each family in the
	// same order: after a dash, after two, after '<' (see escapedStep).
	scriptEscaped
	scriptEscapedDash
	scriptEscapedDashDash
	scriptEscapedLessThan
	scriptDoubleEscaped
	scriptDoubleEscapedDash
	scriptDoubleEscapedDashDash
	scriptDoubleEscapedLessThan
)

// escapedStep is the state after c in state, one of the escaped or
// double-escaped states other than "after '<'": a dash moves to "after a
// dash", then "after two", where more dashes stay; '<' to "after '<'";
// '>' after two dashes ends the escape; anything else goes back to the
// family's first state.
func escapedStep(state int, c byte) int {
	first := scriptEscaped
	if state >= scriptDoubleEscaped {
		first = scriptDoubleEscaped
	}
	switch {
	case c == '-':
		return min(state+1, first+2)
	case c == '<':
		return first + 3
	case c == '>' && state == first+2:
		return scriptData
	}
	return first
}

// readScript reads a script's content, up to the "</script" that ends it
// or the end of the input: a "</script" inside "<!--" and "<script" is not
// its end.
func (z *Tokenizer) readScript() {
	state := scriptData
	for {
		switch state {
		case scriptData:
			if !z.past('<') {
				return
			}
			state = scriptLessThan
			continue
		case scriptEndTagOpen:
			if z.rawEndTag() || z.eof {
				return
			}
			state = scriptData
			continue
		case scriptEscapedEndTagOpen:
			if z.rawEndTag() || z.eof {
				return
			}
			state = scriptEscaped
			continue
		case scriptDoubleEscapeStart:
			// The letter after "<" is read again, as the start of "script".
			z.pos--
			const s = "script"
			matched := true
			for i := range len(s) {
				if !z.more() {
					return
				}
				if c := z.buf[z.pos]; c != s[i] && c != s[i]-('a'-'A') {
					matched = false
					break
				}
				z.pos++
			}
			if !matched {
				state = scriptEscaped
				continue
			}
			if !z.more() {
				return
			}
			if c := z.buf[z.pos]; isSpace(c) || c == '/' || c == '>' {
				z.pos++
				state = scriptDoubleEscaped
			} else {
				state = scriptEscaped
			}
			continue
		case scriptDoubleEscapeEnd:
			if z.rawEndTag() {
				z.pos += len("</script>")
				state = scriptEscaped
				continue
			}
			if z.eof {
				return
			}
			state = scriptDoubleEscaped
			continue
		}
		// The states that read one byte.
		if !z.more() {
			return
		}
		c := z.buf[z.pos]
		z.pos++
		switch state {
		case scriptLessThan:
			switch c {
			case '/':
				state = scriptEndTagOpen
			case '!':
				state = scriptEscapeStart
			default:
				z.pos--
				state = scriptData
			}
		case scriptEscapeStart:
			if c == '-' {
				state = scriptEscapeStartDash
			} else {
				z.pos--
				state = scriptData
			}
		case scriptEscapeStartDash:
			if c == '-' {
				state = scriptEscapedDashDash
			} else {
				z.pos--
				state = scriptData
			}
		case scriptEscaped, scriptEscapedDash, scriptEscapedDashDash,
			scriptDoubleEscaped, scriptDoubleEscapedDash, scriptDoubleEscapedDashDash:
			state = escapedStep(state, c)
		case scriptEscapedLessThan:
			switch {
			case c == '/':
				state = scriptEscapedEndTagOpen
			case isLetter(c):
				state = scriptDoubleEscapeStart
			default:
				z.pos--
				state = scriptData
			}
		case scriptDoubleEscapedLessThan:
			if c == '/' {
				state = scriptDoubleEscapeEnd
			} else {
				z.pos--
				state = scriptDoubleEscaped
			}
		}
	}
}

var (
	nul         = []byte{0}
	replacement = []byte("\ufffd")
)

// Text returns the text of a text, comment or doctype token: newlines
// normalised, NULs replaced where x/net/html replaces them, character
// references decoded outside raw text. It converts the input in place,
// and a second call returns nothing.
func (z *Tokenizer) Text() []byte {
	switch z.tt {
	case textToken, commentToken, doctypeToken:
	default:
		return nil
	}
	s := z.buf[z.data.start:z.data.end]
	z.data = span{z.pos, z.pos}
	s = convertNewlines(s)
	if (z.convertNUL || z.tt == commentToken) && bytes.IndexByte(s, 0) >= 0 {
		s = bytes.ReplaceAll(s, nul, replacement)
	}
	if !z.textIsRaw && bytes.IndexByte(s, '&') >= 0 {
		// x/net/html's own decoder, the one its Text uses.
		s = []byte(html.UnescapeString(string(s)))
	}
	return s
}

// convertNewlines makes each "\r\n" and each other '\r' in s a '\n', in
// place.
func convertNewlines(s []byte) []byte {
	i := bytes.IndexByte(s, '\r')
	if i < 0 {
		return s
	}
	w := i
	for r := i; r < len(s); r++ {
		c := s[r]
		if c == '\r' {
			c = '\n'
			if r+1 < len(s) && s[r+1] == '\n' {
				r++
			}
		}
		s[w] = c
		w++
	}
	return s[:w]
}

// TagName returns a tag's lower-case name and whether it has attributes
// left for TagAttr. A second call returns nothing.
func (z *Tokenizer) TagName() (name []byte, hasAttr bool) {
	if z.data.start >= z.data.end {
		return nil, false
	}
	switch z.tt {
	case startTagToken, endTagToken, selfClosingToken:
	default:
		return nil, false
	}
	name = z.converted(z.buf[z.data.start:z.data.end], true)
	z.data = span{z.pos, z.pos}
	return name, z.returned < len(z.attr)
}

// TagAttr returns the next attribute of a start tag: its name in lower
// case and its value, newlines normalised and character references
// decoded, and whether another follows. The slices stay as they are until
// Next.
//
// A value with a '&' is decoded the way x/net/html decodes attributes,
// which differs from text (a reference without its ';' before '=' or a
// letter stays as it is). The '&'s of most links are read in place
// (PlainRefs): "&amp;", and those the attribute rule leaves as they are,
// a query's raw "&b=2" or "&utm_source=x". For a tag with any other, and
// only for it, the tag's raw bytes are read again by an x/net/html
// Tokenizer.
func (z *Tokenizer) TagAttr() (key, val []byte, more bool) {
	if z.returned >= len(z.attr) {
		return nil, nil, false
	}
	switch z.tt {
	case startTagToken, selfClosingToken:
	default:
		return nil, nil, false
	}
	a := z.attr[z.returned]
	z.returned++
	more = z.returned < len(z.attr)
	raw := z.buf[a[1].start:a[1].end]
	amp := len(z.slow) == 0 && bytes.IndexByte(raw, '&') >= 0
	if amp && !z.PlainRefs(raw) {
		z.readSlow()
	}
	if len(z.slow) > 0 {
		kv := z.slow[z.returned-1]
		return kv[0], kv[1], more
	}
	key = z.converted(z.buf[a[0].start:a[0].end], true)
	val = convertNewlines(z.converted(raw, false))
	if amp {
		val = DecodeAmp(val)
	}
	return key, val, more
}

// PlainRefs reports whether every '&' of an attribute value is one that
// DecodeAmp decodes as x/net/html does: "&amp;", or one that the
// attribute rule leaves as it is because no name follows it (but a '#',
// a numeric reference), or its name, with no ';', is followed by '=' or
// is no reference's name ("&utm_source=").
func (z *Tokenizer) PlainRefs(v []byte) bool {
	for i := bytes.IndexByte(v, '&'); i >= 0; {
		j := i + 1
		for j < len(v) && isAlnum(v[j]) {
			j++
		}
		switch {
		case j == i+1: // no name
			if j < len(v) && v[j] == '#' {
				return false
			}
		case j-i == 4 && j < len(v) && v[j] == ';' && string(v[i+1:j]) == "amp":
		case j < len(v) && v[j] == '=':
		case j < len(v) && v[j] == ';' || !z.notEntity(v[i+1:j]):
			return false
		}
		k := bytes.IndexByte(v[j:], '&')
		if k < 0 {
			break
		}
		i = j + k
	}
	return true
}

// notEntity reports whether x/net/html, decoding text, leaves "&"+name as
// it is: then name is no character reference's name, and an attribute
// keeps it too. (Text also decodes a reference that starts the name,
// "&notin" as "¬in", which an attribute does not: such a name is read by
// x/net/html.) Its table of names is not exported, so its decoding is
// asked, once for each name a Tokenizer meets (its answers kept from page
// to page, up to maxEntityNames).
func (z *Tokenizer) notEntity(name []byte) bool {
	if len(name) > maxEntityName {
		return true
	}
	if v, ok := z.entities[string(name)]; ok {
		return v
	}
	ref := "&" + string(name)
	v := html.UnescapeString(ref) == ref
	if z.entities == nil || len(z.entities) >= maxEntityNames {
		z.entities = make(map[string]bool)
	}
	z.entities[string(name)] = v
	return v
}

// maxEntityName is the longest name of a character reference (HTML's
// "CounterClockwiseContourIntegral;"); maxEntityNames bounds the names a
// Tokenizer remembers.
const maxEntityName, maxEntityNames = 32, 1024

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// DecodeAmp decodes, in place, each "&amp;" of a value PlainRefs passed;
// its other '&'s stay as they are.
func DecodeAmp(v []byte) []byte {
	i := bytes.Index(v, []byte("&amp;"))
	if i < 0 {
		return v
	}
	w := i
	for r := i; r < len(v); {
		if v[r] == '&' && bytes.HasPrefix(v[r:], []byte("&amp;")) {
			v[w] = '&'
			w++
			r += len("&amp;")
			continue
		}
		v[w] = v[r]
		w++
		r++
	}
	return v[:w]
}

// converted copies b into z.out with each NUL made U+FFFD, in lower case
// if asked. z.out grows into a new array rather than move what earlier
// calls returned.
func (z *Tokenizer) converted(b []byte, lowerCase bool) []byte {
	need := len(b) + 2*bytes.Count(b, nul)
	if cap(z.out)-len(z.out) < need {
		z.out = make([]byte, 0, max(2*cap(z.out), need, 256))
	}
	start := len(z.out)
	for _, c := range b {
		switch {
		case c == 0:
			z.out = append(z.out, replacement...)
		case lowerCase:
			z.out = append(z.out, lower(c))
		default:
			z.out = append(z.out, c)
		}
	}
	return z.out[start:len(z.out):len(z.out)]
}

// readSlow has an x/net/html Tokenizer read the current tag's raw bytes
// alone, which it tokenizes as it did in place, and keeps its attributes.
func (z *Tokenizer) readSlow() {
	t := html.NewTokenizer(bytes.NewReader(z.Raw()))
	t.Next()
	for more := true; more; {
		var k, v []byte
		k, v, more = t.TagAttr()
		if k == nil && !more {
			break
		}
		z.slow = append(z.slow, [2][]byte{k, v})
	}
	if len(z.slow) != len(z.attr) {
		// Cannot happen (a tag is tokenized the same alone, which
		// TestAgreesOnEdgeCases and FuzzAgrees check): should it, the
		// tag's attributes read as nothing rather than the wrong ones.
		z.slow = z.slow[:0]
		for len(z.slow) < len(z.attr) {
			z.slow = append(z.slow, [2][]byte{nil, nil})
		}
	}
}
