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
	// Links is the distinct targets of the page's own <a href> and
	// <area href> (a fragment of the page itself, javascript:, mailto:,
	// tel: and data: left out), counted up to NavFloor.
	Links int
}

// TextFloor is the visible text under which a page with a script is taken
// for one its scripts build.
const TextFloor = 1024

// NavFloor is the links in its HTML from which a page has static
// navigation: a documentation page's table of contents and sidebar, a
// site's menu and footer. A script-built shell has none, or the few of
// a header; a link-rich page's scripts (a theme, a search box, a
// highlighter) have no links left to make.
const NavFloor = 8

// NeedsScript is weft's first test for --render auto: a page with at
// least one script that either has a <noscript> (the site says something
// of the page needs scripts) or shows under TextFloor bytes of text (a
// shell a script fills in). A page without scripts never needs a
// browser.
func (s Signals) NeedsScript() bool {
	return s.Scripts > 0 && (s.NoScript || s.Text < TextFloor)
}

// Navigates reports whether the page has static navigation (NavFloor
// links or more in its HTML): its links are taken as complete, and
// --render auto renders it only on a host whose renders have found links
// their pages' HTML did not have.
func (s Signals) Navigates() bool { return s.Links >= NavFloor }

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
	var links map[string]struct{}
	for {
		// Read only until the rule is decided: a page with scripts and
		// enough text, and no <noscript> anywhere, needs no browser; one
		// with a <noscript> and static navigation is decided by its host.
		if s.Scripts > 0 && (!noscriptAhead && s.Text >= TextFloor || s.NoScript && s.Links >= NavFloor) {
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
			case "a", "area":
				if s.Links >= NavFloor {
					break
				}
				for hasAttr {
					var k, v []byte
					k, v, hasAttr = z.TagAttr()
					if string(k) != "href" || !navigable(v) {
						continue
					}
					if links == nil {
						links = make(map[string]struct{}, NavFloor)
					}
					if _, ok := links[string(v)]; !ok {
						links[string(v)] = struct{}{}
						s.Links++
					}
				}
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

// navigable reports whether href leads to another document: not empty,
// not a fragment of the page, not a script, mail, phone or data URL.
func navigable(href []byte) bool {
	h := bytes.TrimSpace(href)
	if len(h) == 0 || h[0] == '#' {
		return false
	}
	for _, scheme := range [...]string{"javascript:", "mailto:", "tel:", "data:"} {
		if len(h) >= len(scheme) && bytes.EqualFold(h[:len(scheme)], []byte(scheme)) {
			return false
		}
	}
	return true
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
