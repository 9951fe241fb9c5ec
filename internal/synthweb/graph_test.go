package synthweb

import (
	"bytes"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// canonicalize is the test's own canonicaliser, written from the spec
// with net/url only, independent of the package's code: resolve, lowercase
// scheme and host, drop the fragment, drop ";jsessionid=..." from the path,
// drop tracking and session parameters, sort the rest by key then value.
func canonicalize(base *url.URL, ref string) (string, bool) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", false
	}
	u = base.ResolveReference(u)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", false
	}
	path := jsessionRE.ReplaceAllString(u.EscapedPath(), "")
	if path == "" {
		path = "/"
	}
	type kv struct{ k, v string }
	var params []kv
	for _, p := range strings.Split(u.RawQuery, "&") {
		if p == "" {
			continue
		}
		k, v, _ := strings.Cut(p, "=")
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "utm_") || slices.Contains([]string{"gclid", "fbclid", "phpsessid", "jsessionid", "sid"}, lk) {
			continue
		}
		params = append(params, kv{k, v})
	}
	sort.Slice(params, func(i, j int) bool {
		if params[i].k != params[j].k {
			return params[i].k < params[j].k
		}
		return params[i].v < params[j].v
	})
	s := strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + path
	for i, p := range params {
		if i == 0 {
			s += "?"
		} else {
			s += "&"
		}
		s += p.k + "=" + p.v
	}
	return s, true
}

var jsessionRE = regexp.MustCompile(`(?i);jsessionid=[^/]*`)

// extracted is one link element found in a page.
type extracted struct {
	tag, href string
	nofollow  bool
}

// extract parses a page like a browser would: the first <base href> sets
// the base URL; links come from a, area, iframe and link rel=next.
func extract(t *testing.T, doc *url.URL, body []byte) (base *url.URL, links []extracted, metaNoFollow bool) {
	t.Helper()
	base = doc
	z := html.NewTokenizer(bytes.NewReader(body))
	sawBase := false
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return base, links, metaNoFollow
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		attr := map[string]string{}
		for _, a := range tok.Attr {
			attr[a.Key] = a.Val
		}
		rel := strings.Fields(strings.ToLower(attr["rel"]))
		nofollow := slices.Contains(rel, "nofollow")
		switch tok.Data {
		case "base":
			if !sawBase {
				sawBase = true
				u, err := url.Parse(attr["href"])
				if err != nil {
					t.Fatalf("%s: bad base %q", doc, attr["href"])
				}
				base = doc.ResolveReference(u)
			}
		case "meta":
			if strings.EqualFold(attr["name"], "robots") && strings.Contains(strings.ToLower(attr["content"]), "nofollow") {
				metaNoFollow = true
			}
		case "a", "area":
			links = append(links, extracted{tok.Data, attr["href"], nofollow})
		case "iframe":
			links = append(links, extracted{tok.Data, attr["src"], nofollow})
		case "link":
			if slices.Contains(rel, "next") {
				links = append(links, extracted{tok.Data, attr["href"], nofollow})
			}
		}
	}
}

func TestCanonicalizeTable(t *testing.T) {
	base, _ := url.Parse("http://h001.weft.test:4000/a/b/page-3.html")
	tests := []struct{ ref, want string }{
		{"HTTP://H003.WEFT.TEST:4000/p/3", "http://h003.weft.test:4000/p/3"},
		{"//h003.weft.test:4000/p/3#x", "http://h003.weft.test:4000/p/3"},
		{"http://h003.weft.test:4000", "http://h003.weft.test:4000/"},
		{"../../p/3;jsessionid=ABC?utm_source=x&utm_medium=y", "http://h001.weft.test:4000/p/3"},
		{"/list?page=2&cat=4&gclid=zz", "http://h001.weft.test:4000/list?cat=4&page=2"},
		{"?sid=1&page=2&PHPSESSID=abc&cat=4", "http://h001.weft.test:4000/a/b/page-3.html?cat=4&page=2"},
		{"./", "http://h001.weft.test:4000/a/b/"},
		{"#top", "http://h001.weft.test:4000/a/b/page-3.html"},
	}
	for _, tc := range tests {
		got, ok := canonicalize(base, tc.ref)
		if !ok || got != tc.want {
			t.Errorf("canonicalize(%q) = %q, %v; want %q", tc.ref, got, ok, tc.want)
		}
	}
	if _, ok := canonicalize(base, "mailto:x@y"); ok {
		t.Error("mailto canonicalised")
	}
}

// TestLinks checks every link of every HTML page: it canonicalises to a URL
// of AllPages (or is mailto:/javascript:), the followable and nofollow sets
// match PageInfo, counts and sizes are within bounds, and every
// equivalent-form trick appears somewhere.
func TestLinks(t *testing.T) {
	t.Parallel()
	cfg := smallConfig()
	cfg.MinPageBytes, cfg.MaxPageBytes = 10<<10, 20<<10 // parsing is the cost of this test
	w := startWeb(t, cfg)
	cfg = cfg.withDefaults()
	pages := w.AllPages()
	known := map[string]PageInfo{}
	for _, p := range pages {
		known[p.URL] = p
	}
	forms := map[string]int{}
	note := func(cond bool, name string) {
		if cond {
			forms[name]++
		}
	}
	for _, p := range pages {
		// Generated pages only: the boilerplate (plain "text/html") is one
		// small fixed document without links.
		if p.Status != http.StatusOK || p.ContentType != "text/html; charset=utf-8" {
			if len(p.Links)+len(p.NoFollowLinks) != 0 {
				t.Errorf("%s: non-page has links", p.URL)
			}
			continue
		}
		body := w.Body(p.URL)
		// Articles have their own sizes and navigation (TestArticles).
		article := p.Role == "article"
		if n := len(body); !article && (n < cfg.MinPageBytes || n > cfg.MaxPageBytes) {
			t.Errorf("%s: %d bytes, want [%d, %d]", p.URL, n, cfg.MinPageBytes, cfg.MaxPageBytes)
		}
		doc, _ := url.Parse(p.URL)
		base, links, meta := extract(t, doc, body)
		if meta != p.NoFollowMeta {
			t.Errorf("%s: meta nofollow %v, PageInfo says %v", p.URL, meta, p.NoFollowMeta)
		}
		if n := len(links); !article && (n < cfg.MinLinks || n > cfg.MaxLinks) {
			t.Errorf("%s: %d links, want [%d, %d]", p.URL, n, cfg.MinLinks, cfg.MaxLinks)
		}
		note(base != doc, "base")
		var follow, nofollow []string
		for _, l := range links {
			if strings.HasPrefix(l.href, "mailto:") || strings.HasPrefix(l.href, "javascript:") {
				note(true, l.href[:strings.IndexByte(l.href, ':')])
				continue
			}
			c, ok := canonicalize(base, l.href)
			if !ok {
				t.Errorf("%s: link %q does not canonicalise", p.URL, l.href)
				continue
			}
			if _, ok := known[c]; !ok {
				t.Errorf("%s: link %q -> %s not in AllPages", p.URL, l.href, c)
			}
			// The server's own canonicaliser (used to answer requests)
			// must agree with the spec's.
			ref, _ := url.Parse(l.href)
			abs := base.ResolveReference(ref)
			if got := "http://" + strings.ToLower(abs.Host) + canonicalPath(abs.EscapedPath(), abs.RawQuery); got != c {
				t.Errorf("%s: server canonical %s, test canonical %s", l.href, got, c)
			}
			if base != doc {
				if wrong, ok := canonicalize(doc, l.href); ok && wrong != c {
					forms["base-matters"]++
					if _, ok := known[wrong]; !ok {
						forms["base-ignored-goes-nowhere"]++
					}
				}
			}
			if l.nofollow {
				nofollow = append(nofollow, c)
			} else {
				follow = append(follow, c)
			}
			h := l.href
			note(strings.HasPrefix(h, "HTTP://"), "upper-host")
			note(strings.HasPrefix(h, "//"), "protocol-relative")
			note(strings.HasPrefix(h, "/") && !strings.HasPrefix(h, "//"), "host-relative")
			note(strings.HasPrefix(h, "../"), "dot-dot")
			note(!strings.Contains(h, ":") && !strings.HasPrefix(h, "/") && !strings.HasPrefix(h, "?") && !strings.HasPrefix(h, "#"), "path-relative")
			note(strings.HasPrefix(h, "?"), "query-only")
			note(strings.HasPrefix(h, "#"), "fragment-only")
			note(strings.Contains(h, "#") && !strings.HasPrefix(h, "#"), "fragment")
			note(strings.Contains(h, "utm_"), "utm")
			note(strings.Contains(h, "gclid="), "gclid")
			note(strings.Contains(h, "fbclid="), "fbclid")
			note(strings.Contains(h, ";jsessionid="), "jsessionid")
			note(strings.Contains(h, "PHPSESSID="), "phpsessid")
			note(strings.Contains(h, "sid=") && !strings.Contains(h, "SESSID"), "sid")
			note(ref.Host != "" && ref.Path == "", "empty-path")
			note(strings.Contains(h, "page=") && strings.Index(h, "page=") < strings.Index(h, "cat="), "reordered")
			note(!strings.HasPrefix(c, "http://"+doc.Host+"/"), "cross-host")
			note(strings.HasSuffix(c, ".jpg") || strings.HasSuffix(c, ".pdf"), "denied-extension")
			note(l.tag != "a", l.tag)
			note(l.nofollow, "rel-nofollow")
		}
		slices.Sort(follow)
		slices.Sort(nofollow)
		if got := slices.Compact(follow); !slices.Equal(got, p.Links) {
			t.Errorf("%s: followable links\n got  %v\n want %v", p.URL, got, p.Links)
		}
		if got := slices.Compact(nofollow); !slices.Equal(got, p.NoFollowLinks) {
			t.Errorf("%s: nofollow links\n got  %v\n want %v", p.URL, got, p.NoFollowLinks)
		}
	}
	for _, f := range []string{
		"base", "base-matters", "base-ignored-goes-nowhere", "mailto", "javascript",
		"upper-host", "protocol-relative", "host-relative", "dot-dot", "path-relative",
		"query-only", "fragment-only", "fragment", "utm", "gclid", "fbclid", "jsessionid",
		"phpsessid", "sid", "empty-path", "reordered", "cross-host", "denied-extension",
		"area", "iframe", "link", "rel-nofollow",
	} {
		if forms[f] == 0 {
			t.Errorf("no link of form %q in the web", f)
		}
	}
	t.Logf("link forms: %v", forms)
}

// TestReachability checks the graph: every URL of a host can be reached
// from its home page through some link or redirect, Reachable is exactly
// what a compliant crawl discovers, and the nofollow-only pages are not.
func TestReachability(t *testing.T) {
	t.Parallel()
	w := startWeb(t, smallConfig())
	pages := w.AllPages()
	info := map[string]PageInfo{}
	for _, p := range pages {
		info[p.URL] = p
	}
	edges := func(p PageInfo, compliant bool) []string {
		if p.RedirectTo != "" {
			return []string{p.RedirectTo}
		}
		if !compliant {
			return append(slices.Clone(p.Links), p.NoFollowLinks...)
		}
		if p.NoFollowMeta || p.NoFollowHeader {
			return nil
		}
		return p.Links
	}
	bfs := func(seeds []string, compliant bool) map[string]bool {
		seen := map[string]bool{}
		queue := slices.Clone(seeds)
		for _, s := range seeds {
			seen[s] = true
		}
		for len(queue) > 0 {
			p := info[queue[0]]
			queue = queue[1:]
			if compliant && p.Disallowed {
				continue
			}
			for _, e := range edges(p, compliant) {
				if !seen[e] {
					seen[e] = true
					queue = append(queue, e)
				}
			}
		}
		return seen
	}
	for _, seed := range w.Seeds() {
		seen := bfs([]string{seed}, false)
		host := strings.TrimSuffix(seed, "/")
		for _, p := range pages {
			if strings.HasPrefix(p.URL, host+"/") && !seen[p.URL] {
				t.Errorf("%s: not reachable from %s", p.URL, seed)
			}
		}
	}
	seen := bfs(w.Seeds(), true)
	roles := map[string]int{}
	for _, p := range pages {
		roles[p.Role]++
		if seen[p.URL] != p.Reachable {
			t.Errorf("%s: Reachable %v, compliant search says %v", p.URL, p.Reachable, seen[p.URL])
		}
		if strings.HasPrefix(p.Role, "only-") && p.Reachable {
			t.Errorf("%s (%s) is reachable", p.URL, p.Role)
		}
	}
	// On hosts whose robots.txt can be read, every allowed page must be
	// fetchable: the spanning tree hangs allowed pages below allowed ones.
	for _, h := range w.Hosts() {
		if h.Robots == RobotsServerError || h.Robots == RobotsTimeout || h.Hostile != "" {
			continue
		}
		for _, p := range pages {
			if strings.HasPrefix(p.URL, "http://"+h.Authority+"/") && (p.Role == "page" || p.Role == "home") && !p.Disallowed && !p.Reachable {
				t.Errorf("%s: allowed page of %s (%v) not reachable", p.URL, h.Name, h.Robots)
			}
		}
	}
	for _, r := range []string{"home", "page", "nofollow-meta", "nofollow-header", "only-rel-nofollow",
		"only-meta-nofollow", "only-header-nofollow", "redirect", "not-found", "gone", "server-error", "image", "pdf"} {
		if roles[r] < len(w.Seeds()) {
			t.Errorf("role %s: %d URLs, want at least one per host", r, roles[r])
		}
	}
	// Every host has a two-hop redirect chain, and host 0 a 302 to another host.
	var chains, cross int
	for _, p := range pages {
		if p.RedirectTo != "" && info[p.RedirectTo].RedirectTo != "" {
			chains++
		}
		if p.Status == http.StatusFound && !strings.HasPrefix(p.RedirectTo, strings.TrimSuffix(p.URL, "/r/1")) {
			cross++
		}
	}
	if chains < len(w.Seeds()) || cross != len(w.Seeds()) {
		t.Errorf("%d redirect chains, %d cross-host 302s; want one of each per host", chains, cross)
	}
}

// TestServedMatchesBody fetches every URL of two hosts and compares status,
// headers and body with the ground truth.
func TestServedMatchesBody(t *testing.T) {
	w := startWeb(t, smallConfig())
	c := newClient(t, w)
	for _, p := range w.AllPages() {
		if !strings.Contains(p.URL, "//h000.") && !strings.Contains(p.URL, "//h001.") {
			continue
		}
		r := get(t, c, p.URL)
		if r.status != p.Status {
			t.Errorf("%s: status %d, want %d", p.URL, r.status, p.Status)
		}
		if got := r.header.Get("Content-Type"); got != p.ContentType {
			t.Errorf("%s: Content-Type %q, want %q", p.URL, got, p.ContentType)
		}
		if !bytes.Equal(r.body, w.Body(p.URL)) {
			t.Errorf("%s: served body differs from Body()", p.URL)
		}
		if p.Status == http.StatusOK && r.header.Get("Content-Length") == "" {
			t.Errorf("%s: no Content-Length", p.URL)
		}
		if got := r.header.Get("X-Robots-Tag") == "nofollow"; got != p.NoFollowHeader {
			t.Errorf("%s: X-Robots-Tag nofollow %v, want %v", p.URL, got, p.NoFollowHeader)
		}
		if p.RedirectTo != "" {
			doc, _ := url.Parse(p.URL)
			if got, _ := canonicalize(doc, r.header.Get("Location")); got != p.RedirectTo {
				t.Errorf("%s: Location %q, want %s", p.URL, r.header.Get("Location"), p.RedirectTo)
			}
		}
	}
}

func TestNonCanonicalRequestsAndErrors(t *testing.T) {
	w := startWeb(t, smallConfig())
	c := newClient(t, w)
	seed := w.Seeds()[0]
	home := w.Body(seed)
	for _, u := range []string{seed + "?utm_source=x&gclid=1", seed + ";jsessionid=ABC", seed + "?PHPSESSID=1"} {
		if r := get(t, c, u); r.status != http.StatusOK || !bytes.Equal(r.body, home) {
			t.Errorf("%s: status %d, same body %v", u, r.status, bytes.Equal(r.body, home))
		}
	}
	if r := get(t, c, seed+"no/such/page"); r.status != http.StatusNotFound {
		t.Errorf("unknown page: status %d", r.status)
	}
	resp, err := c.Post(seed, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d", resp.StatusCode)
	}
	if _, ok := w.Page(seed + "no/such/page"); ok {
		t.Error("Page found an unknown URL")
	}
	if w.Body("http://example.com/") != nil {
		t.Error("Body of a foreign URL")
	}
}

// TestEdgeConfigs checks bounds and link targets on configurations at the
// edges of what Validate accepts.
func TestEdgeConfigs(t *testing.T) {
	need := func(c Config) int { return c.withDefaults().minPageBytes() }
	tight := Config{Hosts: 3, MinLinks: 10, MaxLinks: 10}
	tight.MinPageBytes = need(tight)
	tight.MaxPageBytes = tight.MinPageBytes
	wide := Config{Hosts: 3, MinLinks: 10, MaxLinks: 200}
	wide.MinPageBytes = need(wide)
	wide.MaxPageBytes = wide.MinPageBytes + 4000
	many := Config{Hosts: 2, PagesPerHost: 400, MinLinks: 10, MaxLinks: 12}
	many.MinPageBytes = need(many)
	many.MaxPageBytes = many.MinPageBytes + 1000
	tests := map[string]Config{
		"one host":        {Hosts: 1, PagesPerHost: 5},
		"no cross-host":   {Hosts: 3, CrossHostFraction: -1},
		"all cross-host":  {Hosts: 3, CrossHostFraction: 1},
		"tight pages":     tight,
		"wide link range": wide,
		"many pages":      many,
		"long domain":     {Hosts: 2, Domain: "a-rather-long-subdomain.of.an.example.synthetic.test", MinPageBytes: 20 << 10, MaxPageBytes: 24 << 10},
	}
	t.Parallel()
	for name, cfg := range tests {
		if cfg.MinPageBytes == 0 {
			cfg.MinPageBytes, cfg.MaxPageBytes = 10<<10, 20<<10
		}
		t.Run(name, func(t *testing.T) {
			w := startWeb(t, cfg)
			cfg := cfg.withDefaults()
			known := map[string]PageInfo{}
			for _, p := range w.AllPages() {
				known[p.URL] = p
			}
			var cross int
			for u, p := range known {
				if p.ContentType != "text/html; charset=utf-8" || p.Status != 200 || p.Role == "article" {
					continue
				}
				body := w.Body(u)
				if n := len(body); n < cfg.MinPageBytes || n > cfg.MaxPageBytes {
					t.Errorf("%s: %d bytes, want [%d, %d]", u, n, cfg.MinPageBytes, cfg.MaxPageBytes)
				}
				doc := mustParse(t, u)
				base, links, _ := extract(t, doc, body)
				if n := len(links); n < cfg.MinLinks || n > cfg.MaxLinks {
					t.Errorf("%s: %d links, want [%d, %d]", u, n, cfg.MinLinks, cfg.MaxLinks)
				}
				for _, l := range links {
					c, ok := canonicalize(base, l.href)
					if !ok {
						continue
					}
					if _, ok := known[c]; !ok {
						t.Errorf("%s: link %q -> %s not in AllPages", u, l.href, c)
					}
					if !strings.HasPrefix(c, "http://"+doc.Host+"/") {
						cross++
					}
				}
			}
			if cfg.CrossHostFraction < 0 || cfg.Hosts == 1 {
				if cross != 0 {
					t.Errorf("%d cross-host links", cross)
				}
			} else if cross == 0 {
				t.Error("no cross-host links")
			}
		})
	}
}
