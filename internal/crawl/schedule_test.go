package crawl

import (
	"context"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
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
	// The crawl runs until / has been fetched three times and five times
	// Max has passed (many times the recrawl interval), however slow the
	// machine; the minute is a bound against a hang.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(ctx)
		done <- err
	}()
	stopped := false
	defer func() {
		if !stopped { // the wait failed: stop the crawl before the test ends
			cancel()
			<-done
		}
	}()
	testwait.Eventually(t, 50*time.Second, "/ requested 3 times", func() bool {
		n := 0
		for _, r := range web.Log() {
			if r.Path == "/" {
				n++
			}
		}
		return n >= 3 && time.Since(start) >= 5*cfg.Recrawl.Max
	})
	cancel()
	err = <-done
	stopped = true
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start).Round(10 * time.Millisecond)
	counts := map[string]int{}
	for _, r := range web.Log() {
		counts[r.Path]++
		if r.Path == "/sitemap.xml" && r.Status != 404 {
			t.Fatalf("/sitemap.xml answered %d", r.Status)
		}
	}
	t.Logf("in %v: /sitemap.xml %d requests, robots.txt %d, / %d", took, counts["/sitemap.xml"], counts["/robots.txt"], counts["/"])
	if counts["/sitemap.xml"] != 1 {
		t.Errorf("/sitemap.xml (404) requested %d times within one robots TTL; want 1", counts["/sitemap.xml"])
	}
	if counts["/"] < 3 {
		t.Errorf("/ requested %d times: the pages were not recrawled, so the test shows nothing", counts["/"])
	}
}
