package crawl

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	ia "github.com/internetarchive/gowarc"

	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/simhash"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/warc"
)

// bigCrawl is one crawl of a 100-host web with 64 workers, shared by the
// acceptance subtests: they all judge the same crawl from different sides.
type bigCrawl struct {
	web *synthweb.Web
	cfg Config
	sum Summary
}

const (
	bigDelay      = 40 * time.Millisecond
	bigCrawlDelay = 120 * time.Millisecond
)

func runBigCrawl(t *testing.T) *bigCrawl {
	t.Helper()
	web := startWeb(t, synthweb.Config{
		Seed: 42, Hosts: 100, PagesPerHost: 12,
		MinPageBytes: 12 << 10, MaxPageBytes: 24 << 10, MinLinks: 20, MaxLinks: 40,
		MaxLatency: 3 * time.Millisecond, CrawlDelay: bigCrawlDelay, HangLimit: 10 * time.Second,
	})
	cfg := testConfig(t, web, 64, bigDelay)
	cfg.NoSitemaps = false // each host's /sitemap.xml lists pages its links reach anyway
	sum := runCrawl(t, cfg)
	// The crawler may read a response's last byte a moment before the
	// server's handler returns: let the log settle before judging it.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := web.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	return &bigCrawl{web: web, cfg: cfg, sum: sum}
}

func TestAcceptance(t *testing.T) {
	b := runBigCrawl(t)
	t.Run("politeness from the server log", func(t *testing.T) { testPoliteness(t, b) })
	t.Run("robots.txt obeyed", func(t *testing.T) { testRobotsObeyed(t, b) })
	t.Run("every reachable page fetched exactly once", func(t *testing.T) { testExactlyOnce(t, b) })
	t.Run("WARC holds every response", func(t *testing.T) { testWARC(t, b) })
	t.Run("near-duplicates found", func(t *testing.T) { testNearDuplicates(t, b) })
}

// testNearDuplicates judges the crawl's near-duplicate flags against the
// synthetic web's article families. A page should be flagged exactly when
// a page of its family was judged before it, joined the index (it was not
// itself flagged) and was found at its link depth or shallower: a copy
// found shallower than every earlier page of its family is read for its
// links and stands for the family from then on, by design. Precision is
// the share of flags that name a page of the same family, recall the share
// of expected flags that do: both must be at least 0.95. What the rule
// leaves unflagged is counted and logged, so that recall measures the
// fingerprints, not the order in which a crawl happened to find a family.
func testNearDuplicates(t *testing.T, b *bigCrawl) {
	db, err := store.Open(store.Dir(b.cfg.DataDir), &store.Options{ReadOnly: true, CacheSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	family := func(url string) string {
		p, _ := b.web.Page(url)
		return p.Family
	}
	depth := map[string]int{}
	for part := range uint16(cmp.Or(b.cfg.Partitions, 64)) {
		if err := db.ScanURLs(part, func(_ string, _ [16]byte, r store.URLRecord) bool {
			depth[r.URL] = r.Depth
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	type judgedPage struct {
		url     string
		at      time.Time
		flagged bool // flagged as a copy of a page of its own family
	}
	families := map[string][]judgedPage{}
	var flagged, right, articles int
	if err := db.ScanCaptures(func(_ string, r store.CaptureRecord) bool {
		f := family(r.URL)
		if f != "" {
			articles++
			if r.SimHash == 0 {
				t.Errorf("article %s was not judged", r.URL)
			}
			families[f] = append(families[f], judgedPage{r.URL, r.Date, r.NearDupOf != "" && family(r.NearDupOf) == f})
		}
		if r.NearDupOf != "" {
			flagged++
			if f != "" && family(r.NearDupOf) == f {
				right++
			} else {
				t.Logf("false near-duplicate: %s of %s", r.URL, r.NearDupOf)
			}
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	expected, found, shallower, groups := 0, 0, 0, 0
	for _, pages := range families {
		if len(pages) > 1 {
			groups++
		}
		slices.SortFunc(pages, func(x, y judgedPage) int { return x.at.Compare(y.at) })
		joined := -1 // the shallowest depth of the family's pages in the index
		for _, p := range pages {
			d, ok := depth[p.url]
			if !ok {
				t.Fatalf("article %s has a capture and no URL record", p.url)
			}
			switch {
			case joined >= 0 && joined <= d:
				expected++
				if p.flagged {
					found++
				} else {
					t.Logf("missed near-duplicate: %s at depth %d, its family in the index at depth %d", p.url, d, joined)
				}
			case p.flagged:
				// Flagged against a page of its family this reading does
				// not see in the index.
			default:
				if joined >= 0 {
					shallower++
				}
				joined = d
			}
		}
	}
	if groups < 50 {
		t.Fatalf("only %d article families had two or more pages fetched", groups)
	}
	precision, recall := float64(right)/float64(max(flagged, 1)), float64(found)/float64(max(expected, 1))
	threshold := cmp.Or(b.cfg.NearDupThreshold, simhash.DefaultThreshold)
	t.Logf("near-duplicates at %d bits: %d articles fetched, %d families of two or more; %d flagged, %d of them in their family; %d expected, %d of them flagged; %d copies found shallower than their family, read as originals: precision %.3f, recall %.3f",
		threshold, articles, groups, flagged, right, expected, found, shallower, precision, recall)
	if precision < 0.95 || recall < 0.95 {
		t.Errorf("precision %.3f and recall %.3f, want both at least 0.95", precision, recall)
	}
	if got := b.sum.NearDups; got != int64(flagged) {
		t.Errorf("summary counts %d near-duplicates, the capture index %d", got, flagged)
	}
}

func testPoliteness(t *testing.T, b *bigCrawl) {
	web, sum := b.web, b.sum
	t.Logf("crawl: %d pages, %d robots.txt in %v; hosts down %v; errors %v", sum.Pages, sum.RobotsFetches, sum.Elapsed, sum.HostsDown, sum.Errors)
	audit := synthweb.Audit(web, bigDelay)
	if audit.Requests < 1000 {
		t.Fatalf("only %d requests: the crawl did not run", audit.Requests)
	}
	for _, s := range audit.Breaches() {
		t.Errorf("politeness: %s", s)
	}
	for _, s := range audit.RobotsNotFirst {
		t.Errorf("robots.txt not first: %s", s)
	}
	// The Crawl-delay hosts were given a gap three times --delay: the
	// audit above checked it; make sure such hosts exist in this web.
	n := 0
	for _, h := range web.Hosts() {
		if h.CrawlDelay == bigCrawlDelay {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no host declares a Crawl-delay; the test proves nothing about it")
	}
}

func testRobotsObeyed(t *testing.T, b *bigCrawl) {
	web := b.web
	byAddr := map[string]synthweb.HostInfo{}
	for _, h := range web.Hosts() {
		byAddr[h.Addr] = h
	}
	kinds := map[synthweb.RobotsKind]int{}
	for _, h := range web.Hosts() {
		kinds[h.Robots]++
	}
	// Every kind, each exercising one case of RFC 9309: the checks below
	// (no disallowed page fetched) and testExactlyOnce (every allowed,
	// reachable page fetched) judge each from the server's log.
	for k := range synthweb.RobotsKind(synthweb.NumRobotsKinds) {
		if kinds[k] == 0 {
			t.Fatalf("no host of robots kind %v in the web", k)
		}
	}
	perHost := map[string][]synthweb.Request{}
	for _, r := range web.Log() {
		perHost[r.Addr] = append(perHost[r.Addr], r)
	}
	for addr, reqs := range perHost {
		h := byAddr[addr]
		for _, r := range reqs {
			if isRobotsPath(r.Path) {
				continue
			}
			u := "http://" + h.Authority + r.Path
			if r.Path == "/sitemap.xml" {
				if !web.Allowed(u) {
					t.Errorf("%s (%v): fetched disallowed %s", h.Name, h.Robots, r.Path)
				}
				continue
			}
			p, ok := web.Page(u)
			if !ok {
				t.Errorf("%s: requested %s, which the web does not have", h.Name, r.Path)
				continue
			}
			if p.Disallowed {
				t.Errorf("%s (%v): fetched disallowed %s", h.Name, h.Robots, r.Path)
			}
			if r.UserAgent != "weft/test (+https://example.org/weft-crawler)" {
				t.Errorf("%s: User-Agent %q", h.Name, r.UserAgent)
			}
		}
		robotsReqs := 0
		for _, r := range reqs {
			if isRobotsPath(r.Path) {
				robotsReqs++
			}
		}
		switch h.Robots {
		case synthweb.RobotsRedirectLoop:
			// robots.txt and five redirect hops, then "unavailable": no
			// rules, and the chain is not asked again.
			if robotsReqs != 6 {
				t.Errorf("%s (%v): %d robots.txt requests, want 6 (the file and 5 hops)", h.Name, h.Robots, robotsReqs)
			}
		case synthweb.RobotsRedirect:
			if robotsReqs != 3 {
				t.Errorf("%s (%v): %d robots.txt requests, want 3 (the file and its 2 hops)", h.Name, h.Robots, robotsReqs)
			}
		case synthweb.RobotsServerError, synthweb.RobotsTimeout:
			// Nothing but robots.txt: retried after a wait that doubles,
			// and for a 503 after its Retry-After (capped) too.
			var starts []time.Time
			for _, r := range reqs {
				if !isRobotsPath(r.Path) {
					t.Errorf("%s (%v): requested %s; want nothing but robots.txt", h.Name, h.Robots, r.Path)
				}
				starts = append(starts, r.Start)
			}
			var floor time.Duration
			if h.Robots == synthweb.RobotsServerError {
				floor = testRetryAfterCap
			}
			checkRobotsRetries(t, h.Name, starts, 2, testRobotsWait, floor)
		}
	}
}

// checkRobotsRetries checks the start times of the requests for a robots.txt
// that always fails: at least attempts of them (the host waits for that many
// before it is given up), each started at least the retry wait, doubled per
// failure before it, and floor after the one before.
func checkRobotsRetries(t *testing.T, host string, starts []time.Time, attempts int, wait, floor time.Duration) {
	t.Helper()
	if len(starts) < attempts {
		t.Errorf("%s: robots.txt requested %d times; want %d attempts before the host is given up", host, len(starts), attempts)
	}
	for k := 1; k < len(starts); k++ {
		want := max(wait<<(k-1), floor)
		if gap := starts[k].Sub(starts[k-1]); gap < want {
			t.Errorf("%s: robots.txt attempt %d started %v after the one before; want at least %v", host, k+1, gap, want)
		}
	}
}

// requestCounts counts, per URL, the requests the web received that keep
// accepts.
func requestCounts(web *synthweb.Web, log []synthweb.Request, keep func(synthweb.Request) bool) map[string]int {
	auth := map[string]string{}
	for _, h := range web.Hosts() {
		auth[h.Addr] = h.Authority
	}
	n := map[string]int{}
	for _, r := range log {
		if keep(r) {
			n["http://"+auth[r.Addr]+r.Path]++
		}
	}
	return n
}

// pageRequests counts the requests per URL, robots.txt and the tries
// once more after a server error or no answer (synthweb.FirstTries) left
// out.
func pageRequests(web *synthweb.Web) map[string]int {
	return requestCounts(web, synthweb.FirstTries(web.Log()), func(r synthweb.Request) bool { return !isRobotsPath(r.Path) })
}

// shouldFetch reports whether a compliant crawl of the whole web fetches p:
// reachable, allowed, and not of a denied extension.
func shouldFetch(p synthweb.PageInfo) bool {
	return p.Reachable && !p.Disallowed && p.Role != "image"
}

// isRobotsPath reports whether the request was part of a robots.txt fetch
// (the file or a hop of its redirect chain).
func isRobotsPath(p string) bool { return strings.HasPrefix(p, "/robots") }

func testExactlyOnce(t *testing.T, b *bigCrawl) {
	web := b.web
	fetched := pageRequests(web)
	want := 0
	for _, p := range web.AllPages() {
		n := fetched[p.URL]
		switch {
		case shouldFetch(p):
			want++
			if n != 1 {
				t.Errorf("%s (%s) fetched %d times, want once", p.URL, p.Role, n)
			}
		case n != 0:
			t.Errorf("%s (%s, reachable %v, disallowed %v) fetched %d times, want never", p.URL, p.Role, p.Reachable, p.Disallowed, n)
		}
	}
	sitemaps := 0
	for u, n := range fetched {
		if strings.HasSuffix(u, "/sitemap.xml") {
			// Each host's sitemap, once, after its robots.txt allowed it.
			sitemaps++
			if n != 1 {
				t.Errorf("%s fetched %d times, want once", u, n)
			}
			continue
		}
		if _, ok := web.Page(u); !ok {
			t.Errorf("fetched %s (%d times), which is not a page of the web", u, n)
		}
	}
	if sitemaps < len(web.Seeds())/2 || b.sum.Handled["sitemap"] == 0 {
		t.Errorf("%d sitemaps fetched, %d read, for %d hosts", sitemaps, b.sum.Handled["sitemap"], len(web.Seeds()))
	}
	if want < 500 {
		t.Fatalf("only %d fetchable pages; the web is too small to prove anything", want)
	}
	t.Logf("%d pages fetched, each once", want)
}

func testWARC(t *testing.T, b *bigCrawl) {
	web, cfg, sum := b.web, b.cfg, b.sum
	if len(sum.WARCFiles) == 0 {
		t.Fatal("no WARC files")
	}
	// Response records hold their payloads; revisit records (a payload
	// already archived) refer to a response record that holds it.
	responses := map[string]int{}
	payloads := map[string][]byte{}   // URI -> payload of its response record
	byDigest := map[string][]string{} // payload digest -> URIs of whole 2xx response records
	type revisit struct{ uri, refersTo, digest, refersToID string }
	var revisits []revisit
	ids := map[string]string{}      // response record ID -> URI
	captures := map[string]string{} // response and revisit record ID -> URI
	var metas []warcRecord
	for _, name := range sum.WARCFiles {
		path := filepath.Join(cfg.DataDir, "warc", name)
		for i, rec := range readWARC(t, path) {
			if i == 0 && rec.header.Get("WARC-Type") != "warcinfo" {
				t.Errorf("%s starts with a %s record", name, rec.header.Get("WARC-Type"))
			}
			uri := rec.header.Get("WARC-Target-URI")
			head, payload, ok := bytes.Cut(rec.block, []byte("\r\n\r\n"))
			switch rec.header.Get("WARC-Type") {
			case "response":
				ids[rec.header.Get("WARC-Record-ID")] = uri
				captures[rec.header.Get("WARC-Record-ID")] = uri
			case "metadata":
				metas = append(metas, rec)
				continue
			case "revisit":
				captures[rec.header.Get("WARC-Record-ID")] = uri
				responses[uri]++
				if rec.header.Get("WARC-Profile") != warc.ProfileIdenticalPayload || !ok || len(payload) != 0 {
					t.Errorf("%s: revisit with profile %q and a %d-byte payload", uri, rec.header.Get("WARC-Profile"), len(payload))
				}
				revisits = append(revisits, revisit{uri, rec.header.Get("WARC-Refers-To-Target-URI"), rec.header.Get("WARC-Payload-Digest"), rec.header.Get("WARC-Refers-To")})
				continue
			default:
				continue
			}
			responses[uri]++
			if !ok {
				t.Errorf("%s: response block has no header end", uri)
				continue
			}
			sum := sha1.Sum(payload)
			digest := "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
			if got := rec.header.Get("WARC-Payload-Digest"); got != digest {
				t.Errorf("%s: payload digest %s, want %s", uri, got, digest)
			}
			if served := web.Body(uri); served != nil && !bytes.Equal(served, payload) {
				t.Errorf("%s: archived payload (%d bytes) differs from the %d bytes served", uri, len(payload), len(served))
			}
			payloads[uri] = payload
			if bytes.HasPrefix(head, []byte("HTTP/1.1 2")) && rec.header.Get("WARC-Truncated") == "" && len(payload) > 0 {
				byDigest[digest] = append(byDigest[digest], uri)
			}
		}
	}
	// The same payload is stored once: every whole 2xx payload in one
	// response record, however many URLs served it.
	for d, uris := range byDigest {
		if len(uris) > 1 {
			t.Errorf("payload %s stored %d times: %v", d, len(uris), uris)
		}
	}
	boilerplate := 0
	for _, r := range revisits {
		orig, ok := payloads[r.refersTo]
		if !ok || !slices.Contains(byDigest[r.digest], r.refersTo) {
			t.Errorf("%s: revisit of %s (%s), which holds no such payload", r.uri, r.refersTo, r.digest)
			continue
		}
		if ids[r.refersToID] != r.refersTo {
			t.Errorf("%s: WARC-Refers-To %s is not the record of %s", r.uri, r.refersToID, r.refersTo)
		}
		if served := web.Body(r.uri); served != nil && !bytes.Equal(served, orig) {
			t.Errorf("%s: served %d bytes, not the %d bytes of %s it is recorded as a revisit of", r.uri, len(served), len(orig), r.refersTo)
		}
		if strings.Contains(r.uri, "/legal/terms") {
			boilerplate++
		}
	}
	// Every host's two copies of the terms, but the first: revisits.
	if terms := requestCounts(web, web.Log(), func(r synthweb.Request) bool { return strings.HasPrefix(r.Path, "/legal/terms") }); boilerplate != len(terms)-1 || len(terms) < 100 {
		t.Errorf("%d revisits of the terms page, served at %d URLs; want all but one", boilerplate, len(terms))
	}
	// A metadata record for each parsed page, about its own capture,
	// listing every link the page holds. The capture is its response
	// record, or its revisit record when a copy of a payload archived
	// before was read as a page of its own: found shallower than the
	// first copy, or before the first copy's links were recorded as
	// followed (archive.Capture.SkipLinks), which depends on the order
	// in which the hosts' copies of the terms page happen to be fetched.
	parsed := 0
	for _, m := range metas {
		uri := m.header.Get("WARC-Target-URI")
		if captures[m.header.Get("WARC-Concurrent-To")] != uri {
			t.Errorf("%s: metadata concurrent to %s, which is not its response or revisit record", uri, m.header.Get("WARC-Concurrent-To"))
			continue
		}
		outlinks := map[string]bool{}
		for _, line := range strings.Split(string(m.block), "\r\n") {
			if v, ok := strings.CutPrefix(line, "outlink: "); ok {
				outlinks[v] = true
			}
		}
		if p, ok := web.Page(uri); ok {
			parsed++
			for _, l := range append(p.Links, p.NoFollowLinks...) {
				if !outlinks[l] {
					t.Errorf("%s: metadata lacks the outlink %s", uri, l)
				}
			}
		}
	}
	if parsed < 500 {
		t.Errorf("metadata records for %d pages of the web", parsed)
	}
	if int64(len(revisits)) != sum.Revisits {
		t.Errorf("%d revisit records, summary says %d", len(revisits), sum.Revisits)
	}
	// One response or revisit record per URL the server answered
	// (robots.txt hops included: they are archived too).
	answered := requestCounts(web, web.Log(), func(r synthweb.Request) bool { return r.Status != 0 })
	for u, n := range answered {
		if responses[u] != n {
			t.Errorf("%s answered %d times, archived %d times", u, n, responses[u])
		}
	}
	for u, n := range responses {
		if answered[u] == 0 {
			t.Errorf("%s archived %d times but never answered", u, n)
		}
	}
	pages := 0
	for u, n := range responses {
		if !isRobotsPath("/" + strings.SplitN(strings.TrimPrefix(u, "http://"), "/", 2)[1]) {
			pages += n // a server error asked for once more is archived twice
		}
	}
	// Pages, requisites and sitemaps are counted apart, each against its
	// own budget; the archive holds them all.
	if fetched := sum.Pages + sum.RequisiteFetches + sum.SitemapFetches; int64(pages) != fetched {
		t.Errorf("%d responses other than robots.txt archived, summary says %d pages, %d requisites and %d sitemaps", pages, sum.Pages, sum.RequisiteFetches, sum.SitemapFetches)
	}
}

type warcRecord struct {
	header ia.Header
	block  []byte
}

// readWARC reads a file with the internetarchive reader: a WARC library
// independent of the one that wrote it.
func readWARC(t *testing.T, path string) []warcRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ia.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []warcRecord
	for {
		rec, err := r.ReadRecord()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: record %d: %v", path, len(out), err)
		}
		block, err := io.ReadAll(rec.Content)
		rec.Content.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, warcRecord{rec.Header, block})
	}
}

// readFetchLog returns the records of fetches.jsonl.
func readFetchLog(t *testing.T, dir string) []fetchlog.Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "fetches.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []fetchlog.Record
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r fetchlog.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("fetches.jsonl: %v: %s", err, line)
		}
		out = append(out, r)
	}
	return out
}
