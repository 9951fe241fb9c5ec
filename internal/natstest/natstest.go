// Package natstest runs NATS JetStream servers on loopback for tests: one,
// or three routed into a cluster. Every server is shut down when the test
// ends.
package natstest

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

// Start runs one JetStream server on a free loopback port.
func Start(t testing.TB) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// Cluster is three JetStream servers routed together on loopback.
type Cluster struct {
	Servers []*server.Server
}

// URL lists every server, so that a client fails over.
func (c *Cluster) URL() string {
	var urls []string
	for _, s := range c.Servers {
		urls = append(urls, s.ClientURL())
	}
	return strings.Join(urls, ",")
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// StartCluster starts three routed JetStream servers and waits until the
// cluster answers JetStream requests (a meta leader is elected).
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	ports := []int{freePort(t), freePort(t), freePort(t)}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	c := &Cluster{}
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
		c.Servers = append(c.Servers, s)
	}
	t.Cleanup(func() {
		for _, s := range c.Servers {
			s.Shutdown()
			s.WaitForShutdown()
		}
	})
	for _, s := range c.Servers {
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatal("a NATS server did not start")
		}
	}
	nc, err := nats.Connect(c.URL())
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
