package synthweb

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Names of the crawl-trap hosts (see IsTrap). Their URL spaces never run
// out, and each page is small, valid and distinct: its ~150 words are
// drawn for its URL alone, so that a near-duplicate detector sees unrelated
// pages. A crawler must count them traps, cut off by URL shape (repeated
// path segments, session ids, query combinations, date ranges) or by a
// per-host budget, and must fetch only a bounded number of their pages.
const (
	// TrapSessions puts a fresh session id in the path of every link, as
	// cookieless ASP.NET sessions do: "/" and /s/<id>/p/<n> link to
	// /s/<new>/p/<n+1> and /s/<new>/p/<n+2>, <new> being a new 24-digit
	// lowercase hex id on every request (from a counter of the web, so
	// one run's sequence is deterministic). Any id of that form is served.
	TrapSessions = "sessions"
	// TrapFacets is a faceted search: "/" links to /shop, and
	// /shop?color=C&size=S&brand=B&sort=O, with any of the four
	// parameters absent, links to every page that differs in exactly one
	// of them (set, changed or removed), parameters always in that order.
	// There are FacetPages such pages; a request with the same parameters
	// in another order is served the same page.
	TrapFacets = "facets"
	// TrapDeep is a relative-link trap: "/" links to "a/b/" and every
	// other directory page, any path of "a", "b" and "c" segments ending
	// in "/", links to "a/b/" and "c/", relative, so that the paths
	// /a/b/a/b/c/a/b/... grow for ever with repeated segments.
	TrapDeep = "deep"
	// TrapCalendar is an endless calendar: "/" links to /cal/2026/11/, and
	// each month page /cal/YYYY/MM/ (years 0001 to 9999) links to the
	// previous and next months and to the same month of the previous and
	// next years.
	TrapCalendar = "calendar"
)

// FacetPages is the number of distinct pages of the facets trap: each of
// 5 colours, 5 sizes and 5 brands or none, and each of 3 sorts or none.
const FacetPages = 6 * 6 * 6 * 4

// The facets and their values, in URL order.
var facets = [4]struct {
	name   string
	values []string
}{
	{"color", []string{"red", "green", "blue", "black", "white"}},
	{"size", []string{"xs", "s", "m", "l", "xl"}},
	{"brand", []string{"acme", "globex", "initech", "umbrella", "hooli"}},
	{"sort", []string{"price", "name", "new"}},
}

// trapWords is the length of a trap page's text.
const trapWords = 150

// smallPage renders a short valid page: a title, words words of text
// drawn for the host's kind and key (the page's canonical path), and links
// to hrefs, which must need no HTML escaping beyond "&".
func (w *Web) smallPage(h *host, key, title string, words int, hrefs []string) []byte {
	ki, _ := hostileKindIndex(h.hostile)
	r := newRNG(w.cfg.Seed, streamTrap, uint64(ki), hashString(key))
	b := make([]byte, 0, 256+words*8+len(hrefs)*64)
	b = append(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	b = append(b, title...)
	b = append(b, "</title>\n</head>\n<body>\n<h1>"...)
	b = append(b, title...)
	b = append(b, "</h1>\n<p>"...)
	b = w.text.appendWords(b, &r, words)
	b = append(b, ".</p>\n"...)
	b = appendLinkList(b, hrefs, func(b []byte, _ string) []byte { return w.text.appendWords(b, &r, 2) })
	return append(b, "</body>\n</html>\n"...)
}

// appendLinkList appends a list of links to hrefs, if any, each with the
// text text gives it.
func appendLinkList(b []byte, hrefs []string, text func(b []byte, href string) []byte) []byte {
	if len(hrefs) == 0 {
		return b
	}
	b = append(b, "<ul>\n"...)
	for _, href := range hrefs {
		b = append(b, `<li><a href="`...)
		b = appendEscapedPath(b, href)
		b = append(b, `">`...)
		b = text(b, href)
		b = append(b, "</a></li>\n"...)
	}
	return append(b, "</ul>\n"...)
}

// hashString is FNV-1a, to seed a page's text by its path.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// serveSessions answers the sessions trap.
func (w *Web) serveSessions(rw *logWriter, r *http.Request, h *host) {
	path := r.URL.Path
	var n uint64
	if path != "/" {
		rest, ok := strings.CutPrefix(path, "/s/")
		id, page, _ := strings.Cut(rest, "/p/")
		if n, ok = parseIndex(page, ok); !ok || !isSessionID(id) {
			notFound(rw, r)
			return
		}
	}
	next := w.newSessionID()
	links := []string{
		"/s/" + next + "/p/" + strconv.FormatUint(n+1, 10),
		"/s/" + next + "/p/" + strconv.FormatUint(n+2, 10),
	}
	writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "Page "+strconv.FormatUint(n, 10), trapWords, links))
}

// newSessionID returns the next session id of the web: 24 lowercase hex
// digits, a hash of a counter, so no two requests get the same one.
func (w *Web) newSessionID() string {
	x := mix64(uint64(w.cfg.Seed) ^ w.sessionSeq.Add(1)*0x9e3779b97f4a7c15)
	b := make([]byte, 0, 24)
	b = appendHex(b, x, 16, false)
	b = appendHex(b, mix64(x), 8, false)
	return string(b)
}

func isSessionID(s string) bool {
	if len(s) != 24 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// serveFacets answers the facets trap.
func (w *Web) serveFacets(rw *logWriter, r *http.Request, h *host) {
	switch r.URL.Path {
	case "/":
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, "/", "Shop", trapWords, []string{"/shop"}))
		return
	case "/shop":
	default:
		notFound(rw, r)
		return
	}
	// sel[f] is the index of facet f's value plus one; 0 means unset.
	var sel [len(facets)]int
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		notFound(rw, r)
		return
	}
	for k, vs := range q {
		f := -1
		for i := range facets {
			if facets[i].name == k {
				f = i
			}
		}
		if f < 0 || len(vs) != 1 {
			notFound(rw, r)
			return
		}
		v := -1
		for i, name := range facets[f].values {
			if name == vs[0] {
				v = i
			}
		}
		if v < 0 {
			notFound(rw, r)
			return
		}
		sel[f] = v + 1
	}
	self := facetURL(sel)
	var links []string
	for f := range facets {
		for v := 0; v <= len(facets[f].values); v++ {
			if v == sel[f] {
				continue
			}
			other := sel
			other[f] = v
			links = append(links, facetURL(other))
		}
	}
	title := "Shop"
	for f, v := range sel {
		if v > 0 {
			title += " " + facets[f].values[v-1]
		}
	}
	writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, self, title, trapWords, links))
}

// facetURL is the canonical path+query of a facet selection.
func facetURL(sel [len(facets)]int) string {
	var b strings.Builder
	b.WriteString("/shop")
	sep := byte('?')
	for f, v := range sel {
		if v == 0 {
			continue
		}
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(facets[f].name)
		b.WriteByte('=')
		b.WriteString(facets[f].values[v-1])
	}
	return b.String()
}

// serveDeep answers the relative-link trap.
func (w *Web) serveDeep(rw *logWriter, r *http.Request, h *host) {
	path := r.URL.Path
	if path == "/" {
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "Directory /", trapWords, []string{"a/b/"}))
		return
	}
	if !strings.HasSuffix(path, "/") {
		notFound(rw, r)
		return
	}
	for seg := range strings.SplitSeq(path[1:len(path)-1], "/") {
		if seg != "a" && seg != "b" && seg != "c" {
			notFound(rw, r)
			return
		}
	}
	writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "Directory "+path, trapWords, []string{"a/b/", "c/"}))
}

var monthNames = [12]string{"January", "February", "March", "April", "May", "June",
	"July", "August", "September", "October", "November", "December"}

// serveCalendar answers the calendar trap.
func (w *Web) serveCalendar(rw *logWriter, r *http.Request, h *host) {
	path := r.URL.Path
	if path == "/" {
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "Calendar", trapWords, []string{calendarPath(2026, 11)}))
		return
	}
	// /cal/YYYY/MM/, zero-padded
	if len(path) != len("/cal/2026/11/") || !strings.HasPrefix(path, "/cal/") || path[9] != '/' || path[12] != '/' {
		notFound(rw, r)
		return
	}
	year, ok1 := decimal(path[5:9])
	month, ok2 := decimal(path[10:12])
	if !ok1 || !ok2 || year < 1 || month < 1 || month > 12 {
		notFound(rw, r)
		return
	}
	var links []string
	add := func(y, m int) {
		if m < 1 {
			y, m = y-1, 12
		} else if m > 12 {
			y, m = y+1, 1
		}
		if y >= 1 && y <= 9999 {
			links = append(links, calendarPath(y, m))
		}
	}
	add(year, month-1)
	add(year, month+1)
	add(year-1, month)
	add(year+1, month)
	writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, monthNames[month-1]+" "+strconv.Itoa(year), trapWords, links))
}

// decimal parses a string of ASCII digits, leading zeros allowed.
func decimal(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, s != ""
}

func calendarPath(year, month int) string { return fmt.Sprintf("/cal/%04d/%02d/", year, month) }
