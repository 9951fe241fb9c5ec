package jetstream

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsCluster is three JetStream servers routed together on loopback.
type natsCluster struct {
	servers []*server.Server
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startNATSCluster starts three routed JetStream servers and waits until
// the cluster answers JetStream requests (a meta leader is elected).
func startNATSCluster(t *testing.T) *natsCluster {
	t.Helper()
	ports := []int{freePort(t), freePort(t), freePort(t)}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	c := &natsCluster{}
	for i, p := range ports {
		s, err := server.NewServer(&server.Options{
			ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: -1,
			JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
			Cluster: server.ClusterOpts{Name: "weft", Host: "127.0.0.1", Port: p},
			Routes:  server.RoutesFromStr(strings.Join(routes, ",")),
		})
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		c.servers = append(c.servers, s)
	}
	t.Cleanup(func() {
		for _, s := range c.servers {
			s.Shutdown()
			s.WaitForShutdown()
		}
	})
	for _, s := range c.servers {
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatal("a NATS server did not start")
		}
	}
	nc, err := nats.Connect(c.url())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the JetStream cluster is not ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// url lists every server, so that a client fails over.
func (c *natsCluster) url() string {
	var urls []string
	for _, s := range c.servers {
		urls = append(urls, s.ClientURL())
	}
	return strings.Join(urls, ",")
}

// TestOwnersSurviveANATSNode: with the lease bucket replicated on three
// NATS servers, shutting down the one that leads the bucket's stream (the
// cluster keeps its quorum; a server shut down hands its leadership over,
// where a crashed one leaves the others to elect a leader, which takes
// seconds and is why DefaultLeaseTTL is 30 s) moves no partition: the
// nodes reconnect to the others and go on renewing within the fence time.
func TestOwnersSurviveANATSNode(t *testing.T) {
	t.Parallel()
	nc := startNATSCluster(t)
	const (
		parts = 6
		// Long enough that a renewal rides out a leader election (a few
		// seconds) before the fence, at TTL/2.
		ttl = 8 * time.Second
	)
	w := newOwnership()
	var nodes []*testNode
	for _, name := range []string{"a", "b"} {
		conn, err := nats.Connect(nc.url(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		js, _ := jetstream.New(conn)
		var o *Owners
		for try := 0; ; try++ { // the first stream of a new cluster may take a moment
			o, err = StartOwners(t.Context(), js, OwnersConfig{Node: name, Partitions: parts, TTL: ttl, Replicas: 3,
				OnAcquire: func(p int, _ uint64) { w.acquired(name, p) },
				OnRelease: func(p int) { w.released(name, p) }})
			if err == nil || try == 20 {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
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
	for _, s := range nc.servers {
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
	time.Sleep(2 * ttl)
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
