package jetstream

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/natstest"
	"github.com/weft-crawler/weft/internal/testwait"
)

// TestOwnersSurviveANATSNode: with the lease bucket replicated on three
// NATS servers, shutting down the one that leads the bucket's stream (the
// cluster keeps its quorum; a server shut down hands its leadership over,
// where a crashed one leaves the others to elect a leader, which takes
// seconds and is why DefaultLeaseTTL is 30 s) moves no partition: the
// nodes reconnect to the others and go on renewing within the fence time.
func TestOwnersSurviveANATSNode(t *testing.T) {
	t.Parallel()
	nc := natstest.StartCluster(t)
	const (
		parts = 6
		// Long enough that a renewal rides out a leader election (a few
		// seconds, more on a loaded machine: at 8 s, CI once saw both
		// nodes fenced and re-acquire) before the fence, at TTL/2.
		ttl = 12 * time.Second
	)
	w := newOwnership()
	var nodes []*testNode
	for _, name := range []string{"a", "b"} {
		conn, err := nats.Connect(nc.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		js, _ := jetstream.New(conn)
		var o *Owners
		// The first stream of a new cluster may take a moment.
		testwait.EventuallyNil(t, 30*time.Second, "node "+name+" started", func() (err error) {
			o, err = StartOwners(t.Context(), js, OwnersConfig{Node: name, Partitions: parts, TTL: ttl, Replicas: 3,
				OnAcquire: func(p int, _ uint64) { w.acquired(name, p) },
				OnRelease: func(p int) { w.released(name, p) }})
			return err
		})
		nodes = append(nodes, &testNode{name: name, owners: o, nc: conn})
	}
	waitShares(t, parts, nodes, []int{3, 3})
	before := map[string]map[int]uint64{"a": nodes[0].owners.Owned(), "b": nodes[1].owners.Owned()}

	js, _ := jetstream.New(nodes[0].nc)
	st, err := js.Stream(t.Context(), "KV_"+DefaultOwnersBucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context())
	if err != nil || info.Cluster == nil {
		t.Fatalf("stream info %+v: %v", info, err)
	}
	killed := false
	for _, s := range nc.Servers {
		if s.Name() == info.Cluster.Leader {
			s.Shutdown()
			s.WaitForShutdown()
			killed = true
		}
	}
	if !killed {
		t.Fatalf("no server named %q leads the bucket", info.Cluster.Leader)
	}
	// Two lease lifetimes later, everything is still owned as before.
	time.Sleep(2 * ttl) // the span under test: leases not renewed would have expired
	waitShares(t, parts, nodes, []int{3, 3})
	for i, n := range nodes {
		if got := n.owners.Owned(); fmt.Sprint(got) != fmt.Sprint(before[n.name]) {
			t.Errorf("node %d: held %v before the NATS node died, %v after", i, before[n.name], got)
		}
	}
	for _, n := range nodes {
		n.owners.Stop(t.Context())
		n.nc.Close()
	}
	w.checkExclusive(t)
}
