package synthweb

import (
	"fmt"
	"net/http"
	"strings"
)

// BoostSite serves, on a test's own server, a site for the tests of an
// operator's boost: its home page links forty plain pages, /plain00 to
// /plain39, and then ten news pages, /news/00 to /news/09; every other
// path is a page that links nothing, and robots.txt answers 404. First
// in, first out, or by an estimate that cannot tell the fifty apart (one
// link each, from the same page), the plain pages go first; a boost on
// "/news/*" puts the news pages before them.
func BoostSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == robotsPath {
			http.NotFound(w, r)
			return
		}
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><head><title>t</title></head><body>\n")
		if r.URL.Path == "/" {
			for i := range 40 {
				fmt.Fprintf(&b, "<a href=\"/plain%02d\">p</a>\n", i)
			}
			for i := range 10 {
				fmt.Fprintf(&b, "<a href=\"/news/%02d\">n</a>\n", i)
			}
		}
		b.WriteString("</body></html>\n")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(b.String()))
	})
}
