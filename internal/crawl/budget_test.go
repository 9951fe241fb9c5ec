package crawl

import (
	"fmt"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// serverCounts sorts the requests the synthetic web received by what they
// were for, as the server saw them: robots.txt, sitemaps, requisites (the
// favicon and the images under /img/, which its ordinary pages embed) and
// the rest, pages; and the favicon requests per host.
type serverCounts struct {
	robots, sitemaps, requisites, favicons, pages int
	faviconsByHost                                map[string]int
}

func countRequests(web *synthweb.Web) serverCounts {
	n := serverCounts{faviconsByHost: map[string]int{}}
	for _, r := range web.Log() {
		switch {
		case r.Path == "/robots.txt":
			n.robots++
		case strings.HasPrefix(r.Path, "/sitemap"):
			n.sitemaps++
		case r.Path == "/favicon.ico":
			n.favicons++
			n.requisites++
			n.faviconsByHost[r.Host]++
		case strings.HasPrefix(r.Path, "/img/"):
			n.requisites++
		default:
			n.pages++
		}
	}
	return n
}

// budgetConfig is a crawl of web with requisites and sitemaps on, stopped
// by the page budget.
func budgetConfig(t *testing.T, web *synthweb.Web, maxPages int64) Config {
	cfg := testConfig(t, web, 4, 0)
	cfg.NoRequisites, cfg.NoSitemaps = false, false
	cfg.MaxPages = maxPages
	return cfg
}

// TestMaxPagesCountsOnlyPages: a crawl whose MaxPages is just the pages
// of the web requests all of them, and every requisite and sitemap
// besides, as the server counts them: those do not eat the page budget.
// The summary, JSON and printed, reports each apart.
func TestMaxPagesCountsOnlyPages(t *testing.T) {
	t.Parallel() // judged by what was requested, not when
	webCfg := synthweb.Config{Seed: 4, Hosts: 3, PagesPerHost: 8, MinLinks: 10, MaxLinks: 20}
	web := startWeb(t, webCfg)
	runCrawl(t, budgetConfig(t, web, 0))
	all := countRequests(web)
	if all.requisites == 0 || all.sitemaps == 0 {
		t.Fatalf("a whole crawl made %d requisite and %d sitemap requests; the test needs both", all.requisites, all.sitemaps)
	}

	web = startWeb(t, webCfg)
	sum := runCrawl(t, budgetConfig(t, web, int64(all.pages)))
	n := countRequests(web)
	t.Logf("server saw %d pages, %d requisites (%d favicons), %d sitemaps, %d robots.txt", n.pages, n.requisites, n.favicons, n.sitemaps, n.robots)
	if n.pages != all.pages || n.requisites != all.requisites || n.sitemaps != all.sitemaps || sum.StoppedBy != "drained" {
		t.Errorf("with --max-pages %d: %d pages, %d requisites, %d sitemaps, stopped by %q; want %d, %d, %d, drained: requisites and sitemaps must not count as pages",
			all.pages, n.pages, n.requisites, n.sitemaps, sum.StoppedBy, all.pages, all.requisites, all.sitemaps)
	}
	if sum.Pages != int64(n.pages) || sum.RequisiteFetches != int64(n.requisites) || sum.SitemapFetches != int64(n.sitemaps) {
		t.Errorf("summary: %d pages, %d requisites, %d sitemaps; server saw %d, %d and %d", sum.Pages, sum.RequisiteFetches, sum.SitemapFetches, n.pages, n.requisites, n.sitemaps)
	}
	var b strings.Builder
	sum.Write(&b)
	if want := fmt.Sprintf(" %d pages (", n.pages); !strings.Contains(b.String(), want) ||
		!strings.Contains(b.String(), fmt.Sprintf(" %d requisites, %d sitemaps, ", n.requisites, n.sitemaps)) {
		t.Errorf("printed summary does not report pages, requisites and sitemaps apart:\n%s", b.String())
	}
}

// TestMaxRequisitesStopsRequisitesNotPages: past MaxRequisites, requisites
// and sitemaps are dropped unrequested and counted, and the crawl goes on
// with pages until it drains.
func TestMaxRequisitesStopsRequisitesNotPages(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 4, Hosts: 3, PagesPerHost: 8, MinLinks: 10, MaxLinks: 20})
	const maxRequisites = 2
	cfg := budgetConfig(t, web, 0)
	cfg.MaxRequisites = maxRequisites
	sum := runCrawl(t, cfg)
	n := countRequests(web)
	t.Logf("server saw %d pages, %d requisites (%d favicons), %d sitemaps, %d robots.txt", n.pages, n.requisites, n.favicons, n.sitemaps, n.robots)
	if got := n.requisites + n.sitemaps; got != maxRequisites {
		t.Errorf("server saw %d requisite and %d sitemap requests; want %d in all", n.requisites, n.sitemaps, maxRequisites)
	}
	if sum.StoppedBy != "drained" || n.pages < 3*8 || sum.Pages != int64(n.pages) {
		t.Errorf("stopped by %q after %d page requests (summary: %d); want a drained crawl of every page", sum.StoppedBy, n.pages, sum.Pages)
	}
	if sum.Rejected[judge.RequisiteBudget] == 0 {
		t.Errorf("rejections %v: want the requisites past the budget counted as %s", sum.Rejected, judge.RequisiteBudget)
	}
}

// TestFaviconOncePerHost: a crawl that drains asks each host whose pages
// it read for /favicon.ico once, however many of its pages name no icon.
func TestFaviconOncePerHost(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 4, Hosts: 3, PagesPerHost: 8, MinLinks: 10, MaxLinks: 20})
	sum := runCrawl(t, budgetConfig(t, web, 0))
	n := countRequests(web)
	t.Logf("server saw %d pages, %d requisites (%d favicons), %d sitemaps, %d robots.txt", n.pages, n.requisites, n.favicons, n.sitemaps, n.robots)
	if sum.StoppedBy != "drained" || n.pages < 3*2 {
		t.Fatalf("stopped by %q after %d page requests; the test needs a drained crawl of several pages a host", sum.StoppedBy, n.pages)
	}
	if len(n.faviconsByHost) != 3 {
		t.Errorf("favicons asked of %d hosts (%v), want all 3", len(n.faviconsByHost), n.faviconsByHost)
	}
	for host, k := range n.faviconsByHost {
		if k != 1 {
			t.Errorf("%s: /favicon.ico asked for %d times, want once", host, k)
		}
	}
	if sum.Pages != int64(n.pages) || sum.RequisiteFetches != int64(n.requisites) || sum.SitemapFetches != int64(n.sitemaps) {
		t.Errorf("summary: %d pages, %d requisites, %d sitemaps; server saw %d, %d and %d", sum.Pages, sum.RequisiteFetches, sum.SitemapFetches, n.pages, n.requisites, n.sitemaps)
	}
}
