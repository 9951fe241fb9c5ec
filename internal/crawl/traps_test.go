package crawl

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/fetchlog"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/synthweb"
)

func TestHostileHostsCostOnlyTheirCaps(t *testing.T) {
	web := startWeb(t, synthweb.Config{
		Seed: 7, Hosts: 6, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		HostileKinds: []string{synthweb.HostileGzipBomb, synthweb.HostileEndless, synthweb.HostileSilent, synthweb.HostileCopies},
		HangLimit:    20 * time.Second,
		RobotsKinds:  []synthweb.RobotsKind{synthweb.RobotsNotFound},
	})
	cfg := testConfig(t, web, 16, 10*time.Millisecond)
	cfg.Seeds = append(web.Seeds(), web.HostileSeeds()...)
	const capBytes = 600 << 10
	cfg.Fetch.MaxBodyBytes = capBytes
	cfg.Fetch.ResponseHeaderTimeout = 500 * time.Millisecond
	sum := runCrawl(t, cfg)

	recs := readFetchLog(t, cfg.DataDir)
	byHost := map[string]fetchlog.Record{}
	for _, r := range recs {
		byHost[strings.SplitN(r.Host, ".", 2)[0]] = r
	}
	for _, name := range []string{synthweb.HostileGzipBomb, synthweb.HostileEndless} {
		r, ok := byHost[name]
		if !ok {
			t.Errorf("%s: never fetched", name)
			continue
		}
		if r.Truncated != "length" || r.Bytes > capBytes {
			t.Errorf("%s: truncated %q after %d bytes; want cut at the %d-byte cap", name, r.Truncated, r.Bytes, capBytes)
		}
	}
	// The silent host got one connection per robots.txt attempt, each of
	// which timed out; the attempts are spaced by the retry wait, and the
	// host is then treated as disallowed.
	var silent []time.Time
	for _, r := range web.Log() {
		if r.Method == "" {
			silent = append(silent, r.Start)
		}
	}
	checkRobotsRetries(t, synthweb.HostileSilent, silent, cfg.RobotsAttempts, testRobotsWait, 0)
	if sum.Robots["disallow-all"] != int64(len(silent)) || sum.HostsDown["timeout"] != 1 {
		t.Errorf("robots outcomes %v, hosts down %v; want the silent host's %d attempts failed and it down", sum.Robots, sum.HostsDown, len(silent))
	}
	// The copies host, an endless calendar of one story: its first page
	// is judged original, the days it links near-duplicates whose links
	// are not followed.
	if n := copiesFetches(t, web); n > 3 || sum.NearDups < 2 {
		t.Errorf("copies host: %d page requests and %d near-duplicates; want its first page and the two days it links, judged copies", n, sum.NearDups)
	}
	// And the crawl of the ordinary hosts went on: every reachable page.
	fetched := map[string]bool{}
	for _, r := range recs {
		fetched[r.URL] = true
	}
	for _, p := range web.AllPages() {
		if shouldFetch(p) && !fetched[p.URL] {
			t.Errorf("%s not fetched: a hostile host stopped the crawl of the others", p.URL)
		}
	}
}

// copiesFetches counts the page requests the copies host answered.
func copiesFetches(t *testing.T, web *synthweb.Web) int {
	addr := hostileHost(t, web, synthweb.HostileCopies).Addr
	n := 0
	for _, r := range web.Log() {
		if r.Addr == addr && !isRobotsPath(r.Path) {
			n++
		}
	}
	return n
}

// TestNearDupTrapCutOff crawls the copies host following the links of
// near-duplicates too: only the trap cut-off bounds it. Once most of its
// last 20 judged pages are copies, all under /day/, no new URL under
// /day/ is admitted, and those queued before are dropped when leased, as
// far as the host's state in memory knows (they are three per page
// fetched before the cut), so the host costs at most 1 + 3 × 20 requests
// (from the server's log), its directory is named in the summary, and
// the ordinary hosts are crawled whole. With room for one host's state in memory
// (--host-cache 1), the hosts evict each other's all along, and the
// window, kept in the store, cuts the host off all the same.
func TestNearDupTrapCutOff(t *testing.T) {
	for _, hostCache := range []int{0, 1} {
		t.Run(fmt.Sprintf("host-cache-%d", hostCache), func(t *testing.T) { testNearDupTrapCutOff(t, hostCache) })
	}
}

func testNearDupTrapCutOff(t *testing.T, hostCache int) {
	web := startWeb(t, synthweb.Config{
		Seed: 9, Hosts: 3, PagesPerHost: 40, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		HostileKinds: []string{synthweb.HostileCopies}, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound},
	})
	cfg := testConfig(t, web, 4, 5*time.Millisecond)
	if hostCache > 0 {
		cfg.HostCache, cfg.Partitions = hostCache, 1
	}
	copies := hostileHost(t, web, synthweb.HostileCopies).Authority
	cfg.Seeds = append(web.Seeds(), "http://"+copies+"/")
	cfg.NearDupFollow = true
	const window = 20
	cfg.NearDupTrapWindow = window
	cfg.MaxPages = 500 // were the cut-off broken, the calendar would be endless
	sum := runCrawlHeld(t, cfg)
	n := copiesFetches(t, web)
	t.Logf("copies host: %d requests, %d near-duplicates, %d URLs refused after the cut", n, sum.NearDups, sum.Rejected[judge.Trap])
	if n < window || n > 1+3*window {
		t.Errorf("copies host: %d page requests, want the window of %d and at most %d", n, window, 1+3*window)
	}
	if sum.Traps != 1 || len(sum.TrapHosts) != 1 || sum.TrapHosts[0] != copies+"/day/" || sum.Rejected[judge.Trap] == 0 {
		t.Errorf("summary: %d traps %v, %d URLs refused; want %s/day/ cut off", sum.Traps, sum.TrapHosts, sum.Rejected[judge.Trap], copies)
	}
	var out bytes.Buffer
	sum.Write(&out)
	if !strings.Contains(out.String(), "traps:      1 hosts or directories cut off") || !strings.Contains(out.String(), copies+"/day/") {
		t.Errorf("summary does not say so:\n%s", out.String())
	}
	recs := readFetchLog(t, cfg.DataDir)
	fetched := map[string]bool{}
	for _, r := range recs {
		fetched[r.URL] = true
	}
	for _, p := range web.AllPages() {
		if shouldFetch(p) && !fetched[p.URL] {
			t.Errorf("%s not fetched", p.URL)
		}
	}
}

// TestNearDupTrapSurvivesRestart stops a crawl of the copies host just
// after the cut-off and resumes it with a wider window: the cut, kept in
// the store, still holds, so over both runs the host costs at most the
// URLs admitted before the cut (1 + 3 × 20), where forgetting it would let
// the second run admit new days until 33 of 64 were copies.
func TestNearDupTrapSurvivesRestart(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 9, Hosts: 1, PagesPerHost: 12, HostileKinds: []string{synthweb.HostileCopies},
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	copies := hostileHost(t, web, synthweb.HostileCopies).Authority
	cfg := testConfig(t, web, 2, 2*time.Millisecond)
	cfg.Seeds = []string{"http://" + copies + "/"}
	cfg.NearDupFollow = true
	const window = 20
	cfg.NearDupTrapWindow = window
	cfg.MaxPages = window + 2
	first := runCrawl(t, cfg)
	if first.Traps != 1 {
		t.Fatalf("first run: %d hosts cut off after %d pages, want the copies host", first.Traps, first.Pages)
	}
	cfg.NearDupTrapWindow = 64
	cfg.MaxPages = 500
	second := runCrawl(t, cfg)
	n := copiesFetches(t, web)
	t.Logf("copies host: %d requests over both runs (%d, then %d)", n, first.Pages, second.Pages)
	if second.Traps != 1 || len(second.TrapHosts) != 1 || second.TrapHosts[0] != copies+"/day/" {
		t.Errorf("second run: %d traps %v; want the cut of /day/ kept", second.Traps, second.TrapHosts)
	}
	if n > 1+3*window {
		t.Errorf("copies host: %d requests over both runs, want at most %d: the resumed crawl admitted new URLs of a host cut off", n, 1+3*window)
	}
}

// TestTrapRules crawls the four trap hosts of the synthetic web: session
// ids in paths, a faceted search, a relative-link trap and an endless
// calendar, none of them near-duplicates. The pattern cap and the
// repeated-segment rule bound each; the summary names each host with what
// it cost, and its count of requests is the server's. The same holds with
// room for one host's state in memory (--host-cache 1).
func TestTrapRules(t *testing.T) {
	for _, hostCache := range []int{0, 1} {
		t.Run(fmt.Sprintf("host-cache-%d", hostCache), func(t *testing.T) { testTrapRules(t, hostCache) })
	}
}

func testTrapRules(t *testing.T, hostCache int) {
	kinds := []string{synthweb.TrapSessions, synthweb.TrapFacets, synthweb.TrapDeep, synthweb.TrapCalendar}
	web := startWeb(t, synthweb.Config{Seed: 4, Hosts: 1, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		HostileKinds: kinds, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	cfg := testConfig(t, web, 8, 2*time.Millisecond)
	if hostCache > 0 {
		cfg.HostCache, cfg.Partitions = hostCache, 1
	}
	cfg.Seeds = append(web.Seeds(), web.HostileSeeds()...)
	const capPattern = 12
	cfg.MaxURLsPerPattern = capPattern
	cfg.MaxPages = 2000 // were a rule broken, the traps would be endless
	sum := runCrawlHeld(t, cfg)

	byAuth := map[string]string{}
	for _, h := range web.Hosts() {
		byAuth[h.Authority] = h.Hostile
	}
	requests := map[string]int{}
	for _, r := range web.Log() {
		requests[r.Host]++
	}
	bound := map[string]int{
		synthweb.TrapSessions: 1 + capPattern,     // "/" and the cap of /s/*/p/*
		synthweb.TrapFacets:   1 + 1 + capPattern, // "/", /shop and the cap of /shop?...
		synthweb.TrapCalendar: 1 + capPattern,     // "/" and the cap of /cal/*/*/
		synthweb.TrapDeep:     1 + 69,             // paths with no segment more than 3 times
	}
	costs := map[string]judge.TrapCost{}
	for _, c := range sum.TrapCosts {
		costs[byAuth[c.Host]] = c
	}
	for _, k := range kinds {
		var auth string
		for a, kind := range byAuth {
			if kind == k {
				auth = a
			}
		}
		n := requests[auth] - 1 // robots.txt
		c := costs[k]
		t.Logf("%-9s %3d page requests; summary: %d requests, refused %v", k, n, c.Requests, c.Refused)
		if n < 3 || n > bound[k] {
			t.Errorf("%s: %d page requests, want a few and at most %d", k, n, bound[k])
		}
		if c.Requests != requests[auth] || c.RefusedTotal() == 0 {
			t.Errorf("%s: the summary says %d requests and %d refused, the server saw %d", k, c.Requests, c.RefusedTotal(), requests[auth])
		}
	}
	if sum.TrapHostCount != int64(len(kinds)) || sum.Rejected[judge.Pattern] == 0 || sum.Rejected[judge.Repeats] == 0 {
		t.Errorf("%d trap hosts, rejections %v", sum.TrapHostCount, sum.Rejected)
	}
	var out bytes.Buffer
	sum.Write(&out)
	if !strings.Contains(out.String(), "trap rules: 4 hosts") {
		t.Errorf("the summary does not report the trap hosts:\n%s", out.String())
	}
	// The ordinary host is crawled whole beside them.
	fetched := pageRequests(web)
	for _, p := range web.AllPages() {
		if shouldFetch(p) && fetched[p.URL] == 0 {
			t.Errorf("%s not fetched", p.URL)
		}
	}
}

// TestPatternCapSurvivesRestart stops a crawl of the endless calendar
// after a few pages and resumes it: the pattern's count goes on from where
// it was, so over both runs the host costs at most the cap, as the server
// counts, where counts started again from zero would let the second run
// admit another cap's worth of days.
func TestPatternCapSurvivesRestart(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 4, Hosts: 1, PagesPerHost: 12, HostileKinds: []string{synthweb.TrapCalendar},
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	calendar := hostileHost(t, web, synthweb.TrapCalendar).Authority
	cfg := testConfig(t, web, 2, 2*time.Millisecond)
	cfg.Seeds = web.HostileSeeds()
	const capPattern = 12
	cfg.MaxURLsPerPattern = capPattern
	cfg.MaxPages = 4
	runCrawl(t, cfg)
	cfg.MaxPages = 500 // were the cap forgotten, the calendar would go on
	sum := runCrawl(t, cfg)
	n := 0
	for _, r := range web.Log() {
		if r.Host == calendar && !isRobotsPath(r.Path) {
			n++
		}
	}
	t.Logf("calendar: %d page requests over both runs; second run refused %d", n, sum.Rejected[judge.Pattern])
	if n > 1+capPattern || sum.Rejected[judge.Pattern] == 0 {
		t.Errorf("calendar: %d page requests over both runs, want at most %d (\"/\" and the cap of /cal/*/*/), and the second run refusing some", n, 1+capPattern)
	}
}

// TestTrapBudget crawls the faceted search and the endless calendar with
// the default settings but for the delay and the timeouts (the pattern
// cap at 10,000, requisites and sitemaps fetched, a depth limit of 20):
// each family's budget alone bounds them, since their
// pages are distinct but lead only to more of their family. From the
// server's log, the calendar costs about 100 page requests; the facets
// fewer, as their parameters are learnt barren after eight pages that
// led nowhere (31 requests; 95 before). The URLs held, those queued
// before and held when leased too, are counted in the summary, per
// reason and per host, and left queued at Surplus, which ends a crawl;
// the ordinary host is crawled whole beside them.
func TestTrapBudget(t *testing.T) {
	kinds := []string{synthweb.TrapFacets, synthweb.TrapCalendar}
	web := startWeb(t, synthweb.Config{Seed: 4, Hosts: 1, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		HostileKinds: kinds, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	cfg := testConfig(t, web, 8, time.Millisecond)
	cfg.Seeds = append(web.Seeds(), web.HostileSeeds()...)
	cfg.Scope.MaxDepth, cfg.MaxURLsPerHost = 0, 0 // the defaults, which a trap of 100 pages does not reach
	cfg.NoRequisites, cfg.NoSitemaps = false, false
	sum := runCrawl(t, cfg)

	auth := map[string]string{}
	for _, h := range web.Hosts() {
		auth[h.Hostile] = h.Authority
	}
	requests := trapPageRequests(web)
	costs := map[string]judge.TrapCost{}
	for _, c := range sum.TrapCosts {
		costs[c.Host] = c
	}
	for _, k := range kinds {
		n, c := requests[auth[k]], costs[auth[k]]
		t.Logf("%-9s %3d page requests; summary: %d requests, %d held, refused %v", k, n, c.Requests, c.Held, c.Refused)
		// At least the budget was spent (the facets: the pages that
		// taught their parameters barren); at most about 100 requests:
		// the family's 4/3 of the budget, and the URLs linked into it
		// from outside it (the shop's /shop links 22 facets).
		least := judge.DefaultTrapBudget
		if k == synthweb.TrapFacets {
			least = 8
		}
		if n < least || n > 100 || k == synthweb.TrapFacets && n >= judge.DefaultTrapBudget {
			t.Errorf("%s: %d page requests, want from %d to about 100 (the facets: under the budget of %d)", k, n, least, judge.DefaultTrapBudget)
		}
		if c.Held == 0 || c.Requests < n {
			t.Errorf("%s: the trap report says %d held and %d requests; want some held, and the server's %d requests", k, c.Held, c.Requests, n)
		}
	}
	if sum.Held[judge.HeldQuery] == 0 || sum.Held[judge.HeldBarren] == 0 || sum.Rejected[judge.HeldBarren] != 0 || sum.Held[judge.HeldDate] == 0 || sum.StoppedBy != "drained" {
		t.Errorf("held %v, dropped as barren when leased %d, stopped by %q; want facets held past the query budget and as barren (queued ones held when leased, none dropped), months past the date budget, and the crawl drained",
			sum.Held, sum.Rejected[judge.HeldBarren], sum.StoppedBy)
	}
	var out bytes.Buffer
	sum.Write(&out)
	if !strings.Contains(out.String(), "held by the trap budget") {
		t.Errorf("the summary does not report the URLs held:\n%s", out.String())
	}
	fetched := pageRequests(web)
	for _, p := range web.AllPages() {
		if shouldFetch(p) && fetched[p.URL] == 0 {
			t.Errorf("%s not fetched", p.URL)
		}
	}
}

// trapPageRequests counts the requests each host answered for pages: not
// robots.txt, its sitemap or its favicon.
func trapPageRequests(web *synthweb.Web) map[string]int {
	auth := map[string]string{}
	for _, h := range web.Hosts() {
		auth[h.Addr] = h.Authority
	}
	n := map[string]int{}
	for _, r := range web.Log() {
		if !isRobotsPath(r.Path) && r.Path != "/sitemap.xml" && r.Path != "/favicon.ico" {
			n[auth[r.Addr]]++
		}
	}
	return n
}

// TestTrapBudgetCostsOrdinarySitesNothing crawls blogs (synthweb's
// WorldBlog: a listing paginated in its query, /?page=N, each page
// linking the next; posts under dated paths, /2026/11/30/slug-0/, one in
// five with a reply link ?replytocom=N; an archive per month, /2026/11/,
// each linking the month before) with the trap budget at its default and
// with none: the same pages are fetched, but for the reply links, copies
// of their posts, which the default learns a wall of copies (a page's
// variants, judge.variantShape) after a few and holds; nothing else is
// held. With a budget of
// 4 the listing passes it from its own pages; its later pages lead to
// posts the month archives found first (linked from every post, the
// archives rank above the listing's deep pages and are fetched before
// them), so it does not grow much, and may be held: every post is still
// fetched. (That a family grows on what its pages lead to is
// TestTrapBudgetGrows, in package judge.) The same blogs linked as
// WordPress's plain permalinks (/?p=N, /?m=YYYYMM: every URL "/" and a
// query, one family) have every post fetched too, with either budget:
// once, 76 of 300 were, the rest held.
func TestTrapBudgetCostsOrdinarySitesNothing(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	const posts = 300
	for _, plain := range []bool{false, true} {
		web := startWeb(t, synthweb.Config{Seed: 11, Hosts: 2, PagesPerHost: posts, World: synthweb.WorldBlog, BlogPlainLinks: plain,
			RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
		var base map[string]int
		for _, budget := range []int{-1, 0, 4} {
			mark := len(web.Log())
			cfg := testConfig(t, web, 4, 0)
			cfg.TrapBudget = budget
			sum := runCrawl(t, cfg)
			got := map[string]int{}
			listing, post := map[string]int{}, map[string]int{}
			for _, r := range web.Log()[mark:] {
				if isRobotsPath(r.Path) {
					continue
				}
				got[r.Host+r.Path]++
				switch {
				case strings.HasPrefix(r.Path, "/?page="):
					listing[r.Host]++
				case plain && strings.HasPrefix(r.Path, "/?p=") && !strings.Contains(r.Path, "&"),
					!plain && strings.Count(r.Path, "/") == 5 && !strings.Contains(r.Path, "?"):
					post[r.Host]++
				}
			}
			t.Logf("plain links %v, trap budget %2d: %d URLs requested, listing pages %v, posts %v, held %v", plain, budget, len(got), listing, post, sum.Held)
			switch {
			case base == nil:
				base = got
			case budget == 4:
				for h, n := range post {
					if n != posts || listing[h] < 4 {
						t.Errorf("plain links %v, trap budget 4: %s: %d posts fetched and %d pages of its listing, want all %d and at least 4", plain, h, n, listing[h], posts)
					}
				}
			default:
				var missing []string
				replies, baseReplies := 0, 0
				for u := range base {
					if strings.Contains(u, "replytocom=") {
						baseReplies++
					}
					switch {
					case got[u] > 0:
					case strings.Contains(u, "replytocom="):
						replies++
					default:
						missing = append(missing, u)
					}
				}
				if len(missing) > 0 {
					slices.Sort(missing)
					t.Errorf("plain links %v, trap budget %d: %d URLs not fetched that are without a budget, %v first", plain, budget, len(missing), missing[:min(5, len(missing))])
				}
				// Held as copies, when found or when leased, queued before
				// the wall was learnt: each reply link not fetched. Some
				// reply pages are distinct from their post (a short post's
				// reply form): should the wall meet enough of them first,
				// it falls (judge.wallEvidence), and releases every link it
				// held, all fetched as without a budget.
				copies := sum.Held[judge.HeldCopies] + int64(sum.Rejected[judge.HeldCopies])
				delete(sum.Held, judge.HeldCopies)
				fell := replies == 0 && copies > 0 && sum.Released > 0
				if len(got) != len(base)-replies || len(sum.Held) != 0 || 4*replies < baseReplies && !fell || copies < int64(replies) {
					t.Errorf("plain links %v, trap budget %d: %d URLs requested, %d reply links not, %d held as copies (%d released), %v held else; without a budget %d, of them %d reply links; want all but a quarter of the reply links at least, held as copies, or all released, nothing else held",
						plain, budget, len(got), replies, copies, sum.Released, sum.Held, len(base), baseReplies)
				}
			}
		}
		if len(base) < 2*posts {
			t.Errorf("plain links %v: %d URLs without a budget; want the %d posts of both blogs at least", plain, len(base), 2*posts)
		}
	}
}

// TestTrapBudgetFindsEveryProduct crawls a shop whose products only its
// faceted listings lead to (synthweb.FacetShop): each category's listing
// links more facets than a small budget before any of them is fetched,
// and the listing's own later pages come after its facets. The family's
// budget grows with the products its pages lead to, and releases the
// URLs held first in the order they were found: every product is fetched,
// for a part of the listings, and the facets cost less than without a
// budget. So too over a crawl stopped half-way and resumed: the resumed
// run reads back the URLs held (judge.RememberHeld). Facets whose pages
// led nowhere new are learnt barren, and the rest of them held. The links to a
// listing's variants weigh less than its links to products and to its next
// page (importance.Variant), so the products come first: within the shop's
// first 300 requests, and under a page budget four to a listing.
func TestTrapBudgetFindsEveryProduct(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	web := startWeb(t, synthweb.Config{Seed: 5, Hosts: 1, PagesPerHost: 4, HostileKinds: []string{synthweb.FacetShop},
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	shop := hostileHost(t, web, synthweb.FacetShop).Addr
	count := func(mark int) (products, listings int) {
		seen := map[string]bool{}
		for _, r := range web.Log()[mark:] {
			if r.Addr != shop || seen[r.Path] {
				continue
			}
			seen[r.Path] = true
			switch {
			case strings.HasPrefix(r.Path, "/product/"):
				products++
			case strings.HasPrefix(r.Path, "/shop?"):
				listings++
			}
		}
		return products, listings
	}
	var unbounded int
	for i, budget := range []int{-1, 12, 12, 12} {
		mark := len(web.Log())
		cfg := testConfig(t, web, 8, 0)
		cfg.Seeds = web.HostileSeeds()
		cfg.TrapBudget = budget
		if resume := i == 2; resume {
			cfg.MaxPages = 30
			first := runCrawl(t, cfg)
			t.Logf("stopped after %d pages, %v held, %d released", first.Pages, first.Held, first.Released)
			cfg.MaxPages = 0
		}
		if i == 3 {
			// A page budget: spent on the products the listings lead to
			// before more listings (judge.ReleasedPriority).
			cfg.MaxPages = 150
			runCrawl(t, cfg)
			products, listings := count(mark)
			t.Logf("trap budget %2d, --max-pages %d: %d products, %d listings", budget, cfg.MaxPages, products, listings)
			if products < 4*listings {
				t.Errorf("--max-pages %d: %d products for %d listings; want four times as many products (twice when a facet's variants ranked as the next page)", cfg.MaxPages, products, listings)
			}
			continue
		}
		sum := runCrawl(t, cfg)
		products, listings := count(mark)
		// The listing's next pages and products go before its facets'
		// variants (importance.Variant): with every product found by
		// then, the shop's 240 products are requested within its first
		// 300 requests (346 when the variants gathered as much cash as
		// the next pages, 279 since).
		last := 0
		for n, r := range web.Log()[mark:] {
			if r.Addr == shop && strings.HasPrefix(r.Path, "/product/") {
				last = n + 1
			}
		}
		t.Logf("trap budget %2d: %d products, %d listings; held %v, %d released", budget, products, listings, sum.Held, sum.Released)
		if products != synthweb.FacetShopProducts {
			t.Errorf("trap budget %d: %d products fetched, want all %d", budget, products, synthweb.FacetShopProducts)
		}
		if budget < 0 {
			unbounded = listings
			continue
		}
		if last > 300 {
			t.Errorf("trap budget %d: the last product was request %d to the shop; want every product within 300", budget, last)
		}
		// In one run, the facets' parameters are learnt barren once the
		// listing's pages have found the products (judge.HeldBarren):
		// 107 listings, 141 before. (The resumed run met facets that led
		// to products before its listing's pages did, and keeps them.)
		if i == 1 && (sum.Held[judge.HeldBarren] == 0 || listings > 120) {
			t.Errorf("trap budget %d: %d listings, held %v; want facets held as barren, and at most 120 listings", budget, listings, sum.Held)
		}
		if sum.Released == 0 || listings > unbounded/2 {
			t.Errorf("trap budget %d: %d listings fetched and %d held URLs released; want some released, and at most half the %d listings fetched without a budget",
				budget, listings, sum.Released, unbounded)
		}
	}
}

// TestLoginWallCostsLittle crawls a shop whose every product links three
// member-only actions that redirect to its login page (synthweb.GatedShop),
// the products found a page of listing at a time. The login page, a
// near-duplicate under each of its URLs, is learnt as a wall, and so are
// the actions that redirect to it (judge's walls.go): every product is
// fetched, the host is not cut off as a trap, and the wall costs a few
// dozen requests of the 1,401 its URLs number, although the login page
// links a page of its own family (which gives the family a trap budget of
// its own). Without walls the login pages, fetched in a run, cut the host
// off with 16 products found; with the wall's URLs released by the
// family's budget, after 53 login pages. A category's later pages read as
// its first (near-duplicates that list other products): their links are
// followed (16 products, host cut off, when they were not). A login page
// found nearer the seeds than the first one is a copy all the same (when
// it was taken for a distinct page, the wall fell in one run in ten).
func TestLoginWallCostsLittle(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	web, shop, sum := crawlHostile(t, 6, synthweb.GatedShop)
	products, prints, logins, actions := map[string]bool{}, 0, 0, 0
	for _, r := range web.Log() {
		switch {
		case r.Addr != shop:
		case strings.HasPrefix(r.Path, "/product/") && strings.HasSuffix(r.Path, "?print=1"):
			prints++
		case strings.HasPrefix(r.Path, "/product/"):
			products[r.Path] = true
		case strings.HasPrefix(r.Path, "/login"):
			logins++
		case strings.HasPrefix(r.Path, "/cart/") || strings.HasPrefix(r.Path, "/wishlist/") || strings.HasPrefix(r.Path, "/review/"):
			actions++
		}
	}
	t.Logf("%d products, %d print views, %d login pages, %d actions; held %v; %d hosts cut off", len(products), prints, logins, actions, sum.Held, sum.Traps)
	if len(products) != synthweb.GatedShopProducts || sum.Traps != 0 {
		t.Errorf("%d products fetched of %d, %d hosts cut off as traps; want every product, and no host cut off",
			len(products), synthweb.GatedShopProducts, sum.Traps)
	}
	// A wall is learnt from 8 copies, its first two URLs and a few probes
	// are asked for all the same, and what was queued before it is dropped
	// when leased, a redirect's target too: about 12 login pages, 8 of
	// each action's 200 and 12 print views. The two walls are learnt in
	// turns, the print views' copies and the login pages' together more
	// than half of the host's last 50 pages: the copies of a wall learnt
	// do not count toward cutting the host off (it got 29 products when
	// they did).
	if logins > 20 || actions > 3*20 || prints > 20 || sum.Held[judge.HeldCopies] == 0 {
		t.Errorf("%d login pages, %d actions and %d print views asked for, %d URLs held as copies; want at most 20, 60, 20 and some held",
			logins, actions, prints, sum.Held[judge.HeldCopies])
	}
}

// TestBlogVariantsCostLittle: a WordPress blog of 240 posts under slugs of
// words, each with its reply links (?replytocom=, 3 to 8), AMP and print
// views and three share buttons that redirect out of the crawl: more than
// nine variants a post, each post a URL pattern and a dated family of its
// own, which neither a shape's wall nor a family's budget bound. Learnt
// as what they add to the page that links them, the variants are walls
// of copies and an offsite redirector for the whole host after a few
// posts: about 670 requests, some 60 of them variants, 247 feeds. Before, the variants' copies
// cut the host off with 59 posts not fetched, after 1,651 requests, 1,269
// of them variants.
func TestBlogVariantsCostLittle(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	web, blog, sum := crawlHostile(t, 8, synthweb.WordPress)
	posts, variants := map[string]bool{}, map[string]int{}
	requests, feeds, forPrograms := 0, 0, 0
	for _, r := range web.Log() {
		if r.Addr != blog {
			continue
		}
		requests++
		path, query, _ := strings.Cut(r.Path, "?")
		switch {
		case strings.HasSuffix(path, "/feed/"):
			feeds++
		case strings.HasPrefix(path, "/wp-json/") || path == "/xmlrpc.php":
			forPrograms++
			continue
		}
		if query == "" {
			posts[path] = true
			continue
		}
		name, _, _ := strings.Cut(query, "=")
		variants[name]++
	}
	missing := 0
	for i := range synthweb.WordPressPosts {
		if !posts[synthweb.WordPressPost(i)] {
			missing++
		}
	}
	t.Logf("%d requests, %d posts missing, %d feeds, %d asked for programs' data, variants asked for %v; held %v; %d hosts cut off", requests, missing, feeds, forPrograms, variants, sum.Held, sum.Traps)
	if missing != 0 || sum.Traps != 0 {
		t.Errorf("%d of %d posts not fetched, %d hosts cut off as traps; want every post, and no host cut off", missing, synthweb.WordPressPosts, sum.Traps)
	}
	// The alternates of each page for programs (its REST API record, its
	// oEmbed JSON and XML) are not followed: 725 of 1,383 requests when
	// they were. Its feeds are.
	if forPrograms != 0 || feeds < synthweb.WordPressPosts {
		t.Errorf("%d requests for programs' data, %d feeds; want none, and every post's comments feed", forPrograms, feeds)
	}
	// A wall is learnt from 8 copies, an offsite redirector from 10
	// redirects, and a few URLs probe either (fewer as they hold more),
	// with one in 50 of what was queued before they were learnt: some 25
	// reply links, 10 to 16 AMP and print views, 12 share buttons.
	if variants["replytocom"] > 40 || variants["amp"] > 20 || variants["print"] > 20 || variants["share"] > 30 {
		t.Errorf("variants asked for %v; want at most 40 reply links, 20 AMP and print views, 30 share buttons", variants)
	}
}

// TestWikiToolsCostLittle: a MediaWiki wiki of 144 articles under titles
// of words, each linking ten tools (its edit, history and information
// views, permanent link, printable view, citation, login form, talk
// page's editor, what links to it, the recent changes of what it links),
// most of them pages that say noindex,nofollow, each article's a shape
// of its own. Learnt as walls, of the shapes of their queries and of
// what they name (the article that links them), they cost a few probes
// each: about 240 requests, some 90 of them tools. Before, 1,205 requests,
// 1,053 of them tools.
func TestWikiToolsCostLittle(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	web, wiki, sum := crawlHostile(t, 8, synthweb.MediaWiki)
	articles := map[string]bool{}
	requests, tools := 0, 0
	for _, r := range web.Log() {
		if r.Addr != wiki {
			continue
		}
		requests++
		switch rest, ok := strings.CutPrefix(r.Path, "/wiki/"); {
		case ok && !strings.Contains(rest, ":"):
			articles[rest] = true
		case strings.HasPrefix(r.Path, "/w/index.php"), strings.HasPrefix(r.Path, "/wiki/Special:WhatLinksHere/"),
			strings.HasPrefix(r.Path, "/wiki/Special:RecentChangesLinked/"):
			tools++
		}
	}
	t.Logf("%d requests, %d articles, %d tools; held %v", requests, len(articles), tools, sum.Held)
	if len(articles) != synthweb.MediaWikiArticles+1 || sum.Traps != 0 {
		t.Errorf("%d of %d articles and the main page fetched, %d hosts cut off; want every one, and no host cut off", len(articles), synthweb.MediaWikiArticles+1, sum.Traps)
	}
	if tools > 150 {
		t.Errorf("%d tools asked for; want at most 150 (1,440 are linked)", tools)
	}
}

// crawlHostile crawls, from its seed, a web of one ordinary host and one
// of kind whose robots.txt is not found, and returns the web, the
// hostile host's address and the crawl's summary.
func crawlHostile(t *testing.T, seed int64, kind string) (*synthweb.Web, string, Summary) {
	t.Helper()
	web := startWeb(t, synthweb.Config{Seed: seed, Hosts: 1, PagesPerHost: 4, HostileKinds: []string{kind},
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	cfg := testConfig(t, web, 8, 0)
	cfg.Seeds = web.HostileSeeds()
	return web, hostileHost(t, web, kind).Addr, runCrawl(t, cfg)
}

// TestPathFacetsBounded crawls a shop whose facets are in the path
// (synthweb.PathFacetShop): each set of filters under every order it can
// be set in. The segments its facets append are learnt path modifiers,
// and the facet pages of a category are one family, bounded by the trap
// budget as a faceted search's query is: every product is fetched, the
// host is not cut off, and the listings cost a part of what they cost
// without a budget.
func TestPathFacetsBounded(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	var unbounded int
	for _, budget := range []int{-1, judge.DefaultTrapBudget} {
		web := startWeb(t, synthweb.Config{Seed: 5, Hosts: 1, PagesPerHost: 4, HostileKinds: []string{synthweb.PathFacetShop},
			RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
		shop := hostileHost(t, web, synthweb.PathFacetShop).Addr
		cfg := testConfig(t, web, 8, 0)
		cfg.Seeds = web.HostileSeeds()
		cfg.TrapBudget = budget
		sum := runCrawl(t, cfg)
		products, listings := map[string]bool{}, map[string]bool{}
		for _, r := range web.Log() {
			switch {
			case r.Addr != shop:
			case strings.HasPrefix(r.Path, "/product/"):
				products[r.Path] = true
			case strings.HasPrefix(r.Path, "/shop/"):
				listings[r.Path] = true
			}
		}
		t.Logf("trap budget %2d: %d products, %d listings; held %v, %d released; %d hosts cut off", budget, len(products), len(listings), sum.Held, sum.Released, sum.Traps)
		if budget < 0 {
			unbounded = len(listings)
			continue
		}
		if len(products) != synthweb.FacetShopProducts || sum.Traps != 0 {
			t.Errorf("trap budget %d: %d of %d products fetched, %d hosts cut off; want every product, and no host cut off", budget, len(products), synthweb.FacetShopProducts, sum.Traps)
		}
		if sum.Held[judge.HeldPath] == 0 || 2*len(listings) > unbounded {
			t.Errorf("trap budget %d: %d listings (%d without a budget), held %v; want facets held, and half the listings at most", budget, len(listings), unbounded, sum.Held)
		}
	}
}

// TestForumListingsReadAlike crawls a phpBB board (synthweb.Forum) whose
// listings read as its template, each a near-duplicate of the first, and
// differ in the topics they link by the numbers in their query
// (viewtopic.php?f=2&t=2031): their links are followed all the same, and
// every topic is fetched; and each topic's pages, linked with and
// without the forum's id, are each fetched twice at most, without the
// host being cut off as a trap.
func TestForumListingsReadAlike(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	web, board, sum := crawlHostile(t, 8, synthweb.Forum)
	topics, pages := map[string]bool{}, map[string]int{}
	requests, asked := 0, 0
	for _, r := range web.Log() {
		if r.Addr != board {
			continue
		}
		requests++
		if u, err := url.Parse(r.Path); err == nil && u.Path == "/viewtopic.php" && u.Query().Has("t") && r.Status == http.StatusOK {
			q := u.Query()
			topics[q.Get("t")] = true
			pages[q.Get("t")+" "+cmp.Or(q.Get("start"), "0")+" "+q.Get("view")]++
			asked++
		}
	}
	t.Logf("%d requests, %d topics, %d topic pages asked for %d times; held %v, rejected %v; %d hosts cut off",
		requests, len(topics), len(pages), asked, sum.Held, sum.Rejected, sum.Traps)
	if want := synthweb.ForumForums * synthweb.ForumTopics; len(topics) < want || sum.Traps != 0 {
		t.Errorf("%d of %d topics fetched, %d hosts cut off; want every topic, and no host cut off", len(topics), want, sum.Traps)
	}
	for page, n := range pages {
		if n > 2 {
			t.Errorf("topic page %q asked for %d times; want twice at most", page, n)
		}
	}
}

// TestFilterShopCopiesCutTheirDirectory crawls a small shop whose filters
// are in its paths, in the order clicked (synthweb.FilterShop): listings
// of the same few products read alike, and those with every filter set
// link nothing new, so a crawl that walks one category's filters depth
// first meets a run of copies, all under that category's filter. That
// directory is cut off, not the host: every product is fetched, those of
// the categories' second pages too, found after the cut (when the host
// was cut off, 68 of the 100 were), and the listings, bounded by the cuts
// and by their path families' budgets, cost some 400 of the shop's 4,000
// or so (473 with no cut at all). The same shop with its filters written
// as names and values (synthweb.FilterPairShop) learns its pairs as path
// modifiers: every product, for some 500 listings (76 products and 657
// listings when a pair was no unit, and eight directories, then the host,
// were cut off).
func TestFilterShopCopiesCutTheirDirectory(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	for kind, most := range map[string]int{synthweb.FilterShop: 450, synthweb.FilterPairShop: 550} {
		web, shop, sum := crawlHostile(t, 3, kind)
		products, listings := map[string]bool{}, 0
		for _, r := range web.Log() {
			switch {
			case r.Addr != shop:
			case strings.HasPrefix(r.Path, "/p/"):
				products[r.Path] = true
			case strings.HasPrefix(r.Path, "/c/"):
				listings++
			}
		}
		t.Logf("%s: %d products, %d listings; cut off %v; held %v", kind, len(products), listings, sum.TrapHosts, sum.Held)
		if want := synthweb.FilterShopCategories * synthweb.FilterShopPerCat; len(products) != want {
			t.Errorf("%s: %d of %d products fetched (cut off: %v)", kind, len(products), want, sum.TrapHosts)
		} else if listings > most {
			t.Errorf("%s: %d listings asked for, want at most %d", kind, listings, most)
		}
		if kind == synthweb.FilterShop && len(sum.TrapHosts) == 0 {
			t.Errorf("%s: nothing cut off, want the directories of the listings' copies", kind)
		}
		for _, cut := range sum.TrapHosts {
			if _, dir, _ := strings.Cut(cut, "/"); !strings.HasPrefix(dir, "c/") {
				t.Errorf("%s: %s cut off, want directories of the shop's listings only", kind, cut)
			}
		}
	}
}

// TestSearchesCostLittle crawls a news site whose articles name their
// people as links to its search (synthweb.Newsroom): some four searches
// for each article, whose results fill in the search box, and lead
// nowhere once the section listings have found the articles. Every
// article is fetched, and the searches cost less than the articles do:
// links into a shape of searches wait behind the host's other pages, and
// the searches leased then that lead nowhere, wallBarren in a row, make
// a wall of their shape.
func TestSearchesCostLittle(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	web, site, sum := crawlHostile(t, 8, synthweb.Newsroom)
	articles, searches := newsroomLog(web, site)
	t.Logf("%d articles, %d searches; held %v", len(articles), searches, sum.Held)
	if len(articles) != synthweb.NewsroomArticles || sum.Traps != 0 {
		t.Errorf("%d of %d articles fetched, %d hosts cut off; want every one, and no host cut off", len(articles), synthweb.NewsroomArticles, sum.Traps)
	}
	if searches > 200 {
		t.Errorf("%d searches asked for; want at most 200 (some 800 are linked)", searches)
	}
}

// TestSearchesLeadWhereNothingElseDoes crawls the news site without its
// listings' later pages (excluded), so that most articles are linked only
// from searches: the searches are fetched while they lead somewhere, and
// every article the crawl without a trap budget finds is found.
func TestSearchesLeadWhereNothingElseDoes(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	var found [2]int
	for i, budget := range []int{-1, judge.DefaultTrapBudget} {
		web := startWeb(t, synthweb.Config{Seed: 8, Hosts: 1, PagesPerHost: 4, HostileKinds: []string{synthweb.Newsroom},
			RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
		cfg := testConfig(t, web, 8, 0)
		cfg.Seeds = web.HostileSeeds()
		cfg.Scope.Exclude = []string{`[?&]page=`}
		cfg.TrapBudget = budget
		sum := runCrawl(t, cfg)
		articles, searches := newsroomLog(web, hostileHost(t, web, synthweb.Newsroom).Addr)
		t.Logf("trap budget %d: %d articles, %d searches; held %v", budget, len(articles), searches, sum.Held)
		found[i] = len(articles)
	}
	if found[1] != found[0] || found[0] <= 60 {
		t.Errorf("%d articles fetched, %d without a trap budget; want as many, and more than the listings' first pages hold (60)", found[1], found[0])
	}
}

// TestMissingPagesCostLittle crawls the news site, whose every article
// links a print view that is no more (404) and its comments, a page for
// one article in ten and 404 for the rest: the print views' shape
// becomes a wall after a few, and every page of comments is fetched.
func TestMissingPagesCostLittle(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	web, site, _ := crawlHostile(t, 8, synthweb.Newsroom)
	prints, comments := 0, map[string]bool{}
	for _, r := range web.Log() {
		switch {
		case r.Addr != site:
		case strings.HasPrefix(r.Path, "/print.php"):
			prints++
		case strings.HasPrefix(r.Path, "/comments") && r.Status == http.StatusOK:
			comments[r.Path] = true
		}
	}
	t.Logf("%d print views asked for, %d pages of comments fetched", prints, len(comments))
	if want := synthweb.NewsroomArticles / synthweb.NewsroomCommented; len(comments) != want {
		t.Errorf("%d pages of comments fetched, want every one (%d)", len(comments), want)
	}
	if prints > 50 {
		t.Errorf("%d print views asked for; want at most 50 (%d are linked, every one missing)", prints, synthweb.NewsroomArticles)
	}
}

// newsroomLog reads the articles and the searches asked of the news site
// at addr from web's log.
func newsroomLog(web *synthweb.Web, addr string) (articles map[string]bool, searches int) {
	articles = map[string]bool{}
	for _, r := range web.Log() {
		switch {
		case r.Addr != addr:
		case strings.HasPrefix(r.Path, "/search"):
			searches++
		case strings.Count(r.Path, "/") == 3 && strings.Contains(r.Path, "-"):
			articles[r.Path] = true
		}
	}
	return articles, searches
}

// TestWithdrawnObjectsLoseNoObject crawls a museum's collection whose
// index lists every object number, the oldest forty first, withdrawn and
// each answering one page that says so: their shape becomes a wall of
// copies before the objects after them are leased. The objects the wall
// meets queued are held, not dropped: if its probes (one in wallProbe, by
// hash) find enough objects distinct, it falls and releases them, and
// every object is fetched, as without a trap budget; if they do not (a
// run whose workers leased the objects before any probe was weighed),
// the objects not fetched are held, for a crawl that goes on or the next
// run. Before, they were dropped, and 13 of the 260 were lost even when
// the wall fell.
func TestWithdrawnObjectsLoseNoObject(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	web, site, sum := crawlHostile(t, 9, synthweb.Collection)
	objects, withdrawn := map[string]bool{}, 0
	for _, r := range web.Log() {
		if r.Addr != site || !strings.HasPrefix(r.Path, "/object?") || r.Status != http.StatusOK {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(r.Path, "/object?id="))
		if n <= synthweb.CollectionWithdrawn {
			withdrawn++
		} else {
			objects[r.Path] = true
		}
	}
	t.Logf("%d objects, %d withdrawn numbers asked for; held %v, rejected %v", len(objects), withdrawn, sum.Held, sum.Rejected)
	want := synthweb.CollectionObjects - synthweb.CollectionWithdrawn
	missing := int64(want - len(objects))
	if sum.Held[judge.HeldCopies] == 0 || sum.Rejected[judge.HeldCopies] != 0 || sum.Held[judge.HeldCopies]-sum.Released < missing {
		t.Errorf("%d of %d objects fetched; held %v, %d released, %d dropped as copies; want the wall to hold URLs, dropping none, and every object not fetched held",
			len(objects), want, sum.Held, sum.Released, sum.Rejected[judge.HeldCopies])
	}
	if sum.Released > 0 && missing != 0 {
		t.Errorf("the wall fell (%d released), and %d of %d objects fetched; want every one", sum.Released, len(objects), want)
	}
}
