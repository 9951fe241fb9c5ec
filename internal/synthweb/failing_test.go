package synthweb

import (
	"slices"
	"strconv"
	"testing"
)

// TestFailingHosts: each failing host fails as its kind says, and its
// robots.txt's kind (HostInfo.Robots) says how its robots.txt fails.
func TestFailingHosts(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(FailOutage, FailStorm429Bare, FailStorm503Bare, FailFlaky, FailRobots500, FailRobots429))
	c := newClient(t, w)
	for _, k := range []struct {
		kind        string
		robots      int
		robotsAfter string
		page        int
		pageAfter   string
	}{
		{FailOutage, 404, "", 503, "3600"},
		{FailStorm429Bare, 404, "", 429, ""},
		{FailStorm503Bare, 404, "", 503, ""},
		{FailRobots500, 500, "", 200, ""},
		{FailRobots429, 429, "3600", 200, ""},
	} {
		h := hostileHost(t, w, k.kind)
		base := "http://" + h.Authority
		if r := get(t, c, base+"/robots.txt"); r.status != k.robots || r.header.Get("Retry-After") != k.robotsAfter {
			t.Errorf("%s robots.txt: %d, Retry-After %q; want %d, %q", k.kind, r.status, r.header.Get("Retry-After"), k.robots, k.robotsAfter)
		}
		for _, p := range []string{"/", "/f/1", "/f/" + strconv.Itoa(FailingPages)} {
			if r := get(t, c, base+p); r.status != k.page || r.header.Get("Retry-After") != k.pageAfter {
				t.Errorf("%s %s: %d, Retry-After %q; want %d, %q", k.kind, p, r.status, r.header.Get("Retry-After"), k.page, k.pageAfter)
			}
		}
		if failed := h.Robots == RobotsServerError; failed != (k.robots >= 429) {
			t.Errorf("%s: robots kind %v by the ground truth", k.kind, h.Robots)
		}
	}
	// The flaky host fails every other request, and gets there.
	h := hostileHost(t, w, FailFlaky)
	var got []int
	for _, p := range []string{"/", "/", "/f/1", "/f/1"} {
		got = append(got, get(t, c, "http://"+h.Authority+p).status)
	}
	if !slices.Equal(got, []int{503, 200, 503, 200}) {
		t.Errorf("flaky: %v, want every other request 503", got)
	}
	if r := get(t, c, "http://"+h.Authority+"/f/"+strconv.Itoa(FailingPages+1)); r.status != 404 && r.status != 503 {
		t.Errorf("flaky, a page it has not: %d", r.status)
	}
}
