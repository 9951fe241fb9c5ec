package cluster

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

// TestTakeOverAfterCrashKeepsCrawlDelay: hosts whose robots.txt asks for a
// Crawl-delay longer than the lease TTL. The node that makes the first
// page request (a or b) is killed just after it; the other takes its
// partitions over once their leases expire, sooner than the Crawl-delay.
// It must still wait the Crawl-delay the dead node learnt
// (kept per host in the cluster), though it knows nothing of the dead
// node's last request: from the server's log, no host has a gap under its
// Crawl-delay, the first requests after the takeover included.
func TestTakeOverAfterCrashKeepsCrawlDelay(t *testing.T) {
	ns := startNATS(t)
	const crawlDelay = 2500 * time.Millisecond // > testTTL: without the kept clocks b would ask within ~TTL of a's last request
	web := startWeb(t, synthweb.Config{Seed: 41, Hosts: 4, PagesPerHost: 3, MinLinks: 10, MaxLinks: 12,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsCrawlDelay}, CrawlDelay: crawlDelay})
	agent := func(name string) func(*crawl.Config) {
		return func(c *crawl.Config) { c.UserAgent = "weft/" + name + " (+https://example.org/weft-crawler)" }
	}
	nodes := map[string]*runningNode{}
	for _, name := range []string{"a", "b"} {
		nodes[name] = startNodeWith(t, ns, web, name, 4, agent(name))
	}

	// The node that makes the first page request dies just after it has
	// reached the server.
	var dead, live *runningNode
	testwait.Eventually(t, time.Minute, "a page request", func() bool {
		for _, r := range web.Log() {
			if !strings.HasPrefix(r.Path, "/robots") {
				name := strings.TrimPrefix(strings.Fields(r.UserAgent)[0], "weft/")
				dead, live = nodes[name], nodes[map[string]string{"a": "b", "b": "a"}[name]]
				return true
			}
		}
		return false
	})
	dead.cancel()
	dead.node.Kill()
	<-dead.done
	dead.nc.Close()
	killed := time.Now()

	// The other takes the dead node's hosts over: wait until it has asked
	// each of them twice since the kill (the second after the
	// Crawl-delay).
	testwait.EventuallyNil(t, time.Minute, live.name+" taking "+dead.name+"'s hosts over", func() error {
		deadHosts, asked := map[string]bool{}, map[string]int{}
		for _, r := range web.Log() {
			if strings.HasPrefix(r.UserAgent, "weft/"+dead.name+" ") {
				deadHosts[r.Addr] = true
			} else if r.Start.After(killed) {
				asked[r.Addr]++
			}
		}
		for h := range deadHosts {
			if asked[h] < 2 {
				return fmt.Errorf("%s asked %v, %s since the kill %v", dead.name, deadHosts, live.name, asked)
			}
		}
		return nil
	})
	live.node.Stop(context.Background())
	live.cancel()
	<-live.done
	live.nc.Close()
	if err := web.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	audit := synthweb.Audit(web, testDelay)
	for _, s := range audit.Breaches() {
		t.Errorf("politeness: %s", s)
	}
	t.Logf("%d requests to %d hosts, shortest gap %v (Crawl-delay %v, lease TTL %v)", audit.Requests, audit.Hosts, audit.MinGap, crawlDelay, testTTL)
}

// TestLeaseTakenAgainWaitsForItsTakeover: a node hands a partition over
// whose release waits for a request out (an external fetcher's lease),
// so that its handoffs queue behind it; it is then cut off from NATS
// and fenced; another node takes a partition p of its once the lease has
// expired, asks one of p's hosts, and gives p back; the node, its link
// back, takes p again before its old lease's release has even begun. It
// must not ask p's hosts before the new lease's own takeover (that
// release, then the kept clocks and one delay). Before, p's hosts were
// still let go from the old takeover and the new lease passed the claim:
// the node asked right after the other node had.
func TestLeaseTakenAgainWaitsForItsTakeover(t *testing.T) {
	const delay = 600 * time.Millisecond // under TTL/2
	type req struct {
		host, path, agent string
		start, end        time.Time
	}
	var mu sync.Mutex
	var log []req
	fastReqs := make(chan req, 1000)
	handler := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			rq := req{host: name, path: r.URL.Path, agent: r.UserAgent(), start: time.Now()}
			defer func() {
				rq.end = time.Now()
				mu.Lock()
				log = append(log, rq)
				mu.Unlock()
				if name == "fast" {
					fastReqs <- rq
				}
			}()
			n, _ := strconv.Atoi(strings.Trim(r.URL.Path, "/e"))
			switch {
			case r.URL.Path == "/robots.txt":
				http.NotFound(w, r)
			case name == "slow":
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, `<html><body>slow %d <a href="/e%d">next</a></body></html>`, n, n+1)
			default:
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, `<html><body>page %d <a href="/%d">next</a> <a href="/%d">after</a></body></html>`, n, n+1, n+2)
			}
		}
	}
	asked := func(host, path string) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(log, func(r req) bool { return r.host == host && r.path == path })
	}
	s := startStuckReleases(t, delay, handler, asked)
	b, crawler, p := s.b, s.b.node.Crawler(), s.p

	// b is cut off and fences itself; p's lease expires; x takes p, asks
	// the fast host (more than TTL/2 after b's last request: politely)
	// and gives p back.
	rev := s.cutAndTake(t)
	for drained := false; !drained; { // what b asked before
		select {
		case <-fastReqs:
		default:
			drained = true
		}
	}
	s.askFast(t, "/x")
	<-fastReqs // x's own
	s.giveBack(t, rev)
	testwait.Eventually(t, 30*time.Second, "b taking p again", func() bool { return b.node.owners.Has(p) })
	// p's old release has not begun (it waits behind q's): the new
	// lease's takeover has not either, so b asks nothing of p's hosts.
	// (Before the fix it asked within a second: the hold its refused
	// claims had left.)
	window := time.After(2 * time.Second)
	for waiting := true; waiting; {
		select {
		case r := <-fastReqs:
			t.Errorf("b asked the fast host for %s before its takeover of the partition it took again", r.path)
		case <-window:
			waiting = false
		}
	}
	if err := crawler.CompleteExternal(s.ext[0].ID, s.ext[0].URL, 200, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fastReqs:
	case <-time.After(30 * time.Second):
		t.Fatal("b did not go on with the fast host")
	}
	b.node.Stop(context.Background())
	b.cancel()
	<-b.done
	mu.Lock()
	defer mu.Unlock()
	var rs []req
	for _, r := range log {
		if r.host == "fast" {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b req) int { return a.start.Compare(b.start) })
	for i := 1; i < len(rs); i++ {
		if gap := rs[i].start.Sub(rs[i-1].start); gap < delay || rs[i].start.Before(rs[i-1].end) {
			t.Errorf("fast host: %s by %s started %v after %s by %s; want at least %v", rs[i].path, rs[i].agent, gap, rs[i-1].path, rs[i-1].agent, delay)
		}
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
