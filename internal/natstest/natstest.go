// Package natstest runs NATS JetStream servers on loopback for tests: one,
// or three routed into a cluster. Every server is shut down when the test
// ends.
package natstest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
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

// Connect connects a test's client to url, closed when the test ends, and
// returns it with its JetStream context.
func Connect(t testing.TB, url string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
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
// cluster answers JetStream requests (a meta leader is elected). A route
// port found free may be taken before its server binds it (other tests
// open ports all the time): then the three start again on other ports.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	var c *Cluster
	for attempt := 1; c == nil; attempt++ {
		if c = startServers(t); c == nil && attempt == 3 {
			t.Fatal("a NATS server did not start, three times")
		}
	}
	t.Cleanup(func() {
		for _, s := range c.Servers {
			s.Shutdown()
			s.WaitForShutdown()
		}
	})
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

// startServers starts three routed servers on route ports found free;
// nil (all shut down) if one does not become ready.
func startServers(t testing.TB) *Cluster {
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
	for _, s := range c.Servers {
		if !s.ReadyForConnections(10 * time.Second) {
			for _, s := range c.Servers {
				s.Shutdown()
				s.WaitForShutdown()
			}
			return nil
		}
	}
	return c
}

// Link forwards TCP from a loopback port to a server until it is cut: then
// it carries nothing either way, but keeps the connections open, as a
// network that stops delivering does (no reset, no FIN), until Restore.
type Link struct {
	ln     net.Listener
	target string
	cut    atomic.Bool
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
	closed bool // the test has ended: a connection accepted now is closed
}

// NewLink listens on a free loopback port and forwards every connection to
// target (host:port). It is closed when the test ends.
func NewLink(t testing.TB, target string) *Link {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &Link{ln: ln, target: target}
	l.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			l.mu.Lock()
			if l.closed {
				l.mu.Unlock()
				c.Close()
				up.Close()
				return
			}
			l.conns = append(l.conns, c, up)
			l.mu.Unlock()
			l.wg.Go(func() { l.pipe(up, c) })
			l.wg.Go(func() { l.pipe(c, up) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		l.mu.Lock()
		l.closed = true
		for _, c := range l.conns {
			c.Close()
		}
		l.mu.Unlock()
		l.wg.Wait()
	})
	return l
}

// URL is the link's address for a NATS client.
func (l *Link) URL() string { return fmt.Sprintf("nats://%s", l.ln.Addr()) }

// Cut stops the link carrying bytes; Restore lets them through again,
// those held back first.
func (l *Link) Cut()     { l.cut.Store(true) }
func (l *Link) Restore() { l.cut.Store(false) }

func (l *Link) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for l.cut.Load() {
			time.Sleep(10 * time.Millisecond)
			if _, err := dst.Write(nil); err != nil {
				return
			}
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // either side gone: the other hears of it
			dst.Close()
			return
		}
	}
}
