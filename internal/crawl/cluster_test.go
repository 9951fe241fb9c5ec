package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

// testCluster is a Cluster for nodes tested without package cluster:
// ownership and forwarding by the test's functions, every claim granted,
// nothing heard of visits or clocks, and robots.txt hops followed by the
// asking crawl itself, as a node that owns the hop's host does.
type testCluster struct {
	owns    func(host string) bool
	forward func([]Offered) error
	self    *Crawler // set once made
}

func (tc *testCluster) Owns(host string) bool          { return tc.owns(host) }
func (tc *testCluster) Forward(urls []Offered) error   { return tc.forward(urls) }
func (tc *testCluster) Claim(string) (time.Time, bool) { return time.Now().Add(time.Hour), true }
func (tc *testCluster) Fetched(Visited, string)        {}
func (tc *testCluster) Clocked(string, frontier.Clock) {}
func (tc *testCluster) Keeps() bool                    { return false }
func (tc *testCluster) RobotsHop(ctx context.Context, forHost, target, targetHost string, hops int) (RobotsAnswer, error) {
	return tc.self.HopFor(ctx, forHost, target, targetHost, hops, true)
}

// newNode makes a crawl of cfg as a node of tc.
func newNode(t *testing.T, cfg Config, tc *testCluster) *Crawler {
	t.Helper()
	cfg.Cluster = tc
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tc.self = c
	return c
}

// relay hands the URLs one node forwards to the node that owns their hosts,
// in order, retrying while that node is not running yet: the in-process
// stand-in for the message log between nodes.
type relay struct {
	mu    sync.Mutex
	nodes []*Crawler
	owner func(host string) int
	queue chan []Offered
	done  chan struct{}
	// pending counts the batches forwarded and not yet offered to their
	// owners: while one is, a URL may still be on its way.
	pending atomic.Int64
}

func (r *relay) forward(urls []Offered) error {
	r.pending.Add(1)
	r.queue <- append([]Offered(nil), urls...)
	return nil
}

// idle reports, as an error, a node with URLs queued or in flight, or a
// batch being relayed: while there is one, more may come.
func (r *relay) idle() error {
	for n, c := range r.nodes {
		if fs := c.Live().Frontier; fs.Queued != 0 || fs.InFlight != 0 {
			return fmt.Errorf("node %d: %d queued, %d in flight", n, fs.Queued, fs.InFlight)
		}
	}
	if p := r.pending.Load(); p != 0 {
		return fmt.Errorf("%d batches being relayed", p)
	}
	return nil
}

func (r *relay) run(ctx context.Context, parse func(string) (string, error)) {
	defer close(r.done)
	for {
		var batch []Offered
		select {
		case batch = <-r.queue:
		case <-ctx.Done():
			return
		}
		by := map[int][]Offered{}
		for _, o := range batch {
			host, err := parse(o.URL)
			if err != nil {
				continue
			}
			by[r.owner(host)] = append(by[r.owner(host)], o)
		}
		for n, urls := range by {
			for {
				err := r.nodes[n].Offer(urls)
				if !errors.Is(err, ErrNotRunning) {
					break
				}
				select {
				case <-time.After(5 * time.Millisecond):
				case <-ctx.Done():
					return
				}
			}
		}
		r.pending.Add(-1)
	}
}

// TestNodesSplitHostsByPartition runs two crawls as the two nodes of a
// cluster over one web: each owns half the partitions, holds the others
// in its frontier, and forwards the URLs it finds for the other's hosts
// through a relay to the other's Offer, which alone judges them new. Both
// are given every seed. From the servers' side: every page is fetched
// exactly once, and no host sees overlapping requests or a gap under the
// delay (each host is asked by its owner only).
func TestNodesSplitHostsByPartition(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 27, Hosts: 8, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound, synthweb.RobotsRules}})
	const (
		parts = 4
		delay = 20 * time.Millisecond
	)
	// The partitions go to the nodes so that each owns hosts: a host's
	// partition hashes its authority, port and all, so a fixed rule (p
	// mod 2) left one node without a host in about one run in a hundred.
	assign := map[int]int{}
	for _, h := range web.Hosts() {
		if p := partition.Of(h.Authority, parts); len(assign) < parts {
			if _, ok := assign[p]; !ok {
				assign[p] = len(assign) % 2
			}
		}
	}
	if len(assign) < 2 {
		t.Fatalf("every host of the web in one partition of %d", parts)
	}
	owner := func(host string) int { return assign[partition.Of(host, parts)] } // a partition with no host: node 0's
	rl := &relay{owner: owner, queue: make(chan []Offered, 1024), done: make(chan struct{})}
	var nodes []*Crawler
	for n := range 2 {
		cfg := testConfig(t, web, 4, delay)
		cfg.Partitions = parts
		cfg.KeepAlive = true
		c := newNode(t, cfg, &testCluster{owns: func(host string) bool { return owner(host) == n }, forward: rl.forward})
		for p := range parts {
			if assign[p] != n {
				c.HoldPartition(p, true)
			}
		}
		nodes = append(nodes, c)
	}
	rl.nodes = nodes
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go rl.run(ctx, func(raw string) (string, error) {
		u, err := nodes[0].canon.Parse(raw)
		return u.Authority, err
	})
	sums := make([]Summary, 2)
	var wg sync.WaitGroup
	for n, c := range nodes {
		wg.Go(func() {
			sum, err := c.Run(ctx)
			if err != nil {
				t.Error(err)
			}
			sums[n] = sum
		})
	}
	// Done when every page a polite crawl may fetch was fetched; the nodes
	// keep running (KeepAlive), as cluster nodes do, until told to stop.
	want := 0
	for _, p := range web.AllPages() {
		if shouldFetch(p) {
			want++
		}
	}
	testwait.EventuallyNil(t, 2*time.Minute, "every page fetched", func() error {
		fetched := pageRequests(web)
		got := 0
		for _, p := range web.AllPages() {
			if shouldFetch(p) && fetched[p.URL] > 0 {
				got++
			}
		}
		if got != want {
			return fmt.Errorf("%d of %d pages fetched", got, want)
		}
		return nil
	})
	// Anything still to come, would it be a duplicate: wait until nothing
	// is (no URL queued or in flight on either node, none being relayed).
	testwait.EventuallyNil(t, time.Minute, "both nodes idle", rl.idle)
	cancel()
	wg.Wait()
	<-rl.done

	if err := web.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	fetched := pageRequests(web)
	for _, p := range web.AllPages() {
		if n := fetched[p.URL]; n > 1 {
			t.Errorf("%s fetched %d times", p.URL, n)
		}
	}
	audit := synthweb.Audit(web, delay)
	for _, s := range audit.Breaches() {
		t.Errorf("politeness: %s", s)
	}
	if sums[0].Forwarded == 0 || sums[1].Forwarded == 0 || sums[0].Pages == 0 || sums[1].Pages == 0 {
		t.Errorf("node 0: %d pages, %d URLs forwarded; node 1: %d pages, %d forwarded", sums[0].Pages, sums[0].Forwarded, sums[1].Pages, sums[1].Forwarded)
	}
	t.Logf("node 0: %d pages, %d forwarded; node 1: %d pages, %d forwarded; %d pages in all", sums[0].Pages, sums[0].Forwarded, sums[1].Pages, sums[1].Forwarded, want)
}

// TestAdoptedVisits: in a cluster (SharedVisits), visits another node made
// of this crawl's URLs are taken over (Adopt). A URL queued here before
// the visit is not fetched when its lease comes (it counts as done,
// "elsewhere", with the other node's record); one never queued here counts
// as seen, so a link to it queues nothing; the others are fetched.
func TestAdoptedVisits(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"v.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/a", "/b", "/c")
			default:
				page(rw)
			}
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("v.test", "/"), mw.url("v.test", "/a"))
	cfg.Partitions, cfg.SharedVisits, cfg.KeepAlive = 2, true, true
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := partition.Of(mw.auth["v.test"], 2)
	c.HoldPartition(p, true) // not owned yet: the seeds wait in their queue
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan Summary, 1)
	go func() {
		sum, err := c.Run(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- sum
	}()
	testwait.Eventually(t, 30*time.Second, "the two seeds queued, held", func() bool {
		fs := c.Live().Frontier
		return fs.Queued+fs.PartitionHeld >= 2 // held: not counted as queued
	})
	// Another node fetched /a (queued here) and /c (not known here).
	at := time.Now()
	visits := []Visited{
		{URL: mw.url("v.test", "/a"), Record: store.URLRecord{LastFetch: at, LastStatus: 200, LastOutcome: "ok"}},
		{URL: mw.url("v.test", "/c"), Record: store.URLRecord{LastFetch: at, LastStatus: 200, LastOutcome: "ok"}},
	}
	if err := c.Adopt(visits); err != nil {
		t.Fatal(err)
	}
	c.HoldPartition(p, false)
	testwait.EventuallyNil(t, 30*time.Second, "the crawl to settle", func() error {
		if l := c.Live(); l.Frontier.Queued != 0 || l.Frontier.InFlight != 0 || len(mw.paths("v.test")) < 3 {
			return fmt.Errorf("%+v, requests %v", l.Frontier, mw.paths("v.test"))
		}
		return nil
	})
	r, ok, err := c.state.DB.GetURL(uint16(p), mw.auth["v.test"], seen.KeyOf(mw.url("v.test", "/a")))
	if err != nil || !ok || r.Status != store.URLDone || !r.LastFetch.Equal(at) || r.LastStatus != 200 {
		t.Errorf("/a's record %+v (%v %v): want the other node's visit, done", r, ok, err)
	}
	cancel()
	sum := <-done
	got := map[string]int{}
	for _, path := range mw.paths("v.test") {
		got[path]++
	}
	if got["/"] != 1 || got["/b"] != 1 || got["/a"] != 0 || got["/c"] != 0 {
		t.Errorf("requests %v: want / and /b once, /a and /c (visited elsewhere) never", got)
	}
	if sum.Rejected[judge.Seen] < 2 { // the links to /a and /c
		t.Errorf("rejected %v: want the links to /a and /c seen", sum.Rejected)
	}
}

// TestHeldPartitionNotRecrawled: in continuous mode, the URLs of a held
// partition (another node's, in a cluster) are not queued again when they
// come due: that node schedules them. Once the partition is back, they are.
func TestHeldPartitionNotRecrawled(t *testing.T) {
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"h.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				http.NotFound(rw, r)
			case "/":
				page(rw, "/a")
			default:
				page(rw)
			}
		},
	})
	cfg := mw.config(t, 10*time.Millisecond, mw.url("h.test", "/"))
	cfg.Partitions = 2
	cfg.Recrawl = &recrawl.Policy{Min: 100 * time.Millisecond, Max: 200 * time.Millisecond, Prior: 1}
	cfg.RecrawlScan = 20 * time.Millisecond
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := c.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	defer func() { cancel(); <-done }()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		testwait.EventuallyNil(t, 20*time.Second, what, func() error {
			if !cond() {
				return fmt.Errorf("requests %v", mw.paths("h.test"))
			}
			return nil
		})
	}
	count := func(path string) int {
		return len(slices.DeleteFunc(mw.paths("h.test"), func(p string) bool { return p != path }))
	}
	waitFor("/a fetched", func() bool { return count("/a") >= 1 })
	p := partition.Of(mw.auth["h.test"], 2)
	c.HoldPartition(p, true)
	waitFor("nothing in flight", func() bool { return c.Live().Frontier.InFlight == 0 })
	held := len(mw.paths("h.test"))
	// The span under test, five times the recrawl maximum: nothing of the
	// held partition may be queued in it (no event marks a non-event).
	time.Sleep(time.Second)
	if l := c.Live(); l.Frontier.Queued != 0 || len(mw.paths("h.test")) != held {
		t.Errorf("held for 1 s: %d URLs queued again, %d requests (%d when held); want none", l.Frontier.Queued, len(mw.paths("h.test")), held)
	}
	c.HoldPartition(p, false)
	waitFor("recrawls after the partition came back", func() bool { return len(mw.paths("h.test")) >= held+2 })
}

// TestForwardStoppingStopsWithoutFailing: a Forward that gives up because
// its process is stopping (ErrStopping) stops the crawl as "stopped", with
// no error, and the page whose URLs it did not forward is not recorded:
// the next run fetches it again.
func TestForwardStoppingStopsWithoutFailing(t *testing.T) {
	web := startWeb(t, synthweb.Config{Seed: 41, Hosts: 4, PagesPerHost: 10, MinLinks: 12, MaxLinks: 16})
	cfg := testConfig(t, web, 2, 5*time.Millisecond)
	seed := web.Seeds()[0]
	own, err := url.Parse(seed)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seeds = []string{seed}
	owns := func(host string) bool { return host == own.Host }
	c := newNode(t, cfg, &testCluster{owns: owns, forward: func([]Offered) error { return fmt.Errorf("relay: %w", ErrStopping) }})
	sum, err := c.Run(t.Context())
	if err != nil || sum.StoppedBy != "stopped" {
		t.Fatalf("a crawl whose Forward is stopping: %q, err %v; want stopped, no error", sum.StoppedBy, err)
	}
	first := pageRequests(web)

	if _, err := newNode(t, cfg, &testCluster{owns: owns, forward: func([]Offered) error { return nil }}).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	again := 0
	for u, n := range pageRequests(web) {
		if first[u] > 0 && n > first[u] {
			again++
		}
	}
	if again == 0 {
		t.Errorf("no page fetched in the first run was fetched again in the second (first run: %d pages)", len(first))
	}
}
