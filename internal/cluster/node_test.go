package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/natstest"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
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
	// A crawl of pages alone, as these tests count them: no requisites,
	// no browser.
	cc := crawl.Config{DataDir: t.TempDir(), Workers: workers, Delay: testDelay, Grace: time.Millisecond,
		UserAgent: "weft/test (+https://example.org/weft-crawler)", NoSitemaps: true, NoRequisites: true, Render: crawl.RenderConfig{Mode: crawl.RenderNever}}
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
		n.Crawler().Pause()
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
	return p.Reachable && !p.Disallowed && p.Role != "image"
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
		Crawl: crawl.Config{Seeds: []string{"http://a.test/"}, DataDir: dir, UserAgent: "weft/test", Delay: testDelay}})
	if err == nil || !strings.Contains(err.Error(), "4 partitions") {
		t.Fatalf("Start on a crawl of 4 partitions as a node of %d: %v", testParts, err)
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
		if err := rn.node.Forward([]crawl.Offered{o}); err != nil {
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
