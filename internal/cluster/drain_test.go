package cluster

import (
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/natstest"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// TestClusterDrains: nodes of a crawl that ends stop by themselves once
// the whole cluster's crawl has drained, each with its summary saying so,
// and none before every page is fetched, though the test tries to make
// one: a node joins with seeds of its own just as the others have
// fetched every page they know (before the drain can be stable), and a
// node's link to NATS stops carrying anything for a moment while it has
// links to log.
func TestClusterDrains(t *testing.T) {
	ns := startNATS(t)
	web1 := startWeb(t, synthweb.Config{Seed: 51, Hosts: 8, PagesPerHost: 6, MinLinks: 10, MaxLinks: 12, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	web2 := startWeb(t, synthweb.Config{Seed: 52, Hosts: 8, PagesPerHost: 6, MinLinks: 10, MaxLinks: 12, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	drain := func(c *Config) { c.Drain = true }
	resolve := map[string]string{}
	for _, w := range []*synthweb.Web{web1, web2} {
		for h, ip := range w.Resolve() {
			resolve[h] = ip
		}
	}
	seeds := func(w *synthweb.Web) func(*crawl.Config) {
		return func(c *crawl.Config) { c.Seeds, c.Fetch.Resolve = w.Seeds(), resolve }
	}
	link := natstest.NewLink(t, ns.Addr().String())
	nodes := []*runningNode{startNodeAt(t, ns.ClientURL(), nil, "a", 4, seeds(web1), drain, false),
		startNodeAt(t, link.URL(), nil, "b", 4, seeds(web1), drain, false)}
	type exit struct {
		name           string
		at             time.Time
		sum            crawl.Summary
		left1, left2   int
		total1, total2 int
	}
	exits := make(chan exit, 3)
	watch := func(n *runningNode) {
		go func() {
			<-n.finished
			sum := <-n.done
			e := exit{name: n.name, at: time.Now(), sum: sum}
			got, want := progress(web1)
			e.left1, e.total1 = want-got, want
			got, want = progress(web2)
			e.left2, e.total2 = want-got, want
			n.done <- sum // for the cleanup
			exits <- e
		}()
	}
	for _, n := range nodes {
		watch(n)
	}
	waitProgress(t, web1, 1)
	c := startNodeAt(t, ns.ClientURL(), nil, "c", 4, seeds(web2), drain, false)
	watch(c)
	waitProgress(t, web2, 0.5)
	link.Cut()
	cut := time.Now()
	for time.Since(cut) < time.Second { // b's workers wait to log their links
		select {
		case e := <-exits:
			t.Fatalf("%s stopped while b was cut off: %+v", e.name, e)
		case <-time.After(50 * time.Millisecond):
		}
	}
	link.Restore()
	for range 3 {
		select {
		case e := <-exits:
			last := time.Time{}
			for _, w := range []*synthweb.Web{web1, web2} {
				for _, r := range w.Log() {
					last = later(last, r.Start)
				}
			}
			t.Logf("%s stopped %v after the last request: %s, %d pages", e.name, e.at.Sub(last).Round(time.Millisecond), e.sum.StoppedBy, e.sum.Pages)
			if e.left1+e.left2 > 0 || e.sum.StoppedBy != "drained" {
				t.Errorf("%s stopped (%s) with %d of %d and %d of %d pages not fetched", e.name, e.sum.StoppedBy, e.left1, e.total1, e.left2, e.total2)
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("the nodes did not all stop by themselves")
		}
	}
}
