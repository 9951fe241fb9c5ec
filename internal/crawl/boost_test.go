package crawl

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/importance"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/state"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// boostSite serves synthweb.BoostSite (forty plain pages linked before
// ten news pages) and logs the paths asked for, in order, robots.txt
// aside.
func boostSite(t *testing.T) (*httptest.Server, func() []string) {
	var (
		mu    sync.Mutex
		order []string
	)
	site := synthweb.BoostSite()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			mu.Lock()
			order = append(order, r.URL.Path)
			mu.Unlock()
		}
		site.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), order...)
	}
}

// boostCrawl crawls srv with the operator's policy for its host.
func boostCrawl(t *testing.T, srv *httptest.Server, p policy.Policy) Config {
	set := policy.NewSet(policy.Limits{})
	if err := set.Put(strings.TrimPrefix(srv.URL, "http://"), p); err != nil {
		t.Fatal(err)
	}
	cfg := bare(Config{Seeds: []string{srv.URL + "/"}, DataDir: t.TempDir(), Workers: 2, UserAgent: "weft/test (+https://example.org/weft-crawler)", Policies: set})
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.NoSitemaps = true
	runCrawl(t, cfg)
	return cfg
}

// TestBoostedPatternGoesFirst: an operator's pattern boost on /news/*
// puts the host's news pages before the plain pages linked before them,
// as the server's log shows; each page is still asked for once.
func TestBoostedPatternGoesFirst(t *testing.T) {
	srv, order := boostSite(t)
	boostCrawl(t, srv, policy.Policy{Boosts: []policy.PatternBoost{{Pattern: "/news/*", Factor: 8}}})
	pages := order()
	if len(pages) != 51 {
		t.Fatalf("server saw %d page requests, want the 51 pages once each: %v", len(pages), pages)
	}
	for i, p := range pages[1:11] {
		if !strings.HasPrefix(p, "/news/") {
			t.Fatalf("request %d was %s: want the ten boosted news pages right after the home page: %v", i+1, p, pages)
		}
	}
}

// TestHostBoostTakesTheHighQueue: a host boost strong enough lifts the
// host's links to the high front queue: their leases, as their records
// keep them, were high priority, at the boosted rank.
func TestHostBoostTakesTheHighQueue(t *testing.T) {
	srv, order := boostSite(t)
	cfg := boostCrawl(t, srv, policy.Policy{Boost: 64})
	if n := len(order()); n != 51 {
		t.Fatalf("server saw %d page requests, want 51", n)
	}
	d, _, err := state.Open(cfg.DataDir, 0, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	// The home page's unit, over its fifty links, and the depth prior:
	// 13, which is not high; 64 times that is.
	want := importance.Boost(importance.Rank(importance.Unit/50, 1), 64)
	for _, path := range []string{"/plain00", "/news/09"} {
		rec, ok, err := d.DB.GetURL(uint16(partition.Of(host, d.Partitions())), host, seen.KeyOf(srv.URL+path))
		if err != nil || !ok || rec.Status != store.URLDone || rec.Priority != uint8(frontier.High) || rec.Rank != want {
			t.Errorf("%s: %+v (found %v, %v): want fetched from the high queue at rank %d", path, rec, ok, err, want)
		}
	}
}
