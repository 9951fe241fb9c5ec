package jetstream

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/natstest"
	"github.com/weft-crawler/weft/internal/testwait"
)

// testTTL is short for quick tests, and long enough that the margin
// between a node's fence (TTL/2, seen by its callback up to a tick, TTL/6,
// later) and another node's takeover (TTL) is a second on a loaded machine.
const testTTL = 3 * time.Second

// ownership records, per partition, who held it when, from the nodes'
// own callbacks: a holder stops at OnRelease, or when it is killed.
type ownership struct {
	mu   sync.Mutex
	iv   map[int][]interval
	open map[string]map[int]int // node -> partition -> index of its open interval
}

type interval struct {
	node       string
	start, end time.Time // end zero while held
}

func newOwnership() *ownership {
	return &ownership{iv: map[int][]interval{}, open: map[string]map[int]int{}}
}

func (w *ownership) acquired(node string, p int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open[node] == nil {
		w.open[node] = map[int]int{}
	}
	w.iv[p] = append(w.iv[p], interval{node: node, start: time.Now()})
	w.open[node][p] = len(w.iv[p]) - 1
}

func (w *ownership) released(node string, p int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if i, ok := w.open[node][p]; ok {
		w.iv[p][i].end = time.Now()
		delete(w.open[node], p)
	}
}

// died ends every interval of a node that crashed: it fetches nothing more.
func (w *ownership) died(node string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p, i := range w.open[node] {
		w.iv[p][i].end = time.Now()
	}
	w.open[node] = nil
}

// checkExclusive fails if two nodes ever held one partition at once.
func (w *ownership) checkExclusive(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for p, ivs := range w.iv {
		for i := 1; i < len(ivs); i++ {
			prev, cur := ivs[i-1], ivs[i]
			if prev.end.IsZero() || cur.start.Before(prev.end) {
				t.Errorf("partition %d: %s took it at %v while %s held it (until %v)", p, cur.node, cur.start.Format("15:04:05.000"), prev.node, prev.end.Format("15:04:05.000"))
			}
		}
	}
}

type testNode struct {
	name   string
	owners *Owners
	nc     *nats.Conn
}

func startOwner(t *testing.T, url, name string, parts int, w *ownership) *testNode {
	t.Helper()
	return startOwnerWith(t, url, name, parts, w, 0)
}

// startOwnerWith starts a node whose OnRelease takes slow to return, as a
// crawl waiting for its requests in flight would.
func startOwnerWith(t *testing.T, url, name string, parts int, w *ownership, slow time.Duration) *testNode {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	o, err := StartOwners(t.Context(), js, OwnersConfig{Node: name, Partitions: parts, TTL: testTTL,
		OnAcquire: func(p int, _ uint64) { w.acquired(name, p) },
		OnRelease: func(p int) { time.Sleep(slow); w.released(name, p) }})
	if err != nil {
		t.Fatal(err)
	}
	return &testNode{name: name, owners: o, nc: nc}
}

// waitShares waits until the nodes hold exactly the given numbers of
// partitions, all different, together all of them.
func waitShares(t *testing.T, parts int, nodes []*testNode, want []int) {
	t.Helper()
	testwait.EventuallyNil(t, 30*time.Second, fmt.Sprintf("shares %v", want), func() error {
		var got []int
		all := map[int]bool{}
		for _, n := range nodes {
			owned := n.owners.Owned()
			got = append(got, len(owned))
			for p := range owned {
				all[p] = true
			}
		}
		if !slices.Equal(got, want) || len(all) != parts {
			return fmt.Errorf("shares %v (%d distinct partitions)", got, len(all))
		}
		return nil
	})
}

// checkMembers waits until Members says who holds how many partitions as
// want does, node a's announcement being aAnnounce and the others' their
// names.
func checkMembers(t *testing.T, o *Owners, want map[string]int, aAnnounce string) {
	t.Helper()
	testwait.EventuallyNil(t, 10*time.Second, fmt.Sprintf("members holding partitions %v", want), func() error {
		ms, err := o.Members(t.Context())
		got := map[string]int{}
		ok := err == nil
		for _, m := range ms {
			got[m.Node] = len(m.Partitions)
			wantAnn := m.Node
			if m.Node == "a" {
				wantAnn = aAnnounce
			}
			ok = ok && string(m.Announce) == wantAnn && slices.IsSorted(m.Partitions)
		}
		if !ok || !maps.Equal(got, want) {
			return fmt.Errorf("members %+v (%v)", ms, err)
		}
		return nil
	})
}

// TestOwnersShareAndMove: three nodes split 12 partitions 4/4/4; a node
// that dies (no goodbye) has its partitions taken by the other two once
// its leases expire (6/6); a node joining gets its share handed over to it
// (4/4/4); a node leaving gracefully hands its share over at once (6/6).
// At no time do two nodes hold one partition.
func TestOwnersShareAndMove(t *testing.T) {
	t.Parallel()
	ns := startNATS(t)
	const parts = 12
	w := newOwnership()
	a := startOwner(t, ns.ClientURL(), "a", parts, w)
	b := startOwner(t, ns.ClientURL(), "b", parts, w)
	c := startOwner(t, ns.ClientURL(), "c", parts, w)
	waitShares(t, parts, []*testNode{a, b, c}, []int{4, 4, 4})

	// Members shows who holds what, and what each announced.
	a.owners.Announce([]byte(`{"api":"127.0.0.1:1"}`))
	checkMembers(t, a.owners, map[string]int{"a": 4, "b": 4, "c": 4}, `{"api":"127.0.0.1:1"}`)

	c.owners.Kill()
	c.nc.Close()
	w.died("c")
	waitShares(t, parts, []*testNode{a, b}, []int{6, 6})
	checkMembers(t, b.owners, map[string]int{"a": 6, "b": 6}, `{"api":"127.0.0.1:1"}`)

	d := startOwner(t, ns.ClientURL(), "d", parts, w)
	waitShares(t, parts, []*testNode{a, b, d}, []int{4, 4, 4})

	a.owners.Stop(t.Context())
	a.nc.Close()
	waitShares(t, parts, []*testNode{b, d}, []int{6, 6})
	if h := b.owners.Handoffs(); h < 6 {
		t.Errorf("b took part in %d handoffs", h)
	}
	for _, n := range []*testNode{b, d} {
		n.owners.Stop(t.Context())
		n.nc.Close()
	}
	w.checkExclusive(t)
}

// TestOwnersCutNodeFencesItself: a node whose link to NATS stops carrying
// anything gives up all its partitions by itself, before the others take
// them (they can only once the leases expire), and within the fence time
// plus a round of renewals.
func TestOwnersCutNodeFencesItself(t *testing.T) {
	t.Parallel()
	ns := startNATS(t)
	const parts = 6
	w := newOwnership()
	link := natstest.NewLink(t, ns.Addr().String())
	cut := startOwner(t, link.URL(), "cut", parts, w)
	other := startOwner(t, ns.ClientURL(), "other", parts, w)
	waitShares(t, parts, []*testNode{cut, other}, []int{3, 3})
	var lost []<-chan struct{} // each closed once its lease is not the cut node's
	for p, epoch := range cut.owners.Owned() {
		lost = append(lost, cut.owners.Lost(p, epoch))
		select {
		case <-cut.owners.Lost(p, epoch+1):
		default:
			t.Errorf("Lost(%d, %d), an epoch the node does not hold: not closed", p, epoch+1)
		}
	}

	link.Cut()
	pausedAt := time.Now()
	testwait.EventuallyNil(t, 30*time.Second, "the cut node to fence itself", func() error {
		if owned := cut.owners.Owned(); len(owned) > 0 {
			return fmt.Errorf("it still holds %v", owned)
		}
		return nil
	})
	fenced := time.Since(pausedAt)
	// Owned leaves a lease out once its validity has run out; the fence
	// loop drops it, and closes its Lost channel, at its next tick.
	testwait.EventuallyNil(t, testTTL/2, "the fenced leases' Lost channels closing", func() error {
		for i, c := range lost {
			select {
			case <-c:
			default:
				return fmt.Errorf("lease %d of the cut node's is fenced, its Lost channel still open", i)
			}
		}
		return nil
	})
	waitShares(t, parts, []*testNode{other}, []int{6})
	t.Logf("cut node fenced itself %v after the cut (TTL %v, fence after %v)", fenced.Round(time.Millisecond), testTTL, testTTL/2)
	if fenced > testTTL {
		t.Errorf("the cut node fenced itself %v after the cut, later than the TTL %v", fenced, testTTL)
	}
	w.checkExclusive(t)

	cut.owners.Kill()
	link.Restore()
	cut.nc.Close()
	other.owners.Stop(t.Context())
	other.nc.Close()
}

// TestOwnersSharesAddUp: five nodes and twelve partitions share 3/3/2/2/2
// by name order, where aiming at ceil(P/N) would leave a node without any.
func TestOwnersSharesAddUp(t *testing.T) {
	t.Parallel()
	ns := startNATS(t)
	const parts = 12
	w := newOwnership()
	var nodes []*testNode
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		nodes = append(nodes, startOwner(t, ns.ClientURL(), name, parts, w))
	}
	waitShares(t, parts, nodes, []int{3, 3, 2, 2, 2})
	for _, n := range nodes {
		n.owners.Stop(t.Context())
		n.nc.Close()
	}
	w.checkExclusive(t)
}

// TestOwnersSlowRelease: a node handing partitions over whose OnRelease
// takes twice the TTL (requests in flight) keeps renewing the rest: they
// stay valid at the same epoch throughout, and the new owner starts on
// the handed-over ones only after OnRelease returned.
func TestOwnersSlowRelease(t *testing.T) {
	t.Parallel()
	ns := startNATS(t)
	const parts = 4
	w := newOwnership()
	a := startOwnerWith(t, ns.ClientURL(), "a", parts, w, 2*testTTL)
	waitShares(t, parts, []*testNode{a}, []int{4})
	b := startOwner(t, ns.ClientURL(), "b", parts, w)
	// a hands two over, one after the other: watch its other two meanwhile.
	var kept map[int]uint64
	testwait.EventuallyNil(t, time.Minute, "b holding two partitions", func() error {
		owned := a.owners.Owned()
		if len(owned) == 2 && kept == nil {
			kept = owned
		}
		if kept != nil && fmt.Sprint(owned) != fmt.Sprint(kept) {
			t.Fatalf("a held %v, then %v, while it handed the others over", kept, owned)
		}
		if bo := b.owners.Owned(); len(bo) != 2 {
			return fmt.Errorf("b holds %v, a %v", bo, owned)
		}
		return nil
	})
	for _, n := range []*testNode{a, b} {
		n.owners.Kill()
		n.nc.Close()
	}
	w.died("a")
	w.died("b")
	w.checkExclusive(t)
}

// TestOwnersStartedTogetherSettle: three nodes started at the same moment,
// with the default TTL (a round every 5 s), hold their shares of 64
// (22, 21, 21) well within one round: each hears the others' joins and
// the partitions handed over as they happen (the bucket's watch), and a
// node taking partitions stops at its share as soon as another node has
// joined. Before, the first node took all 64 and gave 43 back only at its
// next round, and the others took them at theirs.
func TestOwnersStartedTogetherSettle(t *testing.T) {
	t.Parallel()
	ns := startNATS(t)
	const parts = 64
	w := newOwnership()
	nodes := make([]*testNode, 3)
	var wg sync.WaitGroup
	started := time.Now()
	for i, name := range []string{"a", "b", "c"} {
		nc, js := natstest.Connect(t, ns.ClientURL())
		wg.Go(func() {
			o, err := StartOwners(t.Context(), js, OwnersConfig{Node: name, Partitions: parts,
				OnAcquire: func(p int, _ uint64) { w.acquired(name, p) }, OnRelease: func(p int) { w.released(name, p) }})
			if err != nil {
				t.Error(err)
				return
			}
			nodes[i] = &testNode{name: name, owners: o, nc: nc}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	waitShares(t, parts, nodes, []int{22, 21, 21})
	settled := time.Since(started)
	t.Logf("shares settled %v after the three started", settled.Round(time.Millisecond))
	if settled >= DefaultLeaseTTL/6 {
		t.Errorf("shares settled after %v, not within a round (%v)", settled.Round(time.Millisecond), DefaultLeaseTTL/6)
	}
	for _, n := range nodes {
		n.owners.Stop(t.Context())
	}
	w.checkExclusive(t)
}
