package render

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"

	"github.com/weft-crawler/weft/internal/htmltoken"
)

// Signals are what a page's static HTML says of its need for a browser.
type Signals struct {
	Scripts  int  // <script> elements that run (not JSON or templates)
	NoScript bool // a <noscript> element
	// Text is the bytes of visible text (outside script, style,
	// noscript, template), spaces collapsed, counted until the rule is
	// decided.
	Text int
}

// TextFloor is the visible text under which a page with a script is taken
// for one its scripts build.
const TextFloor = 1024

// NeedsScript is weft's rule for --render auto: a page with at least one
// script that either has a <noscript> (the site says the page needs
// scripts) or shows under TextFloor bytes of text (a shell a script
// fills in). A page without scripts never needs a browser.
func (s Signals) NeedsScript() bool {
	return s.Scripts > 0 && (s.NoScript || s.Text < TextFloor)
}

// Inspect reads the signals of an HTML body with the tokenizer (no tree):
// a page without a "<script" costs one memchr-speed scan for it, and one
// with scripts is read until the rule is decided.
func Inspect(body []byte) Signals {
	var s Signals
	if !hasTag(body, "<script") {
		return s // no script: the rule needs nothing else
	}
	noscriptAhead := hasTag(body, "<noscript")
	z := htmltoken.New(bytes.Clone(body)) // Text converts in place

	hidden := 0 // depth inside script, style, noscript, template
	space := true
	for {
		// Read only until the rule is decided: a page with scripts and
		// enough text, and no <noscript> anywhere, stops early.
		if s.Scripts > 0 && (s.NoScript || !noscriptAhead && s.Text >= TextFloor) {
			return s
		}
		switch z.Next() {
		case html.ErrorToken:
			return s
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "script":
				runs := true
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					if string(k) == "type" {
						t := strings.ToLower(strings.TrimSpace(string(v)))
						runs = t == "" || t == "module" || strings.Contains(t, "javascript") || strings.Contains(t, "ecmascript")
					}
				}
				if runs {
					s.Scripts++
				}
				hidden++
			case "noscript":
				s.NoScript = true
				hidden++
			case "style", "template":
				hidden++
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "script", "noscript", "style", "template":
				if hidden > 0 {
					hidden--
				}
			}
		case html.TextToken:
			if hidden > 0 {
				continue
			}
			for _, b := range z.Text() {
				if b == ' ' || b == '\n' || b == '\t' || b == '\r' || b == '\f' {
					space = true
					continue
				}
				if space && s.Text > 0 {
					s.Text++
				}
				space = false
				s.Text++
			}
		}
	}
}

// hasTag reports whether body has tag (such as "<script"), in any case.
func hasTag(body []byte, tag string) bool {
	for i := 0; ; {
		j := bytes.IndexByte(body[i:], '<')
		if j < 0 {
			return false
		}
		i += j
		if len(body)-i < len(tag) {
			return false
		}
		if bytes.EqualFold(body[i:i+len(tag)], []byte(tag)) {
			return true
		}
		i++
	}
}
