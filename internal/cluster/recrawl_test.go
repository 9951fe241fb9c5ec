package cluster

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// TestClusterRecrawl: two nodes crawl continuously (weft serve), a third
// joins and takes its share of the partitions. A page is due again only
// once the recrawl policy's Min has passed since its last visit, whichever
// node made it; so, from the server's log, no page is asked for twice
// within Min, across the handoffs too; and the new owner asks for a page
// another node fetched with that node's validators, which the server
// answers 304.
func TestClusterRecrawl(t *testing.T) {
	ns := startNATS(t)
	const (
		hosts    = 24
		livePer  = 2
		minVisit = 3 * time.Second
	)
	web := startWeb(t, synthweb.Config{Seed: 43, Hosts: hosts, PagesPerHost: 4, MinLinks: 10, MaxLinks: 12,
		LivePages: livePer, LiveIntervals: []time.Duration{0}, // never change: each recrawl is a 304
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	serve := func(name string) func(*crawl.Config) {
		return func(c *crawl.Config) {
			c.UserAgent = "weft/" + name + " (+https://example.org/weft-crawler)"
			c.Recrawl = &recrawl.Policy{Min: minVisit, Max: 2 * minVisit, Prior: 1}
			c.RecrawlScan = 100 * time.Millisecond
		}
	}
	nodes := map[string]*runningNode{}
	for _, name := range []string{"a", "b"} {
		nodes[name] = startNodeWith(t, ns, web, name, 4, serve(name))
	}
	liveURL := func(r synthweb.Request) bool { return strings.HasPrefix(r.Path, "/live/") }
	// Every live page visited twice (the second a 304) before c joins.
	waitLog(t, web, "every live page fetched twice", func(log []synthweb.Request) bool {
		n := map[string]int{}
		for _, r := range log {
			if liveURL(r) {
				n[r.Host+r.Path]++
			}
		}
		twice := 0
		for _, c := range n {
			if c >= 2 {
				twice++
			}
		}
		return twice == hosts*livePer
	})
	joined := time.Now()
	nodes["c"] = startNodeWith(t, ns, web, "c", 4, serve("c"))
	// c takes its share (2 or 3 of 8 partitions), with some of the 24
	// hosts in it (all of them out of it: one chance in a thousand).
	var cHosts int
	waitLog(t, web, "c's share", func([]synthweb.Request) bool {
		owned := nodes["c"].node.Owned()
		cHosts = 0
		for _, h := range web.Hosts() {
			if _, ok := owned[partition.Of(h.Authority, testParts)]; ok {
				cHosts++
			}
		}
		return len(owned) >= testParts/3
	})
	t.Logf("c holds %d partitions, with %d of the %d hosts", len(nodes["c"].node.Owned()), cHosts, hosts)
	if cHosts == 0 {
		t.Fatalf("c holds %v, partitions with none of the %d hosts: nothing to show", nodes["c"].node.Owned(), hosts)
	}
	// c visits pages a and b fetched before: conditionally, answered 304.
	waitLog(t, web, "c's visits of live pages", func(log []synthweb.Request) bool {
		n := 0
		for _, r := range log {
			if liveURL(r) && strings.HasPrefix(r.UserAgent, "weft/c ") {
				n++
			}
		}
		return n >= livePer
	})
	// And recrawls after the handoff: a live page c visits again.
	waitLog(t, web, "a live page visited twice by c", func(log []synthweb.Request) bool {
		n := map[string]int{}
		for _, r := range log {
			if liveURL(r) && strings.HasPrefix(r.UserAgent, "weft/c ") {
				if n[r.Host+r.Path]++; n[r.Host+r.Path] == 2 {
					return true
				}
			}
		}
		return false
	})
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(func() {
			n.node.Stop(context.Background())
			n.cancel()
			<-n.done
			n.nc.Close()
		})
	}
	wg.Wait()
	if err := web.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}

	last := map[string]synthweb.Request{}
	cVisits, c304 := 0, 0
	for _, r := range web.Log() {
		if !liveURL(r) {
			continue
		}
		u := r.Host + r.Path
		if prev, ok := last[u]; ok && r.Start.Sub(prev.Start) < minVisit-100*time.Millisecond {
			t.Errorf("%s asked by %q %v after %q asked for it, under the recrawl minimum %v", u, r.UserAgent, r.Start.Sub(prev.Start).Round(time.Millisecond), prev.UserAgent, minVisit)
		}
		if prev, ok := last[u]; ok && strings.HasPrefix(r.UserAgent, "weft/c ") && !strings.HasPrefix(prev.UserAgent, "weft/c ") {
			t.Logf("%s: c's first visit %v after %q's", u, r.Start.Sub(prev.Start).Round(time.Millisecond), prev.UserAgent[:6])
		}
		last[u] = r
		if strings.HasPrefix(r.UserAgent, "weft/c ") {
			cVisits++
			if r.Status == 304 {
				c304++
			}
		}
	}
	t.Logf("c joined at %s; c visited live pages %d times, %d answered 304", joined.Format("15:04:05.000"), cVisits, c304)
	if cVisits == 0 || c304 != cVisits {
		t.Errorf("c visited live pages %d times, %d of them answered 304: want every one conditional on what a and b learnt", cVisits, c304)
	}
	audit := synthweb.Audit(web, testDelay)
	for _, s := range audit.Breaches() {
		t.Errorf("politeness: %s", s)
	}
}
