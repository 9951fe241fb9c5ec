package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"weft/internal/crawl"
	wjs "weft/internal/jetstream"
	"weft/internal/natstest"
	"weft/internal/partition"
	"weft/internal/recrawl"
	"weft/internal/synthweb"
	"weft/internal/testwait"
)

// TestMain checks that no test leaves goroutines behind, but one that
// nats.go v1.55.0 itself leaves at times: its object store's Put makes a
// JetStream context per call, whose reconnect watcher, if it first runs
// after Put has cleaned the context up, waits on a nil channel for good
// (one goroutine per such Put; snapshots are put every few minutes).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"))
}

func startNATS(t *testing.T) *server.Server { return startNATSB(t) }

func startNATSB(t testing.TB) *server.Server { return natstest.Start(t) }

// startWeb starts a synthetic web, closed when the test ends.
func startWeb(t testing.TB, cfg synthweb.Config) *synthweb.Web {
	t.Helper()
	web, err := synthweb.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	return web
}

type runningNode struct {
	name     string
	node     *Node
	nc       *nats.Conn
	cancel   context.CancelFunc
	done     chan crawl.Summary
	finished chan struct{} // closed once Run has returned
}

const (
	testParts = 8
	testDelay = 40 * time.Millisecond
	testTTL   = 2 * time.Second
)

func startNode(t *testing.T, ns *server.Server, web *synthweb.Web, name string) *runningNode {
	return startNodeTB(t, ns, web, name, 4)
}

// startNodeTB starts a node of workers workers and a 40 ms delay on web.
func startNodeTB(t testing.TB, ns *server.Server, web *synthweb.Web, name string, workers int) *runningNode {
	t.Helper()
	return startNodeWith(t, ns, web, name, workers, nil)
}

// startNodeWith starts a node as startNodeTB does, its crawl's config
// changed by edit.
func startNodeWith(t testing.TB, ns *server.Server, web *synthweb.Web, name string, workers int, edit func(*crawl.Config)) *runningNode {
	t.Helper()
	return startNodeConfig(t, ns, web, name, workers, edit, nil)
}

// startNodeConfig starts a node as startNodeWith does, its own config
// changed by nedit.
func startNodeConfig(t testing.TB, ns *server.Server, web *synthweb.Web, name string, workers int, edit func(*crawl.Config), nedit func(*Config)) *runningNode {
	t.Helper()
	return startNodeOpts(t, ns, web, name, workers, edit, nedit, false)
}

// startNodeOpts starts a node as startNodeConfig does, its crawl paused
// from the start if paused (Resume it).
func startNodeOpts(t testing.TB, ns *server.Server, web *synthweb.Web, name string, workers int, edit func(*crawl.Config), nedit func(*Config), paused bool) *runningNode {
	t.Helper()
	return startNodeAt(t, ns.ClientURL(), web, name, workers, edit, nedit, paused)
}

// startNodeAt starts a node as startNodeOpts does, connected to NATS at
// url.
func startNodeAt(t testing.TB, url string, web *synthweb.Web, name string, workers int, edit func(*crawl.Config), nedit func(*Config), paused bool) *runningNode {
	t.Helper()
	nc, js := natstest.Connect(t, url)
	cc := crawl.Config{DataDir: t.TempDir(), Workers: workers, Delay: testDelay, Grace: time.Millisecond,
		UserAgent: "weft/test (+https://example.org/weft-crawler)", NoSitemaps: true}
	if web != nil { // else edit names the seeds and how their hosts resolve
		cc.Seeds, cc.Fetch.Resolve = web.Seeds(), web.Resolve()
	}
	cc.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	if edit != nil {
		edit(&cc)
	}
	ncfg := Config{Node: name, Partitions: testParts, TTL: testTTL, Crawl: cc}
	if nedit != nil {
		nedit(&ncfg)
	}
	n, err := Start(t.Context(), js, ncfg)
	if err != nil {
		t.Fatal(err)
	}
	if paused {
		n.Crawler().Operator().Pause()
	}
	ctx, cancel := context.WithCancel(context.Background())
	rn := &runningNode{name: name, node: n, nc: nc, cancel: cancel, done: make(chan crawl.Summary, 1), finished: make(chan struct{})}
	t.Cleanup(func() { // a test that failed half way leaves no node running, nor writing to its data directory
		n.Kill()
		cancel()
		<-rn.finished
		nc.Close()
	})
	go func() {
		defer close(rn.finished)
		sum, err := n.Run(ctx)
		if err != nil {
			t.Errorf("node %s: %v", name, err)
		}
		rn.done <- sum
	}()
	return rn
}

// progress is how many of the pages a polite crawl fetches were fetched.
func progress(web *synthweb.Web) (got, want int) {
	fetched := pageRequests(web)
	for _, p := range web.AllPages() {
		if shouldFetch(p) {
			want++
			if fetched[p.URL] > 0 {
				got++
			}
		}
	}
	return got, want
}

func pageRequests(web *synthweb.Web) map[string]int {
	auth := map[string]string{}
	for _, h := range web.Hosts() {
		auth[h.Addr] = h.Authority
	}
	n := map[string]int{}
	for _, r := range web.Log() {
		if len(r.Path) >= 7 && r.Path[:7] == "/robots" {
			continue
		}
		n["http://"+auth[r.Addr]+r.Path]++
	}
	return n
}

func shouldFetch(p synthweb.PageInfo) bool {
	return p.Reachable && !p.Disallowed && p.Role != "image" && p.Role != "pdf"
}

func waitProgress(t *testing.T, web *synthweb.Web, share float64) {
	t.Helper()
	testwait.EventuallyNil(t, 2*time.Minute, fmt.Sprintf("%.0f%% of the pages fetched", share*100), func() error {
		if got, want := progress(web); float64(got) < share*float64(want) {
			return fmt.Errorf("%d of %d pages fetched", got, want)
		}
		return nil
	})
}

// TestClusterCrawl: three nodes crawl one web through one JetStream
// server; one is killed mid-crawl (no goodbye: its leases run out) and a
// fourth joins later (partitions handed over to it). From the servers'
// log: every page is fetched, none twice but what the killed node had in
// flight, and no host ever has two requests at once or a gap under the
// delay, across the kill and the handoffs.
func TestClusterCrawl(t *testing.T) {
	ns := startNATS(t)
	web := startWeb(t, synthweb.Config{Seed: 28, Hosts: 24, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound, synthweb.RobotsRules}})

	var nodes []*runningNode
	for _, name := range []string{"a", "b", "c"} {
		nodes = append(nodes, startNode(t, ns, web, name))
	}
	waitProgress(t, web, 0.3)

	// c dies: its crawl stops at once, its leases stay until they expire.
	c := nodes[2]
	c.cancel()
	c.node.Kill()
	<-c.done
	c.nc.Close()
	killedAt := time.Now()
	before := pageRequests(web)

	waitProgress(t, web, 0.5)
	d := startNode(t, ns, web, "d")
	nodes = append(nodes, d)
	testwait.EventuallyNil(t, time.Minute, "d's share of the partitions", func() error {
		if o := d.node.Owned(); len(o) < testParts/3 { // its share of 8 among 3: 2 or 3
			return fmt.Errorf("d holds %v", o)
		}
		return nil
	})
	atShare, total := progress(web)
	waitProgress(t, web, 1)

	// Every partition owned by a live node, d among them (polled: a lease
	// mid-renewal on a loaded machine is briefly not valid).
	owned := map[string]int{}
	testwait.EventuallyNil(t, 30*time.Second, "every partition owned by a live node", func() error {
		for _, n := range []*runningNode{nodes[0], nodes[1], nodes[3]} {
			owned[n.name] = len(n.node.Owned())
		}
		if owned["a"]+owned["b"]+owned["d"] != testParts {
			return fmt.Errorf("partitions owned %v", owned)
		}
		return nil
	})
	sums := map[string]crawl.Summary{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range []*runningNode{nodes[0], nodes[1], nodes[3]} {
		wg.Go(func() {
			n.node.Stop(context.Background())
			n.cancel()
			sum := <-n.done
			n.nc.Close()
			mu.Lock()
			sums[n.name] = sum
			mu.Unlock()
		})
	}
	wg.Wait()
	if owned["a"]+owned["b"]+owned["d"] != testParts || owned["d"] == 0 {
		t.Errorf("partitions owned at the end %v, want all %d, some of them d's", owned, testParts)
	}
	// d took its share with pages still to fetch: some were its own.
	t.Logf("d took its share at %d of %d pages and fetched %d", atShare, total, sums["d"].Pages)
	if float64(atShare) < 0.8*float64(total) && sums["d"].Pages == 0 {
		t.Errorf("d fetched nothing, though it took its share with %d pages left", total-atShare)
	}
	if err := web.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}

	fetched := pageRequests(web)
	twice := 0
	for _, p := range web.AllPages() {
		if fetched[p.URL] > 1 {
			twice++
			t.Logf("%s fetched %d times (%d before the kill)", p.URL, fetched[p.URL], before[p.URL])
		}
	}
	got, want := progress(web)
	t.Logf("%d of %d pages fetched; %d fetched twice; killed at %s", got, want, twice, killedAt.Format("15:04:05.000"))
	if twice > 4 { // the killed node's workers: its leases in flight at the kill
		t.Errorf("%d pages fetched twice, more than the killed node's 4 leases", twice)
	}
	audit := synthweb.Audit(web, testDelay)
	for _, s := range audit.Breaches() {
		t.Errorf("politeness: %s", s)
	}
}

// TestStartRefusesOtherPartitionCount: a data directory made by a crawl of
// another partition count cannot be a node's.
func TestStartRefusesOtherPartitionCount(t *testing.T) {
	ns := startNATS(t)
	dir := t.TempDir()
	c, err := crawl.New(crawl.Config{Seeds: []string{"http://a.test/"}, DataDir: dir, UserAgent: "weft/test", Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	c.Discard()
	_, js := natstest.Connect(t, ns.ClientURL())
	_, err = Start(t.Context(), js, Config{Node: "a", Partitions: testParts, TTL: testTTL,
		Crawl: crawl.Config{Seeds: []string{"http://a.test/"}, DataDir: dir, UserAgent: "weft/test"}})
	if err == nil || !strings.Contains(err.Error(), "4 partitions") {
		t.Fatalf("Start on a crawl of 4 partitions as a node of %d: %v", testParts, err)
	}
}

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

// waitLog waits until cond holds of the web's log.
func waitLog(t *testing.T, web *synthweb.Web, what string, cond func([]synthweb.Request) bool) {
	t.Helper()
	testwait.Eventually(t, time.Minute, what, func() bool { return cond(web.Log()) })
}

// TestLinksKeepFirstOffer: a URL offered twice (a seed, then a link to it
// from a deeper page) is logged once, as first offered: a new owner
// replaying the log gets the seed, its scope and depth 0, not the link.
func TestLinksKeepFirstOffer(t *testing.T) {
	ns := startNATS(t)
	web := startWeb(t, synthweb.Config{Seed: 44, Hosts: 1, PagesPerHost: 3, MinLinks: 10, MaxLinks: 12})
	rn := startNode(t, ns, web, "a")
	const u = "http://first.test/page"
	for _, o := range []crawl.Offered{{URL: u, Depth: 0}, {URL: u, Depth: 3, Via: "http://first.test/"}} {
		if err := rn.node.forward([]crawl.Offered{o}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := rn.node.js.Stream(t.Context(), LinksStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(t.Context(), urlSubject(linksPrefix(partOf(u, testParts)), u))
	if err != nil {
		t.Fatal(err)
	}
	var o crawl.Offered
	if err := json.Unmarshal(m.Data, &o); err != nil || o.Depth != 0 || o.Via != "" {
		t.Errorf("the log keeps %+v (%v), want the first offer, at depth 0", o, err)
	}
	rn.node.Stop(context.Background())
	rn.cancel()
	<-rn.done
}

// TestRobotsHopAcrossNodes: ten hosts whose robots.txt redirects to a file
// on another host, whose rules apply to them. Where the other host is in a
// partition of the other node, that node makes the hop (under its own
// lease of that host) and sends the decision back. From the servers'
// side: every allowed page is fetched, no disallowed one, some hops were
// made by another node than the one crawling the host, and no host had
// two requests at once.
func TestRobotsHopAcrossNodes(t *testing.T) {
	ns := startNATS(t)
	type req struct {
		host, path, agent string
		start, end        time.Time
	}
	var mu sync.Mutex
	var log []req
	resolve := map[string]string{}
	auth := map[string]string{}
	const pairs = 10
	handler := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			defer func() {
				mu.Lock()
				log = append(log, req{name, r.URL.Path, r.UserAgent(), start, time.Now()})
				mu.Unlock()
			}()
			switch {
			case strings.HasPrefix(name, "a") && r.URL.Path == "/robots.txt":
				mu.Lock()
				target := "http://" + auth["b"+name[1:]] + "/rules.txt"
				mu.Unlock()
				http.Redirect(w, r, target, http.StatusMovedPermanently)
			case r.URL.Path == "/rules.txt":
				io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			case r.URL.Path == "/robots.txt":
				http.NotFound(w, r)
			case r.URL.Path == "/":
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, `<html><body><h1>%s</h1><a href="/ok">ok</a> <a href="/private">private</a></body></html>`, name) // unlike any other: no copy to skip
			default:
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, "<html><body>page %s of %s</body></html>", r.URL.Path, name)
			}
		}
	}
	var seeds []string
	for i := range pairs {
		for _, side := range []string{"a", "b"} {
			name := fmt.Sprintf("%s%d", side, i)
			srv := httptest.NewServer(handler(name))
			t.Cleanup(srv.Close)
			port := srv.Listener.Addr().(*net.TCPAddr).Port
			host := name + ".test"
			mu.Lock()
			auth[name] = fmt.Sprintf("%s:%d", host, port)
			mu.Unlock()
			resolve[host] = "127.0.0.1"
			if side == "a" {
				seeds = append(seeds, "http://"+auth[name]+"/")
			}
		}
	}
	edit := func(name string) func(*crawl.Config) {
		return func(c *crawl.Config) {
			c.Seeds = seeds
			c.UserAgent = "weft/" + name + " (+https://example.org/weft-crawler)"
			c.Fetch.Resolve = resolve
		}
	}
	// Both start paused and go on once each holds its half: the first
	// node up would otherwise hold every partition, and make every hop
	// itself, for as long as the second takes to join.
	nodes := []*runningNode{startNodeOpts(t, ns, nil, "n1", 4, edit("n1"), nil, true), startNodeOpts(t, ns, nil, "n2", 4, edit("n2"), nil, true)}
	testwait.EventuallyNil(t, time.Minute, "each node holding half the partitions", func() error {
		if o1, o2 := nodes[0].node.Owned(), nodes[1].node.Owned(); len(o1) != testParts/2 || len(o2) != testParts/2 {
			return fmt.Errorf("n1 holds %v, n2 %v", o1, o2)
		}
		return nil
	})
	for _, n := range nodes {
		n.node.Crawler().Operator().Resume()
	}
	fetched := func(name, path string) (agent string, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range log {
			if r.host == name && r.path == path {
				return r.agent, true
			}
		}
		return "", false
	}
	i := 0
	testwait.EventuallyNil(t, time.Minute, "every a<i>/ok fetched", func() error {
		for ; i < pairs; i++ {
			if _, ok := fetched(fmt.Sprintf("a%d", i), "/ok"); !ok {
				mu.Lock()
				var b strings.Builder
				for _, r := range log {
					fmt.Fprintf(&b, "%s %s %s %s\n", r.start.Format("15:04:05.000"), r.agent[:7], r.host, r.path)
				}
				mu.Unlock()
				for _, n := range nodes {
					l := n.node.Crawler().Operator().Live()
					fmt.Fprintf(&b, "%s owns %v; frontier %+v; rejected %v\n", n.name, n.node.Owned(), l.Frontier, l.Summary.Rejected)
				}
				return fmt.Errorf("a%d/ok not fetched: its robots.txt hop did not come back\n%s", i, b.String())
			}
		}
		return nil
	})
	for _, n := range nodes {
		n.node.Stop(context.Background())
		n.cancel()
		<-n.done
	}
	crossed := 0
	for i := range pairs {
		if _, ok := fetched(fmt.Sprintf("a%d", i), "/private"); ok {
			t.Errorf("a%d/private fetched, though b%d/rules.txt, its robots.txt, disallows it", i, i)
		}
		robotsBy, _ := fetched(fmt.Sprintf("a%d", i), "/robots.txt")
		rulesBy, ok := fetched(fmt.Sprintf("b%d", i), "/rules.txt")
		if !ok {
			t.Errorf("b%d/rules.txt never fetched", i)
		}
		if robotsBy != rulesBy {
			crossed++
		}
	}
	t.Logf("%d of %d robots.txt hops made by the other node", crossed, pairs)
	if crossed == 0 {
		t.Error("no hop crossed nodes: the test showed nothing (one chance in a thousand)")
	}
	mu.Lock()
	defer mu.Unlock()
	byHost := map[string][]req{}
	for _, r := range log {
		byHost[r.host] = append(byHost[r.host], r)
	}
	for host, rs := range byHost {
		slices.SortFunc(rs, func(a, b req) int { return a.start.Compare(b.start) })
		for i := 1; i < len(rs); i++ {
			if rs[i].start.Before(rs[i-1].end) {
				t.Errorf("%s: %s started before %s ended", host, rs[i].path, rs[i-1].path)
			}
		}
	}
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
	ns := startNATS(t)
	link := natstest.NewLink(t, ns.Addr().String())
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
	slow := httptest.NewServer(handler("slow"))
	t.Cleanup(slow.Close)
	// On an address of its own: one server's hosts share a clock (IPGap),
	// and the external lease would hold the fast host too.
	fast := httptest.NewUnstartedServer(handler("fast"))
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	fast.Listener.Close()
	fast.Listener = ln
	fast.Start()
	t.Cleanup(fast.Close)
	// With a second node announced, b keeps partitions 0-3 and hands 7,
	// 6, 5 and then 4 over: the slow host is in 4, the fast one below.
	const q = testParts / 2
	name := func(prefix string, srv *httptest.Server, want func(int) bool) string {
		for i := 0; ; i++ {
			if a := fmt.Sprintf("%s%d.test:%d", prefix, i, srv.Listener.Addr().(*net.TCPAddr).Port); want(partition.Of(a, testParts)) {
				return a
			}
		}
	}
	slowAuth := name("slow", slow, func(p int) bool { return p == q })
	fastAuth := name("fast", fast, func(p int) bool { return p < q })
	p := partition.Of(fastAuth, testParts)
	resolve := map[string]string{strings.Split(slowAuth, ":")[0]: "127.0.0.1", strings.Split(fastAuth, ":")[0]: "127.0.0.2"}
	b := startNodeAt(t, link.URL(), nil, "b", 4, func(c *crawl.Config) {
		c.Seeds = []string{"http://" + slowAuth + "/", "http://" + fastAuth + "/1"}
		c.Fetch.Resolve = resolve
		c.Delay = delay
		c.UserAgent = "weft/b (+https://example.org/weft-crawler)"
	}, nil, false)
	crawler := b.node.Crawler()
	asked := func(host, path string) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(log, func(r req) bool { return r.host == host && r.path == path })
	}
	testwait.Eventually(t, time.Minute, "the two hosts' first pages fetched", func() bool { return asked("slow", "/") && asked("fast", "/1") })
	// An external fetcher's lease on the slow host, kept out: partition
	// q's release waits for it.
	if _, err := crawler.Operator().HoldHost(fastAuth, true); err != nil {
		t.Fatal(err)
	}
	ext, err := crawler.Operator().LeaseExternal(t.Context(), 1, time.Minute, 10*time.Second)
	if err != nil || len(ext) != 1 || ext[0].Host != slowAuth {
		t.Fatalf("external lease: %+v, %v", ext, err)
	}
	crawler.Operator().HoldHost(fastAuth, false)

	// Node c is announced (by the test) until b has handed 7, 6 and 5
	// over; b's callbacks then wait on q's release.
	_, js := natstest.Connect(t, ns.ClientURL())
	kv, err := js.KeyValue(t.Context(), wjs.DefaultOwnersBucket)
	if err != nil {
		t.Fatal(err)
	}
	testwait.EventuallyNil(t, 30*time.Second, "b handing its extra partitions over", func() error {
		if !b.node.owners.Has(q + 1) {
			return nil
		}
		if _, err := kv.Put(t.Context(), "node.c", []byte("c")); err != nil { // c stays announced
			return err
		}
		return fmt.Errorf("b still holds partition %d", q+1)
	})

	// b is cut off and fences itself; p's lease expires; x takes p, asks
	// the fast host (more than TTL/2 after b's last request: politely)
	// and gives p back.
	link.Cut()
	testwait.Eventually(t, 30*time.Second, "b, cut off, fencing itself", func() bool { return !b.node.owners.Has(p) })
	key := "p." + strconv.Itoa(p)
	var rev uint64
	testwait.EventuallyNil(t, 30*time.Second, fmt.Sprintf("b's lease of partition %d expiring", p), func() error {
		rev, err = kv.Create(t.Context(), key, []byte("x"))
		return err
	})
	for drained := false; !drained; { // what b asked before
		select {
		case <-fastReqs:
		default:
			drained = true
		}
	}
	xreq, _ := http.NewRequest("GET", fast.URL+"/x", nil)
	xreq.Host = fastAuth
	xreq.Header.Set("User-Agent", "weft/x")
	resp, err := http.DefaultClient.Do(xreq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	<-fastReqs // x's own
	if err := kv.Delete(t.Context(), key, jetstream.LastRevision(rev)); err != nil {
		t.Fatal(err)
	}
	link.Restore()
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
	if err := crawler.Operator().CompleteExternal(ext[0].ID, ext[0].URL, 200, time.Now(), ""); err != nil {
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

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
