package synthweb

import (
	"bytes"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var anchorHref = regexp.MustCompile(`<a [^>]*href="([^"]*)"`)

// seedsCanonical canonicalises an href of page base as the web keys its
// pages: scheme and host lowercased, no fragment, tracking and session
// parameters dropped, the query sorted.
func seedsCanonical(t *testing.T, base *url.URL, href string) (*url.URL, string) {
	t.Helper()
	ref, err := url.Parse(html.UnescapeString(href))
	if err != nil {
		t.Fatalf("href %q of %s: %v", href, base, err)
	}
	abs := base.ResolveReference(ref)
	return abs, "http://" + strings.ToLower(abs.Host) + canonicalPath(abs.EscapedPath(), abs.RawQuery)
}

// The checks of the news worlds (WorldSeeds, WorldHeavy) follow.

// trackedQuery reports whether q carries tracking or session parameters.
func trackedQuery(q url.Values) bool {
	return q.Has("utm_source") || q.Has("utm_campaign") || q.Has("fbclid") || q.Has("gclid") || q.Has("sid")
}

// reorderedQuery reports whether the parameters of rawQuery that
// canonicalisation keeps are out of their canonical, sorted order.
func reorderedQuery(rawQuery string) bool {
	var keys []string
	for kv := range strings.SplitSeq(rawQuery, "&") {
		if k, _, _ := strings.Cut(kv, "="); kv != "" && !isDroppedParam(k) {
			keys = append(keys, k)
		}
	}
	return !slices.IsSorted(keys)
}

// checkServed asks w for pi.URL through c, which follows no redirect, and
// checks the answer against pi: its status, and its body (Body's) or, for
// a redirect, its Location.
func checkServed(t *testing.T, w *Web, c *http.Client, pi PageInfo) {
	t.Helper()
	r := get(t, c, pi.URL)
	if r.status != pi.Status {
		t.Fatalf("%s: status %d, want %d", pi.URL, r.status, pi.Status)
	}
	if pi.Role != "redirect" {
		if !bytes.Equal(r.body, w.Body(pi.URL)) {
			t.Fatalf("%s: served body differs from Body", pi.URL)
		}
		return
	}
	loc := r.header.Get("Location")
	ref, err := url.Parse(loc)
	if loc == "" || err != nil || mustParse(t, pi.URL).ResolveReference(ref).String() != pi.RedirectTo {
		t.Fatalf("%s: Location %q (%v), want %s", pi.URL, loc, err, pi.RedirectTo)
	}
}

// checkOddRequest asks w, through c, for the first page whose URL holds
// marker, its query spelt as odd spells it from the page's own (out of
// order, with tracking parameters), and checks that the answer is the
// page.
func checkOddRequest(t *testing.T, w *Web, c *http.Client, marker string, odd func(q url.Values) string) {
	t.Helper()
	var page PageInfo
	for _, pi := range w.AllPages() {
		if strings.Contains(pi.URL, marker) {
			page = pi
			break
		}
	}
	if page.URL == "" {
		t.Fatalf("no %s page", marker)
	}
	u := mustParse(t, page.URL)
	u.RawQuery = odd(u.Query())
	if r := get(t, c, u.String()); r.status != http.StatusOK || !bytes.Equal(r.body, w.Body(page.URL)) {
		t.Errorf("%s: status %d, or not the body of %s", u, r.status, page.URL)
	}
}

// checkSameSeed starts another web of w's cfg and checks that every
// step-th URL of it has the body of w's, the hosts' authorities (their
// ports) aside.
func checkSameSeed(t *testing.T, w *Web, cfg Config, step int) {
	t.Helper()
	w2 := startWeb(t, cfg)
	strip := func(w *Web, b []byte) []byte {
		for _, h := range w.Hosts() {
			b = bytes.ReplaceAll(b, []byte(h.Authority), []byte(h.Name))
			b = bytes.ReplaceAll(b, []byte(strings.ToUpper(h.Authority)), []byte(h.Name))
		}
		return b
	}
	all, all2 := w.AllPages(), w2.AllPages()
	if len(all2) != len(all) {
		t.Fatalf("%d URLs, then %d from the same seed", len(all), len(all2))
	}
	for i := 0; i < len(all2); i += step {
		if !bytes.Equal(strip(w2, w2.Body(all2[i].URL)), strip(w, w.Body(all[i].URL))) {
			t.Fatalf("%s: another body from the same seed", all2[i].URL)
		}
	}
}

// TestSeedsWorldShape crawls a WorldSeeds web breadth-first from its seeds,
// reading the served bodies, over a tenth of its pages (the share of a
// bench crawl), and checks the shape the world promises: about 100 links
// a page, about 9 in 10 to URLs already seen, many with tracking
// parameters or a reordered query, some short links that redirect, pages
// of 20-60 KB; and that every link leads to a URL of the web.
func TestSeedsWorldShape(t *testing.T) {
	w := startWeb(t, Config{Seed: 7, Hosts: 4, PagesPerHost: 1000, World: WorldSeeds})
	total := 0
	for h := range w.nOrdinary {
		total += int(w.seeds.pages[h])
	}
	budget := total / 10
	seen := map[string]bool{}
	var queue []string
	for _, s := range w.Seeds() {
		seen[s] = true
		queue = append(queue, s)
	}
	var pages, links, seenLinks, tracked, reordered, short, minSize, maxSize int
	minSize = 1 << 30
	for len(queue) > 0 && pages < budget {
		u := queue[0]
		queue = queue[1:]
		pi, ok := w.Page(u)
		if !ok {
			t.Fatalf("%s: discovered, but not a URL of the web", u)
		}
		if pi.Disallowed {
			continue
		}
		if pi.RedirectTo != "" {
			if !seen[pi.RedirectTo] {
				seen[pi.RedirectTo] = true
				queue = append(queue, pi.RedirectTo)
			}
			continue
		}
		body := w.Body(u)
		pages++
		minSize, maxSize = min(minSize, len(body)), max(maxSize, len(body))
		base, _ := url.Parse(u)
		var got []string
		for _, m := range anchorHref.FindAllSubmatch(body, -1) {
			href := string(m[1])
			if strings.HasPrefix(href, "mailto:") {
				continue
			}
			links++
			abs, c := seedsCanonical(t, base, href)
			got = append(got, c)
			if seen[c] {
				seenLinks++
			} else {
				seen[c] = true
				queue = append(queue, c)
			}
			if trackedQuery(abs.Query()) {
				tracked++
			}
			if reorderedQuery(abs.RawQuery) {
				reordered++
			}
			if strings.HasPrefix(abs.Path, "/s/") {
				short++
			}
		}
		slices.Sort(got)
		if got = slices.Compact(got); !slices.Equal(got, pi.Links) {
			t.Fatalf("%s: the body links %d URLs, its PageInfo %d:\n%v\n%v", u, len(got), len(pi.Links), got, pi.Links)
		}
	}
	if pages < budget {
		t.Fatalf("the crawl ran out after %d pages of %d", pages, budget)
	}
	perPage := float64(links) / float64(pages)
	share := func(n int) float64 { return float64(n) / float64(links) }
	t.Logf("%d pages, %.1f links a page, %.3f to URLs seen, %.3f tracked, %.3f reordered, %.3f short links, %d to %d bytes",
		pages, perPage, share(seenLinks), share(tracked), share(reordered), share(short), minSize, maxSize)
	if perPage < 90 || perPage > 110 {
		t.Errorf("%.1f links a page, want about 100", perPage)
	}
	if s := share(seenLinks); s < 0.85 || s > 0.95 {
		t.Errorf("%.3f of links to URLs already seen, want about 0.9", s)
	}
	if s := share(tracked); s < 0.2 || s > 0.5 {
		t.Errorf("%.3f of links carry tracking or session parameters, want 0.2 to 0.5", s)
	}
	if s := share(reordered); s < 0.02 {
		t.Errorf("%.3f of links spell their query out of order, want at least 0.02", s)
	}
	if s := share(short); s < 0.03 || s > 0.1 {
		t.Errorf("%.3f of links are short links, want 0.03 to 0.1", s)
	}
	if minSize < 20<<10 || maxSize > 60<<10 {
		t.Errorf("pages of %d to %d bytes, want 20 to 60 KiB", minSize, maxSize)
	}
}

// TestSeedsServed checks what the servers of a WorldSeeds web answer
// against its ground truth: bodies, short-link redirects, 404s; and that
// the same seed gives the same web.
func TestSeedsServed(t *testing.T) {
	cfg := Config{Seed: 9, Hosts: 3, PagesPerHost: 100, World: WorldSeeds}
	w := startWeb(t, cfg)
	c := newClient(t, w)
	all := w.AllPages()
	var redirects, articles int
	for i, pi := range all {
		if i%7 != 0 && pi.Role != "home" {
			continue
		}
		checkServed(t, w, c, pi)
		switch pi.Role {
		case "redirect":
			redirects++
		case "article":
			articles++
		}
	}
	if redirects == 0 || articles == 0 {
		t.Fatalf("checked %d redirects and %d articles, want some of each", redirects, articles)
	}
	checkOddRequest(t, w, c, "/story?id=", func(q url.Values) string {
		return "section=" + q.Get("section") + "&utm_source=x&lang=en&fbclid=y&id=" + q.Get("id")
	})
	for _, bad := range []string{"/s/zzzzzzz", "/s/0", "/world/2020/01/no-such-story-99999.html", "/story?id=3&lang=fr&section=world", "/nowhere"} {
		if r := get(t, c, w.Seeds()[0]+bad[1:]); r.status != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", bad, r.status)
		}
	}
	// The same seed, another start: the same pages (ports aside).
	checkSameSeed(t, w, cfg, 11)
}

// TestSeedsRobotsAndAudit checks that a WorldSeeds web keeps the robots
// kinds (its disallowed pages are linked from every page) and the request
// log the politeness audit reads.
func TestSeedsRobotsAndAudit(t *testing.T) {
	w := startWeb(t, Config{Seed: 5, Hosts: len(DefaultRobotsKinds()), PagesPerHost: 60, World: WorldSeeds, HangLimit: 50 * time.Millisecond})
	c := newClient(t, w)
	disallowed := 0
	for _, h := range w.Hosts() {
		base := "http://" + h.Authority
		for _, p := range []string{"/robots.txt", "/", "/private/account"} {
			resp, err := c.Get(base + p)
			if err != nil {
				continue // a robots.txt that hangs or loops
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		pi, ok := w.Page(base + "/private/account")
		if !ok {
			t.Fatalf("%s: no /private/account", h.Name)
		}
		if pi.Disallowed != !w.Allowed(pi.URL) {
			t.Errorf("%s: Disallowed %v, Allowed %v", pi.URL, pi.Disallowed, w.Allowed(pi.URL))
		}
		if pi.Disallowed {
			disallowed++
			home, _ := w.Page(base + "/")
			if !slices.Contains(home.Links, pi.URL) {
				t.Errorf("%s: disallowed, and not linked from the home page", pi.URL)
			}
		}
		if h.Robots == RobotsRules {
			if f := w.Body(base + "/robots.txt"); !bytes.Contains(f, []byte("Disallow: /private/")) {
				t.Errorf("%s: robots.txt %q", h.Name, f)
			}
		}
	}
	if disallowed == 0 {
		t.Error("no host disallows /private/account")
	}
	rep := Audit(w, 0)
	if rep.Requests < 2*len(w.Hosts()) || rep.Hosts != len(w.Hosts()) {
		t.Errorf("audit saw %d requests on %d hosts", rep.Requests, rep.Hosts)
	}
	if len(rep.Overlaps) != 0 || len(rep.RobotsNotFirst) != 0 {
		t.Errorf("a sequential client judged impolite: %v %v", rep.Overlaps, rep.RobotsNotFirst)
	}
}

// TestIPAuthorities checks that the hosts answer at their addresses, for
// a client that cannot be told where names resolve, and that the log
// summary counts pages by canonical URL.
func TestIPAuthorities(t *testing.T) {
	w := startWeb(t, Config{Seed: 5, Hosts: 2, PagesPerHost: 60, World: WorldSeeds, IPAuthorities: true})
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(c.CloseIdleConnections)
	hosts := w.Hosts()
	if w.Seeds()[0] != "http://"+hosts[0].Addr+"/" {
		t.Fatalf("seed %s, want the address %s", w.Seeds()[0], hosts[0].Addr)
	}
	home := w.Seeds()[0]
	story := w.seedsURL(0, seedsFirstStory+3)
	shortURL := w.seedsURL(0, w.seeds.pages[0]+3)
	for _, u := range []string{home + "robots.txt", home, home + "?utm_source=x", story, story + "?fbclid=abc#x", shortURL, home + "missing"} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if u == home && resp.StatusCode != 200 {
			t.Fatalf("%s: status %d", u, resp.StatusCode)
		}
	}
	want := LogSummary{Requests: 7, Robots: 1, Redirects: 1, Pages: 4, UniquePages: 2, Other: 1}
	if got := w.Summary(); got != want {
		t.Errorf("Summary %+v, want %+v", got, want)
	}
}

// TestWorldValidate checks the errors that name a bad World config.
func TestWorldValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{World: "moon"}, `World "moon"`},
		{Config{World: WorldSeeds, MinLinks: 20, MaxLinks: 30}, "MinLinks 20"},
		{Config{World: WorldHeavy, MinLinks: 12, MaxLinks: 30}, "MinLinks 12"},
	} {
		if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error naming %s", tc.cfg, err, tc.want)
		}
	}
}

// TestRawAmpersands checks that RawAmpersands changes how link queries
// are spelt and nothing else about the links.
func TestRawAmpersands(t *testing.T) {
	cfg := Config{Seed: 4, Hosts: 2, PagesPerHost: 80, World: WorldSeeds, IPPrefix: "127.0.7."}
	esc := startWeb(t, cfg)
	cfg.RawAmpersands, cfg.IPPrefix = true, "127.0.8."
	raw := startWeb(t, cfg)
	hrefs := func(w *Web, u string) []string {
		var out []string
		for _, m := range anchorHref.FindAllSubmatch(w.Body(u), -1) {
			out = append(out, string(m[1]))
		}
		return out
	}
	amps := 0
	rawURLs := raw.AllPages()
	for i, pi := range esc.AllPages() {
		if pi.Role == "redirect" {
			continue
		}
		e, r := hrefs(esc, pi.URL), hrefs(raw, rawURLs[i].URL)
		if len(e) != len(r) {
			t.Fatalf("%s: %d links escaped, %d raw", pi.URL, len(e), len(r))
		}
		for j := range e {
			for _, h := range esc.Hosts() {
				e[j] = strings.ReplaceAll(strings.ReplaceAll(e[j], h.Authority, h.Name), strings.ToUpper(h.Authority), h.Name)
			}
			for _, h := range raw.Hosts() {
				r[j] = strings.ReplaceAll(strings.ReplaceAll(r[j], h.Authority, h.Name), strings.ToUpper(h.Authority), h.Name)
			}
			amps += strings.Count(e[j], "&amp;")
			if strings.Contains(r[j], "&amp;") || strings.ReplaceAll(e[j], "&amp;", "&") != r[j] {
				t.Fatalf("%s: link %q escaped, %q raw", pi.URL, e[j], r[j])
			}
		}
	}
	if amps == 0 {
		t.Fatal("no link query with two parameters")
	}
}

// TestSeedsCrossHost checks that stories link other hosts' home pages
// unless CrossHostFraction is negative.
func TestSeedsCrossHost(t *testing.T) {
	for _, frac := range []float64{0, -1} {
		w := startWeb(t, Config{Seed: 6, Hosts: 3, PagesPerHost: 100, World: WorldSeeds, CrossHostFraction: frac})
		cross := 0
		for _, pi := range w.AllPages() {
			host := strings.SplitN(pi.URL, "/", 4)[2]
			for _, l := range pi.Links {
				if strings.SplitN(l, "/", 4)[2] != host {
					cross++
					if !strings.HasSuffix(l, "/") || strings.Count(l, "/") != 3 {
						t.Errorf("%s links %s on another host: not its home page", pi.URL, l)
					}
				}
			}
		}
		if (cross > 0) != (frac >= 0) {
			t.Errorf("CrossHostFraction %v: %d cross-host links", frac, cross)
		}
	}
}
