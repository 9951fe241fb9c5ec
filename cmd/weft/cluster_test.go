package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/api"
	"github.com/weft-crawler/weft/internal/cluster"
	"github.com/weft-crawler/weft/internal/natstest"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

// The cluster the acceptance test runs: its lease TTL bounds how soon a
// node cut off from NATS stops (TTL/2) and how soon a dead node's
// partitions move (TTL); the delay is longer than a leader election's
// stall. The crawl's length is its longest host's: some 35 requests at
// the delay, plus a TTL for each node lost. The events below come by
// half of it, so that b, cut off last, is back a TTL later with some
// 20 s of the crawl left to take its share again before it drains.
const (
	e2eTTL     = 8 * time.Second
	e2eDelay   = time.Second
	e2eWorkers = 4
	e2eHosts   = 100
	e2eParts   = clusterPartitions
	// e2eSlack is the time a request the node sent before its fence takes
	// to show in the server's log on a loaded machine.
	e2eSlack = time.Second
)

// weftNode is one weft crawl --cluster process.
type weftNode struct {
	name   string
	cmd    *exec.Cmd
	api    string // host:port of its operator API
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	exited chan error
	ended  time.Time     // when the process exited (under mu)
	gone   chan struct{} // closed once it has exited, its output all read
}

func (n *weftNode) output() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return fmt.Sprintf("node %s stdout:\n%s\nstderr:\n%s", n.name, n.stdout.String(), n.stderr.String())
}

// userAgent names the node in the synthetic web's log: the server's side
// tells who sent each request.
func e2eAgent(name string) string { return "weft/e2e-" + name + " (+https://example.org/weft-crawler)" }

func startWeftNode(t *testing.T, bin, name, natsURL string, common []string) *weftNode {
	t.Helper()
	args := append([]string{"crawl", "--data", filepath.Join(t.TempDir(), "data"), "--cluster", natsURL, "--node", name,
		"--user-agent", e2eAgent(name), "--http", "127.0.0.1:0"}, common...)
	n := &weftNode{name: name, cmd: exec.Command(bin, args...), exited: make(chan error, 1), gone: make(chan struct{})}
	n.cmd.Stdout = &lockedWriter{mu: &n.mu, w: &n.stdout}
	stderr, err := n.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	apiAddr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`operator API on http://(\S+) `)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			n.mu.Lock()
			n.stderr.WriteString(sc.Text() + "\n")
			n.mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				apiAddr <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
		err := n.cmd.Wait()
		n.mu.Lock()
		n.ended = time.Now()
		n.mu.Unlock()
		close(n.gone)
		n.exited <- err
	}()
	t.Cleanup(func() { n.cmd.Process.Kill() }) // an error once it has exited
	select {
	case n.api = <-apiAddr:
	case err := <-n.exited:
		t.Fatalf("node %s exited: %v\n%s", name, err, n.output())
	case <-time.After(time.Minute):
		t.Fatalf("node %s did not start its API\n%s", name, n.output())
	}
	return n
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// partitions is what the node's /v1/stats says it holds; ok is false when
// it does not answer.
func (n *weftNode) partitions() (parts []int, handoffs int, ok bool) {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + n.api + "/v1/stats")
	if err != nil {
		return nil, 0, false
	}
	defer resp.Body.Close()
	var st struct {
		Cluster *struct {
			Partitions []int `json:"partitions"`
			Handoffs   int   `json:"handoffs"`
		} `json:"cluster"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil || st.Cluster == nil {
		return nil, 0, false
	}
	return st.Cluster.Partitions, st.Cluster.Handoffs, true
}

// clusterView is the node's GET /v1/cluster.
func clusterView(t *testing.T, n *weftNode) api.ClusterView {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + n.api + "/v1/cluster")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v api.ClusterView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /v1/cluster on %s: %s %v", n.name, resp.Status, err)
	}
	return v
}

// waitHeld waits until the nodes hold every partition between them, each
// at least atLeast.
func waitHeld(t *testing.T, nodes []*weftNode, atLeast int) map[string]int {
	t.Helper()
	var held map[string]int
	done := false
	defer func() { // on the timeout's Fatalf: what the nodes said
		if done {
			return
		}
		dumpNodes(nodes, true)
		var diag strings.Builder
		for _, n := range nodes {
			var kept []string // warnings and errors: the nodes log every snapshot and handoff too
			for _, l := range strings.Split(n.output(), "\n") {
				if !strings.Contains(l, "level=INFO") {
					kept = append(kept, l)
				}
			}
			out := strings.Join(kept, "\n")
			diag.WriteString(out[max(0, len(out)-4000):] + "\n")
		}
		t.Log(diag.String())
	}()
	testwait.EventuallyNil(t, 2*time.Minute, fmt.Sprintf("all %d partitions held, at least %d each", e2eParts, atLeast), func() error {
		total := 0
		held = map[string]int{}
		for _, n := range nodes {
			parts, _, _ := n.partitions()
			held[n.name] = len(parts)
			total += len(parts)
		}
		least := e2eParts
		for _, h := range held {
			least = min(least, h)
		}
		if total != e2eParts || least < atLeast {
			return fmt.Errorf("partitions held %v", held)
		}
		return nil
	})
	done = true
	return held
}

// dumpNodes writes each node's whole output to the directory
// $WEFT_E2E_DUMP names, if it names one, after a goroutine dump (SIGQUIT)
// if quit: what a run that failed in CI needs to be understood.
func dumpNodes(nodes []*weftNode, quit bool) {
	dir := os.Getenv("WEFT_E2E_DUMP")
	if dir == "" {
		return
	}
	if quit {
		for _, n := range nodes {
			n.cmd.Process.Signal(syscall.SIGQUIT)
		}
		for _, n := range nodes { // the dump reaches the output buffer
			select {
			case <-n.gone:
			case <-time.After(10 * time.Second):
			}
		}
	}
	for _, n := range nodes {
		os.WriteFile(filepath.Join(dir, n.name+".txt"), []byte(n.output()), 0o644)
	}
}

// e2eProgress counts the pages a polite crawl fetches, and those fetched.
func e2eProgress(web *synthweb.Web) (got, want int) {
	fetched := pagesFetched(web, nil)
	for _, p := range web.AllPages() {
		if p.Reachable && !p.Disallowed && p.Role != "image" {
			want++
			if len(fetched[p.URL]) > 0 {
				got++
			}
		}
	}
	return got, want
}

// pagesFetched lists, per URL, the requests the web had for it (robots.txt
// left out), those that keep(r) only.
func pagesFetched(web *synthweb.Web, keep func(synthweb.Request) bool) map[string][]synthweb.Request {
	auth := map[string]string{}
	for _, h := range web.Hosts() {
		auth[h.Addr] = h.Authority
	}
	out := map[string][]synthweb.Request{}
	for _, r := range web.Log() {
		if strings.HasPrefix(r.Path, "/robots") || (keep != nil && !keep(r)) {
			continue
		}
		u := "http://" + auth[r.Addr] + r.Path
		out[u] = append(out[u], r)
	}
	return out
}

// e2eNode names the node that sent r (its User-Agent, e2eAgent).
func e2eNode(r synthweb.Request) string {
	return strings.TrimPrefix(strings.Fields(r.UserAgent)[0], "weft/e2e-")
}

func e2eWait(t *testing.T, web *synthweb.Web, share float64, what string) {
	t.Helper()
	testwait.EventuallyNil(t, 3*time.Minute, what, func() error {
		if got, want := e2eProgress(web); float64(got) < share*float64(want) {
			return fmt.Errorf("%d of %d pages fetched", got, want)
		}
		return nil
	})
	got, want := e2eProgress(web)
	t.Logf("%s: %d of %d pages fetched", what, got, want)
}

// TestClusterAcceptance is issue 9's acceptance test. A three-server NATS
// JetStream cluster and three weft nodes, each the weft binary in a
// process of its own, crawl 100 hosts of the synthetic web. On the way:
//
//   - node c is killed with SIGKILL (its leases run out: TTL);
//   - one NATS server is shut down (the cluster keeps its quorum);
//   - node d joins and takes its share (graceful handoffs);
//   - node b, which reaches NATS through a link the test controls, is cut
//     off: it must stop fetching within TTL/2, before anyone takes its
//     partitions; once they are taken, its link is restored and it joins
//     again.
//
// Then, from the server's log: every reachable allowed page was fetched;
// no host ever had two requests in flight or a gap under the delay; pages
// fetched twice are at most the requests c and b had out when they
// stopped (their workers).
func TestClusterAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("three NATS servers and four weft processes crawling 100 hosts")
	}
	nats := natstest.StartCluster(t)
	web, err := synthweb.Start(synthweb.Config{Seed: 33, Hosts: e2eHosts, PagesPerHost: 10, MinPageBytes: 4 << 10, MaxPageBytes: 8 << 10,
		MinLinks: 12, MaxLinks: 16, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound, synthweb.RobotsRules}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	dir := t.TempDir()
	seedsFile := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seedsFile, []byte(strings.Join(web.Seeds(), "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	// Snapshots: some 60 links are logged in a partition over the crawl
	// and d joins some 15 s in; a partition is snapshotted after 30 of
	// them or every 5 s, so that most have one by then.
	common := []string{"--seeds", seedsFile, "--workers", fmt.Sprint(e2eWorkers), "--delay", e2eDelay.String(),
		"--lease-ttl", e2eTTL.String(), "--cluster-replicas", "3", "--allow-cidr", "127.0.0.0/8", "--progress", "never",
		"--snapshot-every", "5s", "--snapshot-after", "30", "--log-level", "info"}
	for host, ip := range web.Resolve() {
		common = append(common, "--resolve", host+"="+ip)
	}
	bin := buildWeft(t)

	// b reaches NATS only through a link to server 0, which stays up.
	link := natstest.NewLink(t, nats.Servers[0].Addr().String())
	started := time.Now()
	a := startWeftNode(t, bin, "a", nats.URL(), common)
	b := startWeftNode(t, bin, "b", link.URL(), common)
	c := startWeftNode(t, bin, "c", nats.URL(), common)
	waitHeld(t, []*weftNode{a, b, c}, e2eParts/3)

	// c dies at once: no goodbye, its leases stay until they expire.
	e2eWait(t, web, 0.15, "kill c")
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
	cKilled := time.Now()
	// Any node answers for the whole crawl: a's view shows c, dead, still
	// named in its leases, and not answering.
	if v := clusterView(t, a); v.Complete || !slices.ContainsFunc(v.Nodes, func(n api.ClusterNodeView) bool {
		return n.Node == "c" && len(n.Partitions) > 0 && n.Stats == nil && n.Error != ""
	}) {
		t.Errorf("a's view of the cluster just after c's death: %+v", v.Nodes)
	}

	// A NATS server goes: clients on it move to the others, the streams
	// (three replicas) keep a quorum, and no lease needs to move.
	e2eWait(t, web, 0.25, "shut down NATS server n2")
	nats.Servers[2].Shutdown()

	e2eWait(t, web, 0.35, "d joins")
	d := startWeftNode(t, bin, "d", nats.URL(), common)
	dJoined := time.Now()
	held := waitHeld(t, []*weftNode{a, b, d}, e2eParts/3)
	t.Logf("%v after d joined: %v", time.Since(dJoined).Round(time.Millisecond), held)

	// b is cut off. It must fence itself by TTL/2 after the cut; nobody
	// may take its partitions before their leases expire, TTL after its
	// last renewal.
	e2eWait(t, web, 0.5, "cut b off")
	link.Cut()
	bCut := time.Now()
	held = waitHeld(t, []*weftNode{a, d}, 1)
	t.Logf("b's partitions taken %v after the cut: %v", time.Since(bCut).Round(time.Millisecond), held)
	if bParts, _, ok := b.partitions(); !ok || len(bParts) != 0 {
		t.Errorf("b, cut off, says it holds %v (its API answered: %v)", bParts, ok)
	}
	link.Restore()
	bRestored := time.Now()

	e2eWait(t, web, 1, "the end")
	// d's view of the whole crawl: every node, every partition, and the
	// pages of all three (b is back and has a share again). Read while
	// the nodes still run: once the whole crawl has drained, each stops
	// by itself.
	var v api.ClusterView
	var names []string
	var pages int64
	var parts int
	testwait.EventuallyNil(t, 30*time.Second, "d's view of the whole cluster at the end", func() error {
		v, names, pages, parts = clusterView(t, d), nil, 0, 0
		held := map[string]int{}
		for _, n := range v.Nodes {
			names = append(names, n.Node)
			parts += len(n.Partitions)
			held[n.Node] = len(n.Partitions)
			if n.Stats != nil {
				pages += n.Stats.Pages
			}
		}
		if v.Complete && fmt.Sprint(names) == "[a b d]" && parts == e2eParts && len(v.Unowned) == 0 && held["b"] > 0 && v.Totals.Pages == pages && pages > 0 &&
			v.Totals.Frontier.Queued == 0 && v.Totals.Frontier.InFlight == 0 { // a handed-off partition's URLs are not counted
			t.Logf("at the end: %v", held)
			return nil
		}
		return fmt.Errorf("nodes %v, complete %v, %d partitions held %v, unowned %v, %d pages in all of %d, %d URLs queued, %d in flight",
			names, v.Complete, parts, held, v.Unowned, v.Totals.Pages, pages, v.Totals.Frontier.Queued, v.Totals.Frontier.InFlight)
	})
	// weft crawl ends: every node finds the whole crawl drained, prints
	// its summary and exits 0, with no signal.
	var stopTimes []string
	for _, n := range []*weftNode{a, b, d} {
		select {
		case err := <-n.exited:
			n.mu.Lock()
			out, ended := n.stdout.String(), n.ended
			n.mu.Unlock()
			if err != nil || !strings.HasPrefix(out, "crawl drained after ") {
				t.Errorf("node %s: %v\n%s", n.name, err, n.output())
			}
			var last time.Time
			for _, r := range web.Log() {
				if r.Start.After(last) {
					last = r.Start
				}
			}
			stopTimes = append(stopTimes, fmt.Sprintf("%s %v", n.name, ended.Sub(last).Round(time.Millisecond)))
		case <-time.After(time.Minute):
			// Where it waits: Go prints every goroutine on SIGQUIT, into
			// the output below.
			n.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-n.exited:
			case <-time.After(5 * time.Second):
			}
			dumpNodes([]*weftNode{n}, false)
			t.Errorf("node %s did not stop by itself within a minute of the crawl's end\n%s", n.name, n.output())
		}
	}
	t.Logf("nodes stopped by themselves after the last request: %s", strings.Join(stopTimes, ", "))
	dumpNodes([]*weftNode{a, b, c, d}, false)
	if err := web.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return
	}

	// The cut node stopped in time: no request of b's reached a server
	// from TTL/2 (plus the slack of a loaded machine) after the cut until
	// its link came back.
	fence := bCut.Add(e2eTTL/2 + e2eSlack)
	var lastB time.Time
	for _, reqs := range pagesFetched(web, func(r synthweb.Request) bool { return r.UserAgent == e2eAgent("b") }) {
		for _, r := range reqs {
			if r.Start.Before(bRestored) && r.Start.After(lastB) {
				lastB = r.Start
			}
			if r.Start.After(fence) && r.Start.Before(bRestored) {
				t.Errorf("b, cut off at %s, sent %s at %s", bCut.Format("15:04:05.000"), r.Path, r.Start.Format("15:04:05.000"))
			}
		}
	}
	t.Logf("b's last request before its link came back: %v after the cut (bound %v)", lastB.Sub(bCut).Round(time.Millisecond), e2eTTL/2)

	// Politeness, from the server's side, across the kill, the NATS
	// server's loss and every handoff.
	audit := synthweb.Audit(web, e2eDelay)
	for _, s := range audit.Breaches() {
		t.Errorf("politeness: %s", s)
	}
	if len(audit.ShortGaps) > 0 {
		events := map[string]time.Time{"start": started, "c killed": cKilled, "d joined": dJoined, "b cut": bCut, "b back": bRestored}
		for _, s := range shortGaps(web, e2eDelay, events) {
			t.Logf("short gap: %s", s)
		}
	}
	t.Logf("%d requests to %d hosts; shortest gap %v", audit.Requests, audit.Hosts, audit.MinGap)

	// Coverage and pages fetched twice: those c or b had in flight when
	// they stopped, at most one per worker each.
	got, want := e2eProgress(web)
	if got != want {
		t.Errorf("%d of %d pages fetched", got, want)
	}
	twice := map[string]int{}
	for u, reqs := range pagesFetched(web, nil) {
		if len(reqs) < 2 {
			continue
		}
		twice[e2eNode(reqs[0])]++
		var by []string
		for _, r := range reqs {
			by = append(by, e2eNode(r)+" at "+r.Start.Format("15:04:05.000"))
		}
		t.Logf("%s fetched by %s (c killed at %s, b cut at %s, b back at %s)", u, strings.Join(by, ", "),
			cKilled.Format("15:04:05.000"), bCut.Format("15:04:05.000"), bRestored.Format("15:04:05.000"))
	}
	t.Logf("pages fetched twice, by who fetched them first: %v", twice)
	if twice["c"] > e2eWorkers || twice["b"] > e2eWorkers || twice["a"]+twice["d"] > 0 {
		t.Errorf("pages fetched twice %v: want at most %d of c's and of b's (their workers), none of a's or d's", twice, e2eWorkers)
	}

	// The partitions were snapshotted and their logs purged below the
	// snapshots, and d (which joined late) took partitions over from
	// snapshots: the figures above hold with them.
	snapped, purged := e2eSnapshots(t, nats.URL())
	fromSnap := strings.Count(d.output(), "snapshot=snapshots/")
	t.Logf("%d partitions snapshotted; %d of the %d URLs logged were purged; d took %d partitions from a snapshot", snapped, purged[0], purged[1], fromSnap)
	if v.Snapshots == 0 {
		t.Errorf("d's view of the cluster at the end counts no snapshot")
	}
	if snapped < e2eParts/2 || purged[0] == 0 || fromSnap == 0 {
		t.Errorf("%d partitions snapshotted, %d messages purged, %d partitions taken from a snapshot by d: want half the partitions, some, some", snapped, purged[0], fromSnap)
	}
}

// e2eSnapshots counts the partitions with a snapshot, and the URLs purged
// from the links log against all it ever logged (a URL's later offers
// are refused, not stored: only a purge takes one away).
func e2eSnapshots(t *testing.T, url string) (snapped int, purged [2]uint64) {
	t.Helper()
	_, js := natstest.Connect(t, url)
	_, keys := snapshotRecords(t, js)
	st, err := js.Stream(t.Context(), cluster.LinksStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return len(keys), [2]uint64{info.State.LastSeq - info.State.Msgs, info.State.LastSeq}
}

// TestClusterNodeStopsWhenCutOff: a node cut off from NATS mid-crawl and
// then told to stop cannot hand its partitions over (its workers wait to
// log the visits they made, its leases cannot be given back): after 30 s
// the leave becomes a kill, its leases left to run out, and the process
// exits, rather than waiting out every retry (90 s each) first.
func TestClusterNodeStopsWhenCutOff(t *testing.T) {
	if testing.Short() {
		t.Skip("a weft process that waits 30 s for NATS")
	}
	srv := natstest.Start(t)
	link := natstest.NewLink(t, srv.Addr().String())
	web, err := synthweb.Start(synthweb.Config{Seed: 35, Hosts: 20, PagesPerHost: 40, MinLinks: 12, MaxLinks: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	seedsFile := filepath.Join(t.TempDir(), "seeds.txt")
	if err := os.WriteFile(seedsFile, []byte(strings.Join(web.Seeds(), "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--seeds", seedsFile, "--workers", "4", "--delay", "100ms", "--lease-ttl", "8s",
		"--allow-cidr", "127.0.0.0/8", "--progress", "never", "--log-level", "info"}
	for host, ip := range web.Resolve() {
		args = append(args, "--resolve", host+"="+ip)
	}
	x := startWeftNode(t, buildWeft(t), "x", link.URL(), args)
	e2eWait(t, web, 0.2, "cut x off")
	link.Cut()
	x.cmd.Process.Signal(syscall.SIGTERM)
	terminated := time.Now()
	select {
	case err := <-x.exited:
		took := time.Since(terminated)
		t.Logf("x exited %v after SIGTERM", took.Round(time.Millisecond))
		if err != nil {
			t.Errorf("x, told to stop: %v\n%s", err, x.output())
		}
		if took > 90*time.Second { // before the kill: minutes
			t.Errorf("x took %v to exit, cut off; want the 30 s of a graceful leave and a little\n%s", took, x.output())
		}
	case <-time.After(3 * time.Minute):
		x.cmd.Process.Signal(syscall.SIGQUIT)
		<-x.exited
		t.Fatalf("x, cut off, did not exit within 3 minutes of SIGTERM\n%s", x.output())
	}
	link.Restore()
}

// shortGaps says, for each gap under delay between two requests to a
// host, who sent each and when, against the test's events: where a
// breach came from.
func shortGaps(web *synthweb.Web, delay time.Duration, events map[string]time.Time) []string {
	per := map[string][]synthweb.Request{}
	for _, r := range web.Log() {
		per[r.Addr] = append(per[r.Addr], r)
	}
	at := func(ts time.Time) string {
		var parts []string
		for name, e := range events {
			if d := ts.Sub(e); d > -10*time.Second && d < 30*time.Second {
				parts = append(parts, fmt.Sprintf("%s%+v", name, d.Round(time.Millisecond)))
			}
		}
		slices.Sort(parts)
		return ts.Format("15:04:05.000") + " (" + strings.Join(parts, ", ") + ")"
	}
	var out []string
	for _, reqs := range per {
		slices.SortStableFunc(reqs, func(a, b synthweb.Request) int { return a.Start.Compare(b.Start) })
		for i := 1; i < len(reqs); i++ {
			prev, cur := reqs[i-1], reqs[i]
			if cur.Start.Sub(prev.Start) >= delay {
				continue
			}
			out = append(out, fmt.Sprintf("%s: %s by %s %s-%s, then %s by %s at %s", prev.Host, prev.Path, e2eNode(prev), at(prev.Start),
				prev.End.Format("15:04:05.000"), cur.Path, e2eNode(cur), at(cur.Start)))
		}
	}
	slices.Sort(out)
	return out
}
