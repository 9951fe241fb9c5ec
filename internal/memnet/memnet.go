// Package memnet is a TCP network in memory, for tests that run a crawl on
// fake time (testing/synctest): its listeners and connections are made of
// net.Pipe, whose waits are on channels, so a goroutine blocked on one is
// durably blocked and the bubble's clock moves on while servers and
// clients wait. On the real network a read blocks in the kernel, which a
// bubble cannot see, and its clock would never move.
//
// Addresses are IP:port strings as on TCP; a listener asked for port 0
// gets a free one. Dialling an address nobody listens on fails at once
// with ECONNREFUSED, as on loopback.
package memnet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
)

// Network is one in-memory network. The zero value is not usable; call
// New.
type Network struct {
	mu        sync.Mutex
	listeners map[netip.AddrPort]*Listener
	nextPort  uint16
}

// New returns an empty network.
func New() *Network {
	return &Network{listeners: make(map[netip.AddrPort]*Listener), nextPort: 40000}
}

// Listen listens on address ("127.0.1.4:0" for a free port of that
// address). Only "tcp", "tcp4" and "tcp6" are served.
func (n *Network) Listen(network, address string) (net.Listener, error) {
	if err := tcpOnly(network); err != nil {
		return nil, err
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil, fmt.Errorf("memnet: listen on %q: %w", address, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if ap.Port() == 0 {
		for {
			n.nextPort++
			if n.nextPort == 0 {
				n.nextPort = 1024
			}
			if _, taken := n.listeners[netip.AddrPortFrom(ap.Addr(), n.nextPort)]; !taken {
				break
			}
		}
		ap = netip.AddrPortFrom(ap.Addr(), n.nextPort)
	}
	if _, taken := n.listeners[ap]; taken {
		return nil, &net.OpError{Op: "listen", Net: network, Addr: net.TCPAddrFromAddrPort(ap), Err: syscall.EADDRINUSE}
	}
	l := &Listener{n: n, addr: ap, conns: make(chan net.Conn), done: make(chan struct{})}
	n.listeners[ap] = l
	return l, nil
}

// DialContext connects to address, an IP:port. It has the signature of
// net.Dialer's, so that a client can take either.
func (n *Network) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if err := tcpOnly(network); err != nil {
		return nil, err
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("memnet: %q is not an IP:port", address)}
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	n.mu.Lock()
	l := n.listeners[ap]
	n.mu.Unlock()
	refused := &net.OpError{Op: "dial", Net: network, Addr: net.TCPAddrFromAddrPort(ap), Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	if l == nil {
		return nil, refused
	}
	client, server := net.Pipe()
	n.mu.Lock()
	n.nextPort++
	local := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), n.nextPort)
	n.mu.Unlock()
	cc := &conn{Conn: client, local: net.TCPAddrFromAddrPort(local), remote: net.TCPAddrFromAddrPort(ap)}
	sc := &conn{Conn: server, local: net.TCPAddrFromAddrPort(ap), remote: net.TCPAddrFromAddrPort(local)}
	select {
	case l.conns <- sc:
		return cc, nil
	case <-l.done:
		client.Close()
		server.Close()
		return nil, refused
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, &net.OpError{Op: "dial", Net: network, Addr: net.TCPAddrFromAddrPort(ap), Err: ctx.Err()}
	}
}

func tcpOnly(network string) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
		return nil
	}
	return fmt.Errorf("memnet: network %q: only tcp is served", network)
}

// Listener is a net.Listener of a Network.
type Listener struct {
	n     *Network
	addr  netip.AddrPort
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

// Accept waits for the next connection. A dial waits until it is
// accepted, as a full backlog would make it.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: net.ErrClosed}
	}
}

// Close stops accepting; the address is free again. Connections already
// made stay open.
func (l *Listener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.n.mu.Lock()
		delete(l.n.listeners, l.addr)
		l.n.mu.Unlock()
	})
	return nil
}

// Addr is the listener's address, a *net.TCPAddr.
func (l *Listener) Addr() net.Addr { return net.TCPAddrFromAddrPort(l.addr) }

// conn is one end of a pipe with TCP addresses: servers log and judge
// their peers' addresses.
type conn struct {
	net.Conn
	local, remote net.Addr
}

func (c *conn) LocalAddr() net.Addr  { return c.local }
func (c *conn) RemoteAddr() net.Addr { return c.remote }
