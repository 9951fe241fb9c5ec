package crawl

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// TestCrawlWebThatAnswersOnlyEncoded crawls a web whose every body,
// robots.txt included, comes in brotli or zstd whatever is asked. Every
// page a compliant crawl fetches is fetched once, and nothing else: the
// links are found in the decoded pages and the rules in the decoded
// robots.txt. Each response record holds the body as it came, with its
// Content-Encoding, and that body decodes to the page.
func TestCrawlWebThatAnswersOnlyEncoded(t *testing.T) {
	for _, coding := range []string{"br", "zstd"} {
		t.Run(coding, func(t *testing.T) {
			web := startWeb(t, synthweb.Config{Seed: 7, Hosts: 3, PagesPerHost: 12, MinLinks: 10, MaxLinks: 20,
				RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsRules, synthweb.RobotsAgentGroup}, Encoding: coding})
			cfg := testConfig(t, web, 4, 0)
			sum := runCrawl(t, cfg)
			if sum.BadEncoding != 0 || sum.OverDecodeCap != 0 {
				t.Errorf("%d bodies with a bad coding, %d over the cap", sum.BadEncoding, sum.OverDecodeCap)
			}
			fetched := pageRequests(web)
			var withBody []string
			for _, p := range web.AllPages() {
				switch n := fetched[p.URL]; {
				case shouldFetch(p):
					if len(web.Body(p.URL)) > 0 {
						withBody = append(withBody, p.URL)
					}
					if n != 1 {
						t.Errorf("%s (%s) fetched %d times, want once", p.URL, p.Role, n)
					}
				case n != 0:
					t.Errorf("%s (%s, disallowed %v) fetched %d times, want never", p.URL, p.Role, p.Disallowed, n)
				}
			}
			if len(withBody) < 10 {
				t.Fatalf("%d pages with a body to fetch: the test needs more", len(withBody))
			}

			f, err := fetch.New(fetch.Config{UserAgent: "weft/test"})
			if err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(cfg.DataDir, "warc", "*.warc.gz"))
			archived := map[string]bool{}
			for _, file := range files {
				for _, r := range readWARC(t, file) {
					u := r.header.Get("WARC-Target-URI")
					if r.header.Get("WARC-Type") == "revisit" {
						archived[u] = true // an identical payload, checked where first archived
					}
					if r.header.Get("WARC-Type") != "response" || len(web.Body(u)) == 0 {
						continue
					}
					archived[u] = true
					head, payload, ok := bytes.Cut(r.block, []byte("\r\n\r\n"))
					if !ok || !strings.Contains(string(head), "\r\nContent-Encoding: "+coding+"\r\n") {
						t.Errorf("%s: the record's header has no Content-Encoding %s:\n%s", u, coding, head)
						continue
					}
					got, err := f.Decode(http.Header{"Content-Encoding": {coding}}, payload)
					if err != nil || !bytes.Equal(got, web.Body(u)) || bytes.Equal(payload, web.Body(u)) {
						t.Errorf("%s: the archived body (%d bytes) decodes to %d bytes (%v), not the page's %d", u, len(payload), len(got), err, len(web.Body(u)))
					}
				}
			}
			for _, u := range withBody {
				if !archived[u] {
					t.Errorf("%s: no response or revisit record", u)
				}
			}
		})
	}
}

// TestBombsInEveryCodingCutAtTheCap crawls the gzip, brotli and zstd
// bomb hosts with a body cap: each is archived as it came (its wire body
// is within the cap, but for gzip's, which is cut there) and counted over
// the decoded-size cap, and the crawl goes on to its other host.
func TestBombsInEveryCodingCutAtTheCap(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 7, Hosts: 1, PagesPerHost: 12, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound},
		HostileKinds: []string{synthweb.HostileGzipBomb, synthweb.BombBrotli, synthweb.BombZstd}})
	cfg := testConfig(t, web, 4, 0)
	cfg.Seeds = append(web.Seeds(), web.HostileSeeds()...)
	const capBytes = 600 << 10
	cfg.Fetch.MaxBodyBytes = capBytes
	sum := runCrawl(t, cfg)
	if sum.OverDecodeCap != 3 {
		t.Errorf("%d bodies over the decoded-size cap, want the three bombs", sum.OverDecodeCap)
	}
	byHost := map[string]fetchlog.Record{}
	for _, r := range readFetchLog(t, cfg.DataDir) {
		if !strings.HasSuffix(r.URL, "/robots.txt") {
			byHost[strings.SplitN(r.Host, ".", 2)[0]] = r
		}
	}
	for kind, truncated := range map[string]string{synthweb.HostileGzipBomb: "length", synthweb.BombBrotli: "", synthweb.BombZstd: ""} {
		r, ok := byHost[kind]
		if !ok || r.Truncated != truncated || r.Bytes > capBytes || r.Status != 200 {
			t.Errorf("%s: fetched %v, %d, truncated %q after %d bytes; want 200, truncated %q within the %d-byte cap", kind, ok, r.Status, r.Truncated, r.Bytes, truncated, capBytes)
		}
	}
	if sum.Pages < 12 {
		t.Errorf("%d pages fetched: the bombs stopped the crawl of the other host", sum.Pages)
	}
}
