package crawl

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/synthweb"
)

// BenchmarkCrawl crawls the synthetic web (in this process, so its CPU is
// counted too: weft bench runs it in a child process instead) at delay 0
// and reports pages/s. One op is one whole crawl of maxPages pages.
func BenchmarkCrawl(b *testing.B) {
	// Robots kinds that answer at once and set no Crawl-delay: a throughput
	// figure, not a politeness one (see weft bench).
	web, err := synthweb.Start(synthweb.Config{Seed: 1, Hosts: 200, PagesPerHost: 40, RobotsKinds: []synthweb.RobotsKind{
		synthweb.RobotsRules, synthweb.RobotsAgentGroup, synthweb.RobotsNotFound, synthweb.RobotsRedirect, synthweb.RobotsNone}})
	if err != nil {
		b.Fatal(err)
	}
	defer web.Close()
	const maxPages = 5000
	var pages int64
	var elapsed time.Duration
	for b.Loop() {
		dir, err := os.MkdirTemp(b.TempDir(), "crawl-")
		if err != nil {
			b.Fatal(err)
		}
		cfg := testConfig(b, web, 64, 0)
		cfg.DataDir = dir
		cfg.MaxPages = maxPages
		c, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		sum, err := c.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		pages += sum.Pages
		elapsed += sum.Elapsed
		os.RemoveAll(dir)
	}
	b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages/s")
}
