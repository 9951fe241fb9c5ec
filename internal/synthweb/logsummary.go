package synthweb

import (
	"net/url"
	"strings"
)

// LogSummary counts the requests of the log by what they asked for, so
// that crawlers are compared by the same measure whatever they report of
// themselves.
type LogSummary struct {
	Requests  int `json:"requests"`  // every request received
	Robots    int `json:"robots"`    // robots.txt and its redirect hops
	Redirects int `json:"redirects"` // other requests answered 3xx
	// Pages counts the other requests answered 2xx; UniquePages the
	// distinct canonical URLs among them (host as sent, lowercase, and
	// path+query with tracking and session parameters dropped and the
	// query sorted, as the web itself keys its pages).
	Pages       int `json:"pages"`
	UniquePages int `json:"unique_pages"`
	Other       int `json:"other"` // answered otherwise (4xx, 5xx, none)
}

// Summary counts the request log; call WaitIdle first for a finished crawl.
func (w *Web) Summary() LogSummary {
	var s LogSummary
	seen := map[string]struct{}{}
	for _, r := range w.Log() {
		s.Requests++
		path, _, _ := strings.Cut(r.Path, "?")
		switch {
		case path == robotsPath || strings.HasPrefix(path, "/robots/"):
			s.Robots++
		case r.Status >= 300 && r.Status < 400:
			s.Redirects++
		case r.Status >= 200 && r.Status < 300:
			s.Pages++
			key := r.Host + r.Path
			if u, err := url.ParseRequestURI(r.Path); err == nil {
				key = r.Host + canonicalPath(u.EscapedPath(), u.RawQuery)
			}
			seen[key] = struct{}{}
		default:
			s.Other++
		}
	}
	s.UniquePages = len(seen)
	return s
}
