package crawl

import (
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// TestEveryCopyIsAccountedFor: a web whose hosts' robots.txt answers
// 404, 503 or never, crawled to its end. URLs are queued again as their
// importance rises, on every host, and the hosts whose robots.txt cannot
// be had drain, dropping what they have queued. Every second entry is
// found stale when leased, whatever its host's mode, and counted as a
// copy gone: once the crawl has drained, as many are gone as were made,
// which the queued count (copiesQueued) needs.
func TestEveryCopyIsAccountedFor(t *testing.T) {
	web := startWeb(t, synthweb.Config{
		Seed: 11, Hosts: 12, PagesPerHost: 30, HangLimit: 200 * time.Millisecond,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound, synthweb.RobotsServerError, synthweb.RobotsTimeout},
	})
	c, sum := runCrawler(t, testConfig(t, web, 8, 0))
	drained := sum.Rejected[judge.Unreachable]
	t.Logf("%s: %d pages, %d URLs queued again, %d copies found stale, %d URLs dropped as their hosts drained", sum.StoppedBy, sum.Pages, sum.Requeued, sum.Rejected["requeued"], drained)
	if sum.StoppedBy != "drained" || sum.Requeued == 0 || drained == 0 {
		t.Fatalf("stopped by %s, %d queued again, %d dropped with draining hosts: the world does not make copies on hosts that drain", sum.StoppedBy, sum.Requeued, drained)
	}
	if made, gone := c.stats.requeued.Load(), c.stats.droppedCopies.Load(); made != gone {
		t.Errorf("%d copies made and %d gone in a drained crawl, want as many", made, gone)
	}
}
