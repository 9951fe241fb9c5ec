package crawl

import (
	"context"
	"testing"
	"time"

	"weft/internal/recrawl"
	"weft/internal/synthweb"
)

// TestMissingSitemapOnRobotsSchedule runs the continuous mode over a host
// whose /sitemap.xml answers 404, for many times the recrawl interval:
// the server sees /sitemap.xml asked for once, since it is retried on the
// robots.txt schedule (once per RobotsTTL), not recrawled as a page, while
// the pages themselves are fetched again.
func TestMissingSitemapOnRobotsSchedule(t *testing.T) {
	web, err := synthweb.Start(synthweb.Config{
		Seed: 19, Hosts: 1, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}, NoSitemap: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	cfg := testConfig(t, web, 2, 10*time.Millisecond)
	cfg.NoSitemaps = false
	cfg.RobotsTTL = time.Hour
	cfg.Recrawl = &recrawl.Policy{Min: 100 * time.Millisecond, Max: 500 * time.Millisecond, Prior: 1}
	cfg.RecrawlScan = 20 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, r := range web.Log() {
		counts[r.Path]++
		if r.Path == "/sitemap.xml" && r.Status != 404 {
			t.Fatalf("/sitemap.xml answered %d", r.Status)
		}
	}
	t.Logf("in 3 s: /sitemap.xml %d requests, robots.txt %d, / %d", counts["/sitemap.xml"], counts["/robots.txt"], counts["/"])
	if counts["/sitemap.xml"] != 1 {
		t.Errorf("/sitemap.xml (404) requested %d times within one robots TTL; want 1", counts["/sitemap.xml"])
	}
	if counts["/"] < 3 {
		t.Errorf("/ requested %d times: the pages were not recrawled, so the test shows nothing", counts["/"])
	}
}
