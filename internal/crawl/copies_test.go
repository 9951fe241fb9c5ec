package crawl

import (
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/synthweb"
)

// TestEveryCopyIsAccountedFor: a web whose hosts' robots.txt answers
// 404, 503 or never, crawled to its end. URLs are queued again as their
// importance rises, on every host, and each second entry goes: found
// stale when leased, or taken with its host when the host drains (its
// robots.txt unreachable, so everything disallowed). Once the crawl has
// drained, none is left to subtract from the queued count
// (copiesQueued), which is exact only if every way a copy goes is
// counted.
func TestEveryCopyIsAccountedFor(t *testing.T) {
	web := startWeb(t, synthweb.Config{
		Seed: 11, Hosts: 12, PagesPerHost: 30, HangLimit: 200 * time.Millisecond,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound, synthweb.RobotsServerError, synthweb.RobotsTimeout},
	})
	c, sum := runCrawler(t, testConfig(t, web, 8, 0))
	stale := sum.Rejected["requeued"]
	t.Logf("%s: %d pages, %d URLs queued again, %d copies found stale, the others taken with their hosts", sum.StoppedBy, sum.Pages, sum.Requeued, stale)
	if sum.StoppedBy != "drained" || sum.Requeued == 0 || stale >= sum.Requeued {
		t.Fatalf("stopped by %s, %d queued again, %d found stale: the world does not make copies its hosts' drops take", sum.StoppedBy, sum.Requeued, stale)
	}
	if made, gone := c.stats.requeued.Load(), c.stats.droppedCopies.Load(); made != gone {
		t.Errorf("%d copies made and %d gone in a drained crawl, want as many", made, gone)
	}
}
