package crawl

import (
	"testing"

	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// walkQueues counts the queue entries of a crawl's state by walking them.
func walkQueues(t *testing.T, dataDir string) int64 {
	t.Helper()
	db, err := store.Open(store.Dir(dataDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	for p := range 3 {
		c, err := db.CountFront(uint8(p))
		if err != nil {
			t.Fatal(err)
		}
		n += int64(c)
	}
	type hp struct {
		part uint16
		host string
	}
	var hosts []hp
	if err := db.QueuedHosts(func(part uint16, host string) bool { hosts = append(hosts, hp{part, host}); return true }); err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		c, err := db.CountQueue(h.part, h.host)
		if err != nil {
			t.Fatal(err)
		}
		n += int64(c)
	}
	t.Logf("%d queue entries, %d hosts with a tail", n, len(hosts))
	if stored, ok := db.Queued(); !ok || stored != n {
		t.Errorf("the reopened store counts %d queue entries (known %v), %d walked", stored, ok, n)
	}
	return n
}

// TestQueueCountFollowsTheCrawl: the store's queue count is the number of
// queue entries a real crawl leaves, with hosts' tails spilled to disk (a
// head of 4 URLs, 2 active hosts), when it stops with URLs queued, and
// zero once the next run has drained them.
func TestQueueCountFollowsTheCrawl(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 25, Hosts: 6, PagesPerHost: 40, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	cfg := testConfig(t, web, 3, 0)
	cfg.HeadSize, cfg.MaxActiveHosts, cfg.MaxPages = 4, 2, 60
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	stored := c.Live().Stored
	if stored == nil || *stored == 0 {
		t.Fatalf("queue count %v after stopping at 60 pages, want the URLs left", stored)
	}
	if walked := walkQueues(t, cfg.DataDir); walked != *stored {
		t.Errorf("the crawl counted %d queue entries, %d are on disk", *stored, walked)
	}

	cfg.MaxPages = 0
	c, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if first := c.Live().Stored; first == nil || *first != *stored {
		t.Errorf("restarted: queue count %v before it runs, want %d", first, *stored)
	}
	if _, err := c.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := c.Live().Stored; n == nil || *n != 0 {
		t.Errorf("queue count %v after the drain, want 0", n)
	}
	if walked := walkQueues(t, cfg.DataDir); walked != 0 {
		t.Errorf("%d queue entries left after the drain", walked)
	}
}
