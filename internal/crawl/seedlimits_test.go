package crawl

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seeds"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/state"
	"github.com/weft-crawler/weft/internal/store"
)

// linkPage answers an HTML page that links to each of hrefs.
func linkPage(rw http.ResponseWriter, hrefs ...string) {
	rw.Header().Set("Content-Type", "text/html")
	var b strings.Builder
	b.WriteString("<html><body>")
	for _, h := range hrefs {
		fmt.Fprintf(&b, `<a href="%s">%s</a> `, h, h)
	}
	b.WriteString("</body></html>")
	rw.Write([]byte(b.String()))
}

// seedWeb is three sites: a.test with a /docs/ chain and pages outside
// it, b.test with ten pages that all link to each other, and c.test,
// whose front page links to b.test/shared, to a.test's front page and to
// one page of its own.
func seedWeb(t *testing.T) *miniWeb {
	return newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/docs/":
				linkPage(rw, "/docs/p1", "/", "/blog/", w.url("c.test", "/"))
			case "/docs/p1":
				linkPage(rw, "/docs/p2", "/blog/p1")
			case "/docs/p2":
				linkPage(rw, "/docs/p3")
			default:
				linkPage(rw, "/docs/", "/blog/p2")
			}
		},
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			var hrefs []string
			for i := range 10 {
				hrefs = append(hrefs, fmt.Sprintf("/p%d", i))
			}
			linkPage(rw, append(hrefs, "/shared")...)
		},
		"c.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				linkPage(rw, "/q1", w.url("b.test", "/shared"), w.url("a.test", "/"))
			default:
				linkPage(rw)
			}
		},
	})
}

// pagePaths are the paths host was asked for, robots.txt left out.
func (mw *miniWeb) pagePaths(host string) []string {
	return slices.DeleteFunc(mw.paths(host), func(p string) bool { return p == "/robots.txt" })
}

// seedStatus finds url's status in the summary.
func seedStatus(t *testing.T, sum Summary, url string) seeds.Status {
	t.Helper()
	for _, s := range sum.SeedStatus {
		if s.URL == url {
			return s
		}
	}
	t.Fatalf("no status for seed %s in %+v", url, sum.SeedStatus)
	return seeds.Status{}
}

// TestSeedLimits: three seeds with their own limits crawl what each
// allows, as the servers saw it. a.test/docs/ (prefix scope, depth 2)
// gets /docs/, p1 and p2, and neither /docs/p3 (depth 3) nor anything
// outside /docs/ on its host, nor c.test it links to; b.test/ (a budget
// of 3 pages) gets 3 of its 12 pages and the crawl still drains; c.test/
// (the crawl's limits) gets its pages and b.test/shared, which the
// crawl's scope holds as b.test is a seed, but not a.test/, which a seed
// with its own scope does not add to the crawl's. The summary says each
// seed's state and counts.
func TestSeedLimits(t *testing.T) {
	mw := seedWeb(t)
	a, b, c := mw.url("a.test", "/docs/"), mw.url("b.test", "/"), mw.url("c.test", "/")
	cfg := mw.config(t, 0, a, b, c)
	cfg.SeedOptions = map[string]seeds.Options{
		a: {Scope: scope.Prefix, MaxDepth: 2},
		b: {MaxPages: 3},
	}
	sum := runCrawl(t, cfg)
	if got, want := mw.pagePaths("a.test"), []string{"/docs/", "/docs/p1", "/docs/p2"}; !slices.Equal(got, want) {
		t.Errorf("a.test was asked for %v, want %v: the seed's prefix scope and depth 2", got, want)
	}
	// b.test/shared counts against the seed that found it first: c's when
	// c.test/ was read before b.test/, and b.test then serves it beside
	// the 3 pages of its own seed's budget.
	sc := seedStatus(t, sum, c)
	want := 3
	if sc.Pages == 3 {
		want = 4
	}
	if got := mw.pagePaths("b.test"); len(got) != want {
		t.Errorf("b.test was asked for %d pages %v, want %d: its seed's budget of 3 (c's seed has %d pages)", len(got), got, want, sc.Pages)
	}
	if got, want := mw.pagePaths("c.test"), []string{"/", "/q1"}; !slices.Equal(got, want) {
		t.Errorf("c.test was asked for %v, want %v", got, want)
	}
	if sum.StoppedBy != "drained" {
		t.Errorf("stopped by %q, want drained: a seed past its budget must not hold the crawl", sum.StoppedBy)
	}
	if sum.Rejected[judge.SeedBudget] == 0 {
		t.Errorf("no URL counted as %s: %v", judge.SeedBudget, sum.Rejected)
	}
	sa, sb := seedStatus(t, sum, a), seedStatus(t, sum, b)
	if sa.State != seeds.Done || sa.Pages != 3 || sa.Bytes == 0 {
		t.Errorf("a: %+v, want done with 3 pages", sa)
	}
	if sb.State != seeds.Limit || sb.Pages != 3 || sb.Dropped == 0 {
		t.Errorf("b: %+v, want limit with 3 pages and some dropped", sb)
	}
	// c.test's pages, and b.test/shared unless b's seed found it first.
	if sc.State != seeds.Done || sc.Pages < 2 {
		t.Errorf("c: %+v, want done with 2 or 3 pages", sc)
	}
	if tot := sum.SeedTotals; tot.Seeds != 3 || tot.WithOptions != 2 || tot.Limit != 1 || tot.Done != 2 || tot.Pages != sum.Pages {
		t.Errorf("totals %+v, want 3 seeds, 2 with options, 1 at its limit, 2 done, %d pages", tot, sum.Pages)
	}
	// The pages of b.test not fetched are recorded as dropped for the
	// seed's budget.
	st, _, err := state.Open(cfg.DataDir, 0, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	served := mw.pagePaths("b.test")
	dropped := 0
	for _, path := range []string{"/", "/p0", "/p1", "/p2", "/p3", "/p4", "/p5", "/p6", "/p7", "/p8", "/p9", "/shared"} {
		u := mw.url("b.test", path)
		rec, found, err := st.DB.GetURL(uint16(partition.Of(mw.auth["b.test"], st.Partitions())), mw.auth["b.test"], seen.KeyOf(u))
		switch {
		case err != nil || !found:
			t.Errorf("%s: no record (%v)", u, err)
		case slices.Contains(served, path):
		case rec.Status != store.URLRejected || rec.LastOutcome != judge.SeedBudget:
			t.Errorf("%s, not fetched: status %v, outcome %q; want rejected, %s", u, rec.Status, rec.LastOutcome, judge.SeedBudget)
		default:
			dropped++
		}
	}
	if dropped == 0 || int64(dropped) != sb.Dropped {
		t.Errorf("%d URL records say %s, the seed's status %d", dropped, judge.SeedBudget, sb.Dropped)
	}
	var out strings.Builder
	sum.Write(&out)
	if !strings.Contains(out.String(), b+"  limit: 3 pages") {
		t.Errorf("printed summary does not name the seed at its limit:\n%s", out.String())
	}
}

// TestSeedSharedURLCountsOnce: b.test/shared, linked from two seeds'
// pages, is fetched once and counted against one seed: the seeds' pages
// add up to the crawl's, and to what the servers served.
func TestSeedSharedURLCountsOnce(t *testing.T) {
	mw := seedWeb(t)
	b, c := mw.url("b.test", "/"), mw.url("c.test", "/")
	sum := runCrawl(t, mw.config(t, 0, b, c))
	shared := 0
	for _, p := range mw.pagePaths("b.test") {
		if p == "/shared" {
			shared++
		}
	}
	if shared != 1 {
		t.Errorf("b.test/shared fetched %d times, want 1", shared)
	}
	served := len(mw.pagePaths("b.test")) + len(mw.pagePaths("c.test"))
	sb, sc := seedStatus(t, sum, b), seedStatus(t, sum, c)
	if sb.Pages+sc.Pages != int64(served) || sum.Pages != int64(served) {
		t.Errorf("seeds counted %d + %d pages, the crawl %d, the servers served %d: a page must count once, against one seed",
			sb.Pages, sc.Pages, sum.Pages, served)
	}
	// c.test's own two, and maybe the shared page; b.test's are b's.
	if sc.Pages < 2 || sc.Pages > 3 || sb.Pages < 11 {
		t.Errorf("b %d pages, c %d: want b.test's own pages against b, c.test's against c", sb.Pages, sc.Pages)
	}
}

// TestSeedBudgetSurvivesRestart: a crawl stopped by the crawl's page cap
// after 2 pages of a seed whose budget is 4, then resumed without the
// cap, fetches 2 more of the seed's pages and no more: the count is
// stored with the pages, and read back with the seed.
func TestSeedBudgetSurvivesRestart(t *testing.T) {
	mw := seedWeb(t)
	b := mw.url("b.test", "/")
	cfg := mw.config(t, 0, b)
	cfg.Workers = 1
	cfg.SeedOptions = map[string]seeds.Options{b: {MaxPages: 4}}
	cfg.MaxPages = 2
	if sum := runCrawl(t, cfg); sum.StoppedBy != "max-pages" {
		t.Fatalf("first run stopped by %q, want max-pages", sum.StoppedBy)
	}
	if got := mw.pagePaths("b.test"); len(got) != 2 {
		t.Fatalf("first run: b.test asked for %v, want 2 pages", got)
	}
	cfg.MaxPages = 0
	sum := runCrawl(t, cfg)
	if got := mw.pagePaths("b.test"); len(got) != 4 {
		t.Errorf("both runs: b.test asked for %d pages %v, want 4: the seed's budget, spent across a restart", len(got), got)
	}
	if s := seedStatus(t, sum, b); s.Pages != 4 || s.State != seeds.Limit {
		t.Errorf("after the restart: %+v, want 4 pages, at its limit", s)
	}
}

// TestSeedFailing: a seed whose host's robots.txt cannot be fetched
// (503 every time) is failing, with its errors counted, beside a seed
// that is done.
func TestSeedFailing(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"ok.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(rw, r)
				return
			}
			linkPage(rw)
		},
		"down.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			http.Error(rw, "down", http.StatusServiceUnavailable)
		},
	})
	ok, down := mw.url("ok.test", "/"), mw.url("down.test", "/")
	sum := runCrawl(t, mw.config(t, 0, ok, down))
	if got := mw.pagePaths("down.test"); len(got) != 0 {
		t.Errorf("down.test asked for %v besides its robots.txt", got)
	}
	if s := seedStatus(t, sum, down); s.State != seeds.Failing || s.Errors == 0 || s.Pages != 0 {
		t.Errorf("the seed whose robots.txt is unreachable: %+v, want failing with an error", s)
	}
	if s := seedStatus(t, sum, ok); s.State != seeds.Done || s.Pages != 1 {
		t.Errorf("the seed that answered: %+v, want done with 1 page", s)
	}
	if sum.SeedTotals.Failing != 1 || sum.SeedTotals.Done != 1 {
		t.Errorf("totals %+v", sum.SeedTotals)
	}
}
