package main

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/memnet"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// TestDemoEndsWithItsLastPage: the demo's own web, crawled as the demo
// does at a delay of 1.5 s (as on a busy machine, where a crawl takes
// minutes), drains about when its last page is fetched. It used to wait
// an hour after it: a link to a host whose robots.txt answered 503 with
// "Retry-After: 3600" came after that verdict had expired, and was queued
// behind the host's hour. The crawl runs on fake time (synctest) over an
// in-memory network, so that an hour's wait would cost nothing but fail
// the test.
func TestDemoEndsWithItsLastPage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := memnet.New()
		f := demoFlags{hosts: 120, pages: 25, workers: 64, seed: 1, delay: 1500 * time.Millisecond}
		wcfg := demoWeb(f)
		wcfg.Network = net
		web, err := synthweb.Start(wcfg)
		if err != nil {
			t.Fatal(err)
		}
		defer web.Close()
		cfg, err := demoConfig(web, t.TempDir(), f.workers, f.delay)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Fetch.Dialer = net
		c, err := crawl.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		sum, err := c.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		end := time.Now()
		var last time.Time
		for _, r := range web.Log() {
			if r.Status > 0 && r.Status < 500 && r.Status != 429 && r.End.After(last) {
				last = r.End
			}
		}
		t.Logf("%s after %v: %d pages; the last answer at %v", sum.StoppedBy, end.Sub(start), sum.Pages, last.Sub(start))
		if sum.StoppedBy != "drained" {
			t.Errorf("stopped by %s, want drained", sum.StoppedBy)
		}
		// The last page's gap, and the requests still out then (the
		// demo's timeouts: 10 s at the most), and no more.
		if tail := end.Sub(last); tail > 15*time.Second {
			t.Errorf("the crawl drained %v after its last answered request", tail)
		}
		if a := synthweb.Audit(web, f.delay); !a.OK() {
			t.Errorf("impolite:\n%+v", a)
		}
	})
}
