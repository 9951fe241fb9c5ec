package extract

import (
	"bytes"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/css"

	"github.com/weft-crawler/weft/internal/pct"
)

// CSS returns the URLs a style sheet (or a style attribute's
// declarations) refers to: every url(...) and the string of each @import,
// raw (unresolved), in order, at most max (DefaultMaxLinks when max <= 0).
// It tokenizes with tdewolff/parse's CSS lexer, as CSS Syntax Level 3
// does, so comments, strings and escapes are where a browser finds them:
// a "url(" inside a comment or a string is not a URL.
func CSS(b []byte, max int) []string {
	if max <= 0 {
		max = DefaultMaxLinks
	}
	var out []string
	l := css.NewLexer(parse.NewInputBytes(b))
	importing := false
	for len(out) < max {
		tt, data := l.Next()
		switch tt {
		case css.ErrorToken:
			return out
		case css.AtKeywordToken:
			importing = bytes.EqualFold(data, []byte("@import"))
			continue
		case css.WhitespaceToken, css.CommentToken:
			continue
		case css.URLToken:
			out = appendCSSURL(out, cssURL(data))
		case css.StringToken:
			if importing {
				out = appendCSSURL(out, cssString(data))
			}
		}
		importing = false
	}
	return out
}

// appendCSSURL appends u unless it is empty or of a scheme that names no
// resource to fetch (data:, javascript:, ...).
func appendCSSURL(out []string, u string) []string {
	if u == "" || skipScheme([]byte(u)) {
		return out
	}
	return append(out, u)
}

// cssURL is the URL of a url(...) token: unquoted or quoted, trimmed.
func cssURL(tok []byte) string {
	if len(tok) < 5 {
		return ""
	}
	in := bytes.TrimSpace(tok[4 : len(tok)-1]) // between "url(" and ")"
	if len(in) > 0 && (in[0] == '"' || in[0] == '\'') {
		return cssString(in)
	}
	return string(trimURL(unescapeCSS(in)))
}

// cssString is the content of a quoted CSS string token.
func cssString(tok []byte) string {
	if len(tok) < 2 {
		return ""
	}
	return string(trimURL(unescapeCSS(tok[1 : len(tok)-1])))
}

// unescapeCSS undoes the escapes a URL may hold in CSS: a backslash before
// a character that is not a hex digit stands for it; a hex escape
// (rare in URLs) is kept as written.
func unescapeCSS(b []byte) []byte {
	if bytes.IndexByte(b, '\\') < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+1 < len(b) && !pct.IsHex(b[i+1]) && b[i+1] != '\n' {
			i++
		}
		out = append(out, b[i])
	}
	return out
}
