package crawl

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/judge"
)

// MaxRedirects caps a page's redirect chain, each hop counted from the
// link that started it, and negative follows none; robots.txt's own
// redirects are followed whatever it says.
func TestMaxRedirects(t *testing.T) {
	for _, tc := range []struct {
		max     int
		fetched int // of /r0 ... /r4, then /end
		capped  int64
	}{
		{max: -1, fetched: 1, capped: 1}, // /r0 only: its redirect is not followed
		{max: 2, fetched: 3, capped: 1},  // /r0, /r1, /r2
		{max: 0, fetched: 6},             // the default, 5: /r0 ... /r4 and /end
	} {
		t.Run(strconv.Itoa(tc.max), func(t *testing.T) {
			mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
				"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
					p := r.URL.Path
					switch {
					case p == "/robots.txt":
						http.Redirect(rw, r, "/robots-hop", http.StatusMovedPermanently)
					case p == "/robots-hop":
						http.Redirect(rw, r, "/rules.txt", http.StatusFound)
					case p == "/rules.txt":
						robotsFile(rw, "User-agent: *\nDisallow: /private\n")
					case p == "/":
						page(rw, "/r0", "/private")
					case strings.HasPrefix(p, "/r"):
						n, _ := strconv.Atoi(p[2:])
						next := "/end"
						if n < 4 {
							next = "/r" + strconv.Itoa(n+1)
						}
						http.Redirect(rw, r, next, http.StatusFound)
					default:
						page(rw)
					}
				},
			})
			cfg := mw.config(t, 5*time.Millisecond, mw.url("a.test", "/"))
			cfg.MaxRedirects = tc.max
			sum := runCrawl(t, cfg)
			got := mw.paths("a.test")
			if slices.Contains(got, "/private") {
				t.Errorf("requests %v: /private fetched, which the redirected robots.txt disallows", got)
			}
			if !slices.Contains(got, "/rules.txt") {
				t.Errorf("requests %v: robots.txt's redirects not followed", got)
			}
			chain := []string{"/r0", "/r1", "/r2", "/r3", "/r4", "/end"}
			for i, p := range chain {
				if want := i < tc.fetched; slices.Contains(got, p) != want {
					t.Errorf("requests %v: %s fetched %v, want %v", got, p, !want, want)
				}
			}
			if sum.Rejected[judge.Redirects] != tc.capped {
				t.Errorf("rejected %v; want %d for redirects", sum.Rejected, tc.capped)
			}
		})
	}
}
