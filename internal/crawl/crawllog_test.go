package crawl

import (
	"bufio"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/crawllog"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// readCrawlLog parses every line of the crawl log at path, failing the
// test on one that breaks the format's grammar.
func readCrawlLog(t *testing.T, path string) []crawllog.Line {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []crawllog.Line
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l, err := crawllog.Parse(sc.Text())
		if err != nil {
			t.Fatalf("crawl log line %d: %v\n%s", len(out)+1, err, sc.Text())
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A crawl with --crawl-log writes a line of Heritrix's crawl.log for each
// fetch: every line passes the parser written from Heritrix's
// documentation, and there is one for each request of fetches.jsonl.
// Robots.txt files (P, via the URL that needed them, R for each hop of a
// robots.txt redirect), requisites (E; /favicon.ico inferred, I),
// redirects (R, via the redirecting URL), links (L), 404s and failures
// (Heritrix's -2 for a refused connection, -3 for one dropped after the
// request, -6 for a name that does not resolve) all appear with the
// status and discovery path Heritrix would give them, each path is its
// via's path and one hop, and each answer's digest is its WARC record's.
func TestCrawlLogIsHeritrixs(t *testing.T) {
	web := startWeb(t, synthweb.Config{
		Seed: 7, Hosts: 2, PagesPerHost: 30, HangLimit: 200 * time.Millisecond,
		RobotsKinds:  []synthweb.RobotsKind{synthweb.RobotsRules, synthweb.RobotsRedirect},
		HostileKinds: []string{synthweb.HostileHang, synthweb.HostileRedirectChain},
	})
	cfg := testConfig(t, web, 4, 0)
	cfg.NoRequisites = false
	// Two hosts that cannot be reached: one whose name does not
	// resolve, one whose address refuses connections; and a seed that
	// robots.txt disallows.
	disallowed := web.Seeds()[0] + "private/x"
	cfg.Seeds = append(append(cfg.Seeds, web.HostileSeeds()...), "http://gone.weft.test/", "http://refused.weft.test/", disallowed)
	cfg.Fetch.Resolve = web.Resolve()
	cfg.Fetch.Resolve["refused.weft.test"] = "127.0.9.250"
	cfg.Fetch.Resolver = noDNS{}
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.RobotsAttempts = 1
	cfg.CrawlLog = filepath.Join(t.TempDir(), "crawl.log")
	runCrawl(t, cfg)

	lines := readCrawlLog(t, cfg.CrawlLog)
	requests := 0
	robotsFiles := map[string]bool{} // the URLs of robots.txt chains
	for _, r := range readFetchLog(t, cfg.DataDir) {
		if r.Outcome != fetchlog.OutcomeDeferred {
			requests++
		}
		if r.Robots != "" {
			robotsFiles[r.URL] = true
		}
	}
	precluded := 0 // by robots.txt, lines of Heritrix's with no request
	for _, l := range lines {
		if l.Status == crawllog.RobotsPrecluded || l.Status == crawllog.RobotsPrereqFailed {
			precluded++
		}
	}
	if len(lines) != requests+precluded || requests < 50 || precluded == 0 {
		t.Fatalf("%d crawl log lines for %d requests in fetches.jsonl and %d URLs robots.txt precluded", len(lines), requests, precluded)
	}
	byURL := map[string]crawllog.Line{}
	for _, l := range lines {
		if _, ok := byURL[l.URI]; !ok || l.Status > 0 {
			byURL[l.URI] = l
		}
	}
	// The digests the WARC records give each URL's payloads.
	digests := map[string]map[string]bool{}
	files, err := filepath.Glob(filepath.Join(cfg.warcDir(), "*.warc.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("WARC files %v, %v", files, err)
	}
	for _, f := range files {
		for _, rec := range readWARC(t, f) {
			if d := rec.header.Get("WARC-Payload-Digest"); d != "" {
				uri := rec.header.Get("WARC-Target-URI")
				if digests[uri] == nil {
					digests[uri] = map[string]bool{}
				}
				digests[uri][d] = true
			}
		}
	}
	seeds := map[string]bool{}
	for _, s := range cfg.Seeds {
		seeds[s] = true
	}
	var robots, robotsHops, requisites, favicons, redirected, links, notFound int
	for _, l := range lines {
		last := byte(0)
		if l.Path != "" {
			last = l.Path[len(l.Path)-1]
		}
		switch {
		case seeds[l.URI] && l.Path == "" && l.Via == "":
		case l.Path == "" || l.Via == "":
			t.Errorf("%s: path %q, via %q: only a seed has neither", l.URI, l.Path, l.Via)
			continue
		}
		if l.Status < 0 {
			if l.Size >= 0 || l.Digest != "" {
				t.Errorf("%s failed (%d) with a size or a digest: %+v", l.URI, l.Status, l)
			}
		} else if !digests[l.URI][l.Digest] || l.Start.IsZero() || l.Size < 0 {
			t.Errorf("%s answered %d with digest %q (the WARC has %v), fetch time %v, size %d", l.URI, l.Status, l.Digest, digests[l.URI], l.Start, l.Size)
		}
		if l.Worker < 0 || l.Worker >= cfg.Workers {
			t.Errorf("%s: worker %d of %d", l.URI, l.Worker, cfg.Workers)
		}
		if l.Via == "" {
			continue
		}
		via, ok := byURL[l.Via]
		switch {
		case !ok:
			t.Errorf("%s: via %s, which has no line", l.URI, l.Via)
			continue
		case via.Path+string(last) != l.Path:
			t.Errorf("%s: path %q, via %s of path %q: want the via's and one hop", l.URI, l.Path, l.Via, via.Path)
		}
		if robotsFiles[l.URI] != (last == 'P' || last == 'R' && robotsFiles[l.Via]) {
			t.Errorf("%s: path %q, via %s: a robots.txt is a prerequisite (P), or a redirect of one", l.URI, l.Path, l.Via)
		}
		switch last {
		case 'P':
			robots++
		case 'R':
			if robotsFiles[l.URI] {
				robotsHops++
			} else {
				redirected++
			}
			if via.Status < 300 || via.Status > 399 {
				t.Errorf("%s: path %q via %s, which answered %d, no redirect", l.URI, l.Path, l.Via, via.Status)
			}
		case 'E':
			requisites++
		case 'I':
			if strings.HasSuffix(l.URI, "/favicon.ico") {
				favicons++
			}
		case 'L':
			links++
			if l.Status == 404 {
				notFound++
			}
		}
	}
	if robots < 3 || robotsHops == 0 || requisites == 0 || favicons == 0 || redirected == 0 || links < 20 || notFound == 0 {
		t.Errorf("%d robots.txt lines (%d after a redirect), %d requisites, %d favicons, %d redirected, %d links, %d of them 404: want each",
			robots, robotsHops, requisites, favicons, redirected, links, notFound)
	}
	for url, status := range map[string]int{
		"http://gone.weft.test/robots.txt":    crawllog.DomainPrereqFailed,
		"http://refused.weft.test/robots.txt": crawllog.ConnectFailed,
		web.HostileSeeds()[0]:                 crawllog.ConnectLost, // the hang host drops "/" after the request
		// Seeds whose robots.txt could not be had, dropped unrequested.
		"http://gone.weft.test/":    crawllog.RobotsPrereqFailed,
		"http://refused.weft.test/": crawllog.RobotsPrereqFailed,
		disallowed:                  crawllog.RobotsPrecluded,
	} {
		if l, ok := byURL[url]; !ok || l.Status != status {
			t.Errorf("%s: status %d (%v), want %d", url, l.Status, ok, status)
		}
	}

}
