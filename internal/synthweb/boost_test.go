package synthweb

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"testing"
)

// TestBoostSite checks the site the boost tests read the order of: the
// home page links forty plain pages and then ten news pages, the pages
// link nothing, robots.txt is 404.
func TestBoostSite(t *testing.T) {
	srv := httptest.NewServer(BoostSite())
	t.Cleanup(srv.Close)
	c := srv.Client()
	links := func(path string) []string {
		r := get(t, c, srv.URL+path)
		if r.status != http.StatusOK {
			t.Fatalf("%s: status %d", path, r.status)
		}
		var out []string
		for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllSubmatch(r.body, -1) {
			out = append(out, string(m[1]))
		}
		return out
	}
	var want []string
	for i := range 40 {
		want = append(want, fmt.Sprintf("/plain%02d", i))
	}
	for i := range 10 {
		want = append(want, fmt.Sprintf("/news/%02d", i))
	}
	if home := links("/"); !slices.Equal(home, want) {
		t.Errorf("home page links %v, want %v", home, want)
	}
	for _, p := range []string{"/plain00", "/news/09"} {
		if l := links(p); len(l) != 0 {
			t.Errorf("%s links %v, want nothing", p, l)
		}
	}
	if r := get(t, c, srv.URL+"/robots.txt"); r.status != http.StatusNotFound {
		t.Errorf("robots.txt: status %d, want 404", r.status)
	}
}
