package crawl

import (
	"testing"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// A host cache of four over two dozen hosts evicts hosts all along: their
// caps and robots.txt answers must still hold exactly, as the servers'
// log shows, and memory must hold no more hosts than the bound.
func TestTinyHostCacheKeepsCapsAndRobotsRules(t *testing.T) {
	t.Parallel() // mostly waiting on a silent robots.txt
	web := startWeb(t, synthweb.Config{Seed: 21, Hosts: 24, PagesPerHost: 12, MinPageBytes: 4 << 10, MaxPageBytes: 6 << 10, MinLinks: 10, MaxLinks: 20})
	cfg := testConfig(t, web, 8, 0)
	cfg.MaxURLsPerHost = 5
	cfg.HostCache = 4
	cfg.Partitions = 2
	// The web's silent robots.txt times out (3 s); the latency rule would
	// then hold its host five times that before the second attempt, 15 s
	// in which nothing else is left to do. From MinBackoff (1 s) the
	// second attempt comes as soon, for what this test checks.
	cfg.Politeness.LatencyFactor = -1
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	pages := map[string]int{} // URLs asked for: a server error's second try is no other URL
	for _, r := range synthweb.FirstTries(web.Log()) {
		if isRobotsPath(r.Path) {
			continue
		}
		pages[r.Host]++
		if u := "http://" + r.Host + r.Path; !web.Allowed(u) {
			t.Errorf("requested %s, which its robots.txt disallows", u)
		}
	}
	if len(pages) < 12 {
		t.Fatalf("pages fetched from %d hosts; the test wants many more than the cache holds", len(pages))
	}
	for host, n := range pages {
		if int64(n) > cfg.MaxURLsPerHost {
			t.Errorf("%s: %d pages fetched, cap %d", host, n, cfg.MaxURLsPerHost)
		}
	}
	if n := c.hostCap.Len(); n > cfg.HostCache {
		t.Errorf("%d hosts' counters in memory, bound %d", n, cfg.HostCache)
	}
	if n := c.robots.Len(); n > cfg.HostCache {
		t.Errorf("%d origins' robots.txt answers in memory, bound %d", n, cfg.HostCache)
	}
}

// The URLs accepted per host (the host cap's count) and its 429 and 5xx
// counts go on after a restart instead of starting again at zero.
func TestHostCountsSurviveRestart(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 22, Hosts: 6, PagesPerHost: 12, MinPageBytes: 4 << 10, MaxPageBytes: 6 << 10, MinLinks: 10, MaxLinks: 20,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	cfg := testConfig(t, web, 4, 0)
	cfg.MaxURLsPerHost = 5
	cfg.HostCache = 2 // most hosts are evicted during the run, the rest saved at close
	cfg.Partitions = 1
	runCrawl(t, cfg)
	fetched := map[string]int64{}
	for _, r := range synthweb.FirstTries(web.Log()) {
		if !isRobotsPath(r.Path) {
			fetched[r.Host]++
		}
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Resumed() {
		t.Fatal("second run did not resume")
	}
	for host, n := range fetched {
		st, _ := c.hostCap.Get(host)
		// Every page fetched was accepted first; the cap counts URLs
		// accepted, and reached it on every host of this web.
		if st.Accepted < n || st.Accepted < cfg.MaxURLsPerHost {
			t.Errorf("%s after the restart: %+v accepted, %d fetched before it, cap %d", host, st, n, cfg.MaxURLsPerHost)
		}
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// runCrawlHeld runs a crawl and checks that it ended with at most
// cfg.HostCache hosts' states and robots.txt answers in memory (when it
// sets one).
func runCrawlHeld(t *testing.T, cfg Config) Summary {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HostCache > 0 {
		if n := c.hostCap.Len(); n > cfg.HostCache {
			t.Errorf("%d hosts' states in memory, bound %d", n, cfg.HostCache)
		}
		if n := c.robots.Len(); n > cfg.HostCache {
			t.Errorf("%d origins' robots.txt answers in memory, bound %d", n, cfg.HostCache)
		}
	}
	return sum
}

// A host cut off as a near-duplicate trap refuses new URLs after its
// state left memory: admission reads it back from the store for a URL the
// seen set has not seen.
func TestCutHostRefusedAfterEviction(t *testing.T) {
	cfg := Config{Seeds: []string{"http://seed.test/"}, DataDir: t.TempDir(), UserAgent: "weft/test", HostCache: 1, Partitions: 1}
	cfg.Scope.Mode = "any"
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.close(0) })
	pb := c.state.NewBatch()
	for range c.cfg.NearDupTrapWindow {
		c.judge.JudgedPage(pb.Batch, "copies.test", canon.URL{}, "", "http://copies.test/")
	}
	c.hostCap.Get("other.test") // evicts copies.test
	if _, inMemory := c.hostCap.Peek("copies.test"); inMemory {
		t.Fatal("copies.test still in memory")
	}
	u, err := c.canon.Parse("http://copies.test/day/2")
	if err != nil {
		t.Fatal(err)
	}
	if why := c.admit(pb, judge.Candidate{URL: u, Depth: 1, Priority: frontier.Normal, Via: "http://seed.test/", As: judge.AsPageLink}); why != judge.Trap {
		t.Fatalf("a new URL of a host cut off, its state evicted: %q, want %q", why, judge.Trap)
	}
}
