package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
	"golang.org/x/sync/singleflight"
)

// dialer makes every connection of a Fetcher. It resolves the host itself
// (Resolve map, then a cached Resolver) and dials IP literals only, with the
// SSRF guard as the socket's Control function: the guard therefore judges
// the address actually connected to, after DNS, on every dial.
type dialer struct {
	guard      *guard
	resolve    map[string]netip.Addr // normalized host -> address
	cache      *dnsCache
	net        Dialer // net.Dialer with the guard as Control, or Config.Dialer behind the guard
	idle       time.Duration
	tls        *tls.Config
	tlsTimeout time.Duration
	insecure   *insecureHosts // Config.InsecureTLS; nil when none
}

func newDialer(cfg *Config) *dialer {
	var v4, v6 []netip.Prefix
	for _, p := range cfg.AllowCIDRs {
		p = unmapPrefix(p)
		if p.Addr().Is4() {
			v4 = append(v4, p)
		} else {
			v6 = append(v6, p)
		}
	}
	deny := make([]netip.Prefix, len(cfg.DenyCIDRs))
	for i, p := range cfg.DenyCIDRs {
		deny[i] = unmapPrefix(p)
	}
	guard := &guard{
		deny: deny,
		ssrf: ssrf.New(
			ssrf.WithAnyPort(),
			ssrf.WithAllowedV4Prefixes(v4...),
			ssrf.WithAllowedV6Prefixes(v6...),
		),
	}
	resolve := make(map[string]netip.Addr, len(cfg.Resolve))
	for h, ip := range cfg.Resolve {
		resolve[normalizeHost(h)] = netip.MustParseAddr(ip).Unmap() // checked by Validate
	}
	r := cfg.Resolver
	if r == nil {
		r = systemResolver()
	}
	tlsCfg := cfg.TLSConfig
	if tlsCfg == nil {
		tlsCfg = &tls.Config{}
	}
	if len(tlsCfg.NextProtos) == 0 {
		tlsCfg.NextProtos = []string{"http/1.1"}
		if cfg.HTTP2 {
			tlsCfg.NextProtos = []string{"h2", "http/1.1"}
		}
	}
	var nd Dialer = &net.Dialer{Timeout: cfg.ConnectTimeout, Control: guard.control}
	if cfg.Dialer != nil {
		nd = guardedDialer{guard: guard, next: cfg.Dialer, timeout: cfg.ConnectTimeout}
	}
	return &dialer{
		guard:      guard,
		resolve:    resolve,
		cache:      newDNSCache(r, dnsTTLs{cfg.DNSCacheTTL, cfg.DNSMinTTL, cfg.DNSMaxTTL, cfg.DNSNegativeTTL}, cfg.ConnectTimeout, time.Now),
		net:        nd,
		idle:       cfg.IdleTimeout,
		tls:        tlsCfg,
		tlsTimeout: cfg.TLSHandshakeTimeout,
		insecure:   newInsecureHosts(cfg.InsecureTLS),
	}
}

// systemResolver is the machine's: its name servers asked directly, so
// that answers' TTLs are known, or the standard library's resolver where
// /etc/resolv.conf cannot be read (its answers are kept Config.DNSCacheTTL).
func systemResolver() Resolver {
	if c, err := SystemDNSClient("/etc/resolv.conf", "/etc/hosts"); err == nil {
		return c
	}
	return net.DefaultResolver
}

// lookup returns the addresses to try for host, in order.
func (d *dialer) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip.Unmap()}, nil
	}
	name := normalizeHost(host)
	if ip, ok := d.resolve[name]; ok {
		return []netip.Addr{ip}, nil
	}
	return d.cache.lookup(ctx, name)
}

// dial is the Transport's DialContext: a connection whose exchanges are
// recorded (wireConn). addr is host:port as net/http makes it (IPv6
// literals in brackets).
func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.dialTCP(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &wireConn{Conn: c, idle: d.idle}, nil
}

// dialTCP connects to addr through the guard.
func (d *dialer) dialTCP(ctx context.Context, addr string) (*idleConn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &dialError{KindBadURL, err}
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, &dialError{KindBadURL, fmt.Errorf("bad port in %q: %w", addr, err)}
	}
	ips, err := d.lookup(ctx, host)
	if err != nil {
		return nil, &dialError{KindDNS, err}
	}
	// Try the addresses in order. A refused address is skipped, not fatal:
	// the guard judges each address, so a name that mixes a private and a
	// public address still only ever reaches the public one.
	var errs []error
	kind := KindRefused
	for _, ip := range ips {
		c, err := d.net.DialContext(ctx, "tcp", netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return &idleConn{Conn: c, idle: d.idle, armed: true}, nil
		}
		errs = append(errs, err)
		if !isRefused(err) && kind == KindRefused {
			kind = KindConnect
			if isTimeout(err) {
				kind = KindTimeout
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, &dialError{kind, errors.Join(errs...)}
}

// dialTLS is the Transport's DialTLSContext. Doing the handshake here, not
// in net/http, lets every handshake failure be classified as KindTLS.
// Over HTTP/1.x the TLS connection is recorded above TLS (wireConn); one
// that negotiated h2 is returned bare, for net/http to see the protocol
// and speak it (its exchanges are archived in HTTP/1.1 form, see
// Response).
func (d *dialer) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	ic, err := d.dialTCP(ctx, addr)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(addr) // cannot fail: dial parsed it
	cfg := d.tls.Clone()
	cfg.ServerName = host
	var certErr error // a verification failure accepted for this host
	if d.insecure.match(host) {
		acceptUnverified(cfg, &certErr)
		// Over h2 net/http takes the bare connection, which could not
		// carry the failure to the Response.
		cfg.NextProtos = []string{"http/1.1"}
	}
	// The silence timer stays off during the handshake: the handshake has
	// its own bound, TLSHandshakeTimeout.
	ic.armed = false
	tc := tls.Client(ic, cfg)
	hctx, cancel := context.WithTimeout(ctx, d.tlsTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		_ = ic.Close()
		kind := KindTLS
		if hctx.Err() != nil {
			kind = KindTimeout
			if ctx.Err() == nil { // the handshake's own bound, not the request's
				err = &overTime{"not complete", d.tlsTimeout, err}
			}
		}
		return nil, &dialError{kind, &handshakeError{addr: ic.RemoteAddr().String(), err: err}}
	}
	ic.armed = true
	state := tc.ConnectionState()
	if state.NegotiatedProtocol == "h2" {
		return tc, nil
	}
	return &wireConn{Conn: tc, idle: d.idle, tls: &state, certErr: certErr}, nil
}

// guard judges every address before a socket connects to it: first the
// operator's deny list, which wins over everything, then the ssrf
// Guardian (the operator's allow list, then the special-purpose registries
// of IANA: loopback, private, link-local, shared, benchmark, documentation,
// multicast and reserved IPv4 ranges, and all IPv6 outside global unicast
// or in its special ranges, IPv4-mapped forms included).
type guard struct {
	deny []netip.Prefix
	ssrf *ssrf.Guardian
}

// unmapPrefix writes a prefix of IPv4-mapped IPv6 addresses
// (::ffff:a.b.c.d/n, n >= 96) as the IPv4 prefix it covers, so that it
// matches the unmapped addresses that are dialled; other prefixes are only
// masked.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96).Masked()
	}
	return p.Masked()
}

// check judges one address as the socket would reach it.
func (g *guard) check(network string, ap netip.AddrPort) error {
	ip := ap.Addr()
	if err := g.denied(ip.Unmap()); err != nil {
		return err
	}
	if err := g.ssrf.Safe(network, ap.String(), nil); err != nil {
		return err
	}
	// An IPv6 address that carries an IPv4 one to a translator (NAT64's
	// 64:ff9b::/96, 6to4's 2002::/16), once an operator allows its
	// prefix, reaches that IPv4 address: judge it too, so that
	// 64:ff9b::a9fe:a9fe is 169.254.169.254.
	if v4, ok := embeddedIPv4(ip); ok {
		if err := g.denied(v4); err != nil {
			return err
		}
		if err := g.ssrf.SafeAddr(v4); err != nil {
			return err
		}
	}
	return nil
}

// denied judges ip, unmapped, against the operator's deny list.
func (g *guard) denied(ip netip.Addr) error {
	for _, p := range g.deny {
		// Prefixes are unmapped (unmapPrefix), and so is the address:
		// "::ffff:10.0.0.1" cannot slip past a 10.0.0.0/8.
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s is denied by %s", ssrf.ErrProhibitedIP, ip, p)
		}
	}
	return nil
}

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 returns the IPv4 address an IPv6 address of NAT64's
// well-known prefix or of 6to4 carries.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case !ip.Is6() || ip.Is4In6():
		return netip.Addr{}, false
	case nat64Prefix.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// control is the dialer's Control function: it runs after the socket is
// made and before it connects, with the address it connects to.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: could not parse %s: %v", ssrf.ErrInvalidHostPort, address, err)
	}
	return g.check(network, ap)
}

// guardedDialer puts the guard in front of a Config.Dialer, which has no
// socket whose Control could judge the address.
type guardedDialer struct {
	guard   *guard
	next    Dialer
	timeout time.Duration
}

func (g guardedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	// A socket's Control sees the family the address was dialled in.
	family := "tcp4"
	if ap, err := netip.ParseAddrPort(address); err == nil && ap.Addr().Unmap().Is6() {
		family = "tcp6"
	}
	if err := g.guard.control(family, address, nil); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	if g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	return g.next.DialContext(ctx, network, address)
}

func isRefused(err error) bool {
	return errors.Is(err, ssrf.ErrProhibitedIP) || errors.Is(err, ssrf.ErrProhibitedPort) ||
		errors.Is(err, ssrf.ErrProhibitedNetwork)
}

// idleConn enforces the silence timeout: every Read pushes the read
// deadline IdleTimeout into the future, so a peer that stays silent longer
// than that is cut, however long the whole exchange takes. The total
// duration is bounded separately by the request's context.
//
// A Write pushes the read deadline too. net/http keeps a Read pending on
// every connection, idle ones included (to notice the server closing), and
// that Read's deadline was set when it began: without the push, a request
// sent on a connection that had been idle for most of IdleTimeout would give
// the server only the rest of it to answer.
type idleConn struct {
	net.Conn
	idle time.Duration
	// armed is false only during the TLS handshake, before the conn is
	// shared with net/http; no synchronization is needed.
	armed bool
}

func (c *idleConn) Read(p []byte) (int, error) {
	if c.armed {
		if err := c.Conn.SetReadDeadline(time.Now().Add(c.idle)); err != nil {
			return 0, err
		}
	}
	return c.Conn.Read(p)
}

func (c *idleConn) Write(p []byte) (int, error) {
	if c.armed {
		d := time.Now().Add(c.idle)
		if err := c.Conn.SetDeadline(d); err != nil {
			return 0, err
		}
	}
	return c.Conn.Write(p)
}

// maxDNSEntries bounds the DNS cache; a crawler meets millions of names.
const maxDNSEntries = 1 << 16

// dnsCache caches lookups and coalesces concurrent lookups of one name
// into a single query. A positive answer is kept for its TTL, within
// [minTTL, maxTTL], when the resolver tells it (a TTLResolver), else for
// ttl; a failure for negTTL.
type dnsCache struct {
	resolver       Resolver
	ttl            time.Duration // of an answer whose TTL is not known
	minTTL, maxTTL time.Duration // bound the TTL an answer gives
	negTTL         time.Duration
	timeout        time.Duration // bounds one shared lookup
	now            func() time.Time
	max            int

	group singleflight.Group

	mu      sync.Mutex
	entries map[string]dnsEntry

	hits, misses atomic.Int64 // lookups answered from the cache, and not
}

type dnsEntry struct {
	addrs   []netip.Addr // shared by all readers: never modified
	err     error
	expires time.Time
}

// dnsTTLs are the cache's lifetimes: of an answer without a TTL, the
// bounds of one with, and of a failure.
type dnsTTLs struct{ fallback, min, max, negative time.Duration }

func newDNSCache(r Resolver, ttls dnsTTLs, timeout time.Duration, now func() time.Time) *dnsCache {
	return &dnsCache{
		resolver: r,
		ttl:      ttls.fallback,
		minTTL:   ttls.min,
		maxTTL:   ttls.max,
		negTTL:   ttls.negative,
		timeout:  timeout,
		now:      now,
		max:      maxDNSEntries,
		entries:  make(map[string]dnsEntry),
	}
}

// lookup returns the cached answer for name, or resolves it. The returned
// slice must not be modified.
func (c *dnsCache) lookup(ctx context.Context, name string) ([]netip.Addr, error) {
	c.mu.Lock()
	e, ok := c.entries[name]
	c.mu.Unlock()
	if ok && c.now().Before(e.expires) {
		c.hits.Add(1)
		return e.addrs, e.err
	}
	c.misses.Add(1)
	ch := c.group.DoChan(name, func() (any, error) {
		// The query is shared by every waiter, so one waiter giving up must
		// not cancel it for the others; it is bounded by its own timeout.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout)
		defer cancel()
		var addrs []netip.Addr
		var ttl time.Duration
		var err error
		if tr, ok := c.resolver.(TTLResolver); ok {
			addrs, ttl, err = tr.LookupTTL(lctx, name)
		} else {
			addrs, err = c.resolver.LookupNetIP(lctx, "ip", name)
		}
		addrs, err = cleanAddrs(name, addrs, err)
		c.store(name, addrs, ttl, err)
		return addrs, err
	})
	select {
	case r := <-ch:
		addrs, _ := r.Val.([]netip.Addr)
		return addrs, r.Err
	case <-ctx.Done():
		return nil, fmt.Errorf("lookup %s: %w", name, ctx.Err())
	}
}

// cleanAddrs unmaps IPv4-mapped addresses (so the guard applies its IPv4
// rules and the dial uses tcp4), drops invalid ones, and turns an empty
// answer into a not-found error.
func cleanAddrs(name string, addrs []netip.Addr, err error) ([]netip.Addr, error) {
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if a.IsValid() {
			out = append(out, a.Unmap())
		}
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: name, IsNotFound: true}
	}
	return out, nil
}

// store keeps an answer: for the TTL it came with (zero: not known).
func (c *dnsCache) store(name string, addrs []netip.Addr, ttl time.Duration, err error) {
	now := c.now()
	switch {
	case err != nil:
		ttl = c.negTTL
	case ttl <= 0:
		ttl = c.ttl
	default:
		ttl = min(max(ttl, c.minTTL), c.maxTTL)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		// Drop expired entries; if that is not enough, drop arbitrary ones
		// down to three quarters so that the next sweep is max/4 inserts away.
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.max*3/4 {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[name] = dnsEntry{addrs: addrs, err: err, expires: now.Add(ttl)}
}

// AddressKind names the special range an address the guard refuses by
// default is in, for a message that says why.
func AddressKind(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast():
		return "a link-local address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsMulticast():
		return "a multicast address"
	}
	return "in a special-purpose range (carrier-grade NAT, benchmarking, documentation, metadata...)"
}
