package crawl

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/testwait"
)

// requisiteSite is a small site on loopback whose pages need style
// sheets, fonts, scripts and images, one of them on a CDN host out of
// the crawl's scope; it logs every request with when its handler started
// and ended, per host.
type requisiteSite struct {
	mu  sync.Mutex
	log []siteRequest
}

type siteRequest struct {
	host, path string
	start, end time.Time
}

func (s *requisiteSite) handler(host string, files map[string][2]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		defer func() {
			s.mu.Lock()
			s.log = append(s.log, siteRequest{host, r.URL.Path, start, time.Now()})
			s.mu.Unlock()
		}()
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f[0])
		fmt.Fprint(w, f[1])
	})
}

func (s *requisiteSite) count(host, path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.log {
		if r.host == host && r.path == path {
			n++
		}
	}
	return n
}

// startRequisiteSite serves the requisite site: www.req.test, whose pages
// need style sheets (and fonts and images they name), scripts, images, a
// preload and the favicon, and cdn.other.test, out of a host scope, with a
// style sheet, the font the in-scope sheet names and an image its own
// sheet names. It returns the two authorities and the main host's files.
func startRequisiteSite(t *testing.T, site *requisiteSite) (mainHost, cdnHost string, mainFiles map[string][2]string) {
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return ln
	}
	mainLn, cdnLn := listen(), listen()
	mainHost, cdnHost = "www.req.test:"+port(mainLn), "cdn.other.test:"+port(cdnLn)
	page := func(title, more string) string {
		return `<!doctype html><html><head><title>` + title + `</title>
<link rel="stylesheet" href="/s/site.css"><link rel="stylesheet" href="http://` + cdnHost + `/lib.css">
<link rel="preload" href="/data/items.json" as="fetch"><link rel="preload" href="/part.html" as="document">
<script src="/js/app.js"></script></head>
<body><img src="/img/a.jpg" srcset="/img/a-2x.jpg 2x"><img src="/private/secret.png">` + more + `</body></html>`
	}
	mainFiles = map[string][2]string{
		"/robots.txt":      {"text/plain", "User-agent: *\nDisallow: /private/\n"},
		"/":                {"text/html", page("home", `<a href="/two">two</a>`)},
		"/two":             {"text/html", page("two", "")},
		"/s/site.css":      {"text/css", `@import "/s/base.css"; @font-face{src:url(/f/font.woff2)} @font-face{font-family:c;src:url(http://` + cdnHost + `/cdn-font.woff2)} body{background:url("/img/bg.png")}`},
		"/s/base.css":      {"text/css", `h1{color:red}`},
		"/f/font.woff2":    {"font/woff2", "wOF2"},
		"/img/bg.png":      {"image/png", "png"},
		"/img/a.jpg":       {"image/jpeg", "jpg"},
		"/img/a-2x.jpg":    {"image/jpeg", "jpg2"},
		"/js/app.js":       {"text/javascript", `fetch("/data/items.json")`},
		"/data/items.json": {"application/json", `[1,2,3]`},
		"/favicon.ico":     {"image/x-icon", "ico"},
		// A requisite that is a page: fetched, its links not followed.
		"/part.html": {"text/html", `<p><a href="/never">a link of a requisite</a></p>`},
	}
	cdnFiles := map[string][2]string{
		"/robots.txt": {"text/plain", "User-agent: *\nAllow: /\n"},
		"/lib.css":    {"text/css", `.x{background:url(/lib-img.png)}`},
		// A font the in-scope style sheet names: one hop out of scope.
		"/cdn-font.woff2": {"font/woff2", "wOF2"},
	}
	for ln, h := range map[net.Listener]http.Handler{mainLn: site.handler(mainHost, mainFiles), cdnLn: site.handler(cdnHost, cdnFiles)} {
		srv := &http.Server{Handler: h}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	return mainHost, cdnHost, mainFiles
}

// requisiteConfig is the crawl of the requisite site from its home page.
func requisiteConfig(t *testing.T, mainHost string, delay time.Duration) Config {
	cfg := Config{
		Seeds: []string{"http://" + mainHost + "/"}, DataDir: t.TempDir(), Workers: 4, Delay: delay,
		UserAgent: "weft/test (+https://example.org/weft-crawler)", NoSitemaps: true, NearDupThreshold: -1,
		Render: RenderConfig{Mode: RenderNever},
	}
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Fetch.Resolve = map[string]string{"www.req.test": "127.0.0.1", "cdn.other.test": "127.0.0.1"}
	return cfg
}

// TestRequisitesFetched: with Requisites, each page's style sheets (and
// the fonts and images their url()s name), scripts, srcset images, a
// preloaded JSON file and the favicon are fetched once, a CDN's style
// sheet one hop out of scope included; robots.txt still holds for them;
// links are followed as before; the server's log shows one request at a
// time per host, with the delay between.
func TestRequisitesFetched(t *testing.T) {
	site := &requisiteSite{}
	mainHost, cdnHost, mainFiles := startRequisiteSite(t, site)
	const delay = 20 * time.Millisecond
	cfg := requisiteConfig(t, mainHost, delay)
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for path := range mainFiles {
		if want := 1; site.count(mainHost, path) != want {
			t.Errorf("%s%s requested %d times, want once", mainHost, path, site.count(mainHost, path))
		}
	}
	if n := site.count(mainHost, "/private/secret.png"); n != 0 {
		t.Errorf("a requisite robots.txt disallows was requested %d times", n)
	}
	if n := site.count(mainHost, "/never"); n != 0 {
		t.Errorf("a link of a requisite was followed (%d requests)", n)
	}
	if n := site.count(cdnHost, "/lib.css"); n != 1 {
		t.Errorf("the CDN's style sheet, one hop out of scope, requested %d times, want once", n)
	}
	if n := site.count(cdnHost, "/cdn-font.woff2"); n != 1 {
		t.Errorf("the CDN's font, named by an in-scope style sheet (one hop out of scope), requested %d times, want once", n)
	}
	if n := site.count(cdnHost, "/lib-img.png"); n != 0 {
		t.Errorf("the CDN style sheet's image, two hops out of scope, requested %d times", n)
	}
	// Queued: the home page's eight (two style sheets, the JSON, the
	// preloaded part, the script, two images, the favicon; not the
	// disallowed one), and the style sheet's four (its @import, its two
	// fonts, the CDN's included, and its image); not the CDN sheet's image.
	if sum.Requisites == 0 || sum.RequisitesQueued != 12 || sum.RequisitesArchived != 12 || sum.Rejected[judge.RequisiteLinks] != 1 || sum.Archived["text/css"] != 3 {
		t.Errorf("summary: %d requisites found, %d queued, %d archived; archived %v; rejected %v", sum.Requisites, sum.RequisitesQueued, sum.RequisitesArchived, sum.Archived, sum.Rejected)
	}
	// One request at a time per host, and the delay between them.
	site.mu.Lock()
	defer site.mu.Unlock()
	last := map[string]siteRequest{}
	for _, r := range site.log { // in order of their ends
		if p, ok := last[r.host]; ok {
			if r.start.Before(p.end) {
				t.Errorf("%s: %s started before %s ended", r.host, r.path, p.path)
			} else if gap := r.start.Sub(p.end); gap < delay {
				t.Errorf("%s: %s %v after %s ended, delay %v", r.host, r.path, gap, p.path, delay)
			}
		}
		last[r.host] = r
	}
}

func port(ln net.Listener) string {
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

// TestRequisiteOfferedAcrossNodes: in a cluster, a requisite on a host
// another node owns is handed over as a requisite. The node that owns
// the CDN (whose scope is the same seeds' hosts, so the CDN is out of it)
// fetches the style sheet and the font that the page and its in-scope
// sheet name, one hop out of scope, and not the image the CDN's sheet
// names; every file once, from its owner only.
func TestRequisiteOfferedAcrossNodes(t *testing.T) {
	site := &requisiteSite{}
	mainHost, cdnHost, mainFiles := startRequisiteSite(t, site)
	owner := func(host string) int {
		if host == cdnHost {
			return 1
		}
		return 0
	}
	rl := &relay{owner: owner, queue: make(chan []Offered, 64), done: make(chan struct{})}
	var nodes []*Crawler
	for n := range 2 {
		cfg := requisiteConfig(t, mainHost, 5*time.Millisecond)
		cfg.KeepAlive = true
		nodes = append(nodes, newNode(t, cfg, &testCluster{owns: func(host string) bool { return owner(host) == n }, forward: rl.forward}))
	}
	rl.nodes = nodes
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go rl.run(ctx, func(raw string) (string, error) {
		u, err := nodes[0].canon.Parse(raw)
		return u.Authority, err
	})
	var wg sync.WaitGroup
	for _, c := range nodes {
		wg.Go(func() {
			if _, err := c.Run(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	testwait.EventuallyNil(t, time.Minute, "the pages and their requisites fetched, and both nodes idle", func() error {
		for path := range mainFiles {
			if site.count(mainHost, path) == 0 {
				return fmt.Errorf("%s%s not fetched yet", mainHost, path)
			}
		}
		for _, path := range []string{"/lib.css", "/cdn-font.woff2"} {
			if site.count(cdnHost, path) == 0 {
				return fmt.Errorf("%s%s not fetched yet", cdnHost, path)
			}
		}
		return rl.idle()
	})
	cancel()
	wg.Wait()
	<-rl.done
	for path := range mainFiles {
		if n := site.count(mainHost, path); n != 1 {
			t.Errorf("%s%s requested %d times, want once", mainHost, path, n)
		}
	}
	for path, want := range map[string]int{"/lib.css": 1, "/cdn-font.woff2": 1, "/lib-img.png": 0} {
		if n := site.count(cdnHost, path); n != want {
			t.Errorf("%s%s requested %d times, want %d", cdnHost, path, n, want)
		}
	}
}
