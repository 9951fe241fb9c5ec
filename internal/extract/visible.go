package extract

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"

	"github.com/weft-crawler/weft/internal/htmltoken"
)

// VisibleText returns the text an HTML page shows, its runs of white
// space made one space, at most max bytes of it (a word may be cut there):
// what is outside script, style, template and noscript elements, titles
// included. It is for the public API's pages, read once per page when a
// consumer asks, not for the crawl's hot path, which hashes words as it
// reads (Limits.Words).
func VisibleText(page []byte, max int) string {
	z := htmltoken.New(bytes.Clone(page)) // Text converts in place
	var b strings.Builder
	hidden := 0
	for b.Len() < max {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken:
			if hiddenTag(z.Raw()) {
				hidden++
			}
		case html.EndTagToken:
			if raw := z.Raw(); len(raw) > 1 && hiddenTag(raw[1:]) && hidden > 0 {
				hidden--
			}
		case html.TextToken:
			if hidden > 0 {
				continue
			}
			for _, f := range strings.Fields(string(z.Text())) {
				if b.Len() > 0 {
					b.WriteByte(' ') // words of two elements are two words
				}
				b.WriteString(f)
				if b.Len() >= max {
					break
				}
			}
		}
	}
	s := b.String()
	return s[:min(len(s), max)]
}
