package fetch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// TTLResolver is a Resolver that also says how long its answer may be
// kept: the smallest TTL of the records it was read from, or zero when it
// cannot tell (a hosts file). The DNS cache keeps a positive answer that
// long, within Config.DNSMinTTL and Config.DNSMaxTTL.
type TTLResolver interface {
	Resolver
	LookupTTL(ctx context.Context, host string) ([]netip.Addr, time.Duration, error)
}

// DNSClient is a stub resolver that asks name servers itself (with
// github.com/miekg/dns), because the standard library's resolver gives no
// TTL. It answers names of the hosts file first, as "hosts: files dns"
// does, and asks the others of its servers, A and AAAA at once, each
// server in turn, again over TCP when an answer comes back truncated. A
// crawler's names are absolute: no search domain is tried.
type DNSClient struct {
	servers  []string                // host:port, in order
	hosts    map[string][]netip.Addr // lower case, no trailing dot
	attempts int
	udp, tcp *dns.Client
}

// NewDNSClient returns a client of servers (host:port), with names of
// hosts answered without a query, each query given timeout, and every
// server asked up to attempts times.
func NewDNSClient(servers []string, hosts map[string][]netip.Addr, timeout time.Duration, attempts int) *DNSClient {
	return &DNSClient{
		servers: servers, hosts: hosts, attempts: max(attempts, 1),
		udp: &dns.Client{Net: "udp", Timeout: timeout, UDPSize: 1232},
		tcp: &dns.Client{Net: "tcp", Timeout: timeout},
	}
}

// SystemDNSClient is the client of the machine's name servers, read from
// resolvConf (/etc/resolv.conf: its nameserver, timeout and attempts
// lines), with the names of hostsFile (/etc/hosts) answered from it; a
// missing hosts file is an empty one.
func SystemDNSClient(resolvConf, hostsFile string) (*DNSClient, error) {
	cc, err := dns.ClientConfigFromFile(resolvConf)
	if err != nil {
		return nil, fmt.Errorf("fetch: name servers: %w", err)
	}
	if len(cc.Servers) == 0 {
		return nil, fmt.Errorf("fetch: name servers: %s names none", resolvConf)
	}
	servers := make([]string, len(cc.Servers))
	for i, s := range cc.Servers {
		servers[i] = net.JoinHostPort(s, cc.Port)
	}
	hosts, err := readHosts(hostsFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return NewDNSClient(servers, hosts, time.Duration(cc.Timeout)*time.Second, cc.Attempts), nil
}

// readHosts reads a hosts file: an address, then its names, per line;
// "#" starts a comment. A line whose address does not parse is skipped, as
// the C library does.
func readHosts(path string) (map[string][]netip.Addr, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("fetch: hosts file: %w", err)
	}
	defer f.Close()
	hosts := map[string][]netip.Addr{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		ip, err := netip.ParseAddr(fields[0])
		if err != nil {
			continue
		}
		for _, name := range fields[1:] {
			name = strings.ToLower(strings.TrimSuffix(name, "."))
			hosts[name] = append(hosts[name], ip.WithZone("").Unmap())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fetch: hosts file %s: %w", path, err)
	}
	return hosts, nil
}

// LookupNetIP is LookupTTL without the TTL, for Resolver.
func (c *DNSClient) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	addrs, _, err := c.LookupTTL(ctx, host)
	return addrs, err
}

// LookupTTL returns host's IPv4 addresses, then its IPv6 ones, and the
// smallest TTL of the records they were read from (CNAMEs on the way
// included); zero for a name of the hosts file. A name that does not
// exist, or has no address, is a *net.DNSError with IsNotFound; servers
// that fail or do not answer give one with IsTemporary or IsTimeout.
func (c *DNSClient) LookupTTL(ctx context.Context, host string) ([]netip.Addr, time.Duration, error) {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if addrs, ok := c.hosts[name]; ok {
		return addrs, 0, nil
	}
	type answer struct {
		addrs []netip.Addr
		ttl   time.Duration
		err   error
	}
	six := make(chan answer, 1)
	go func() {
		a, ttl, err := c.query(ctx, name, dns.TypeAAAA)
		six <- answer{a, ttl, err}
	}()
	v4, ttl4, err4 := c.query(ctx, name, dns.TypeA)
	v6 := <-six
	addrs := append(v4, v6.addrs...)
	switch {
	case len(v4) > 0 && len(v6.addrs) > 0:
		return addrs, min(ttl4, v6.ttl), nil
	case len(v4) > 0:
		return addrs, ttl4, nil
	case len(v6.addrs) > 0:
		return addrs, v6.ttl, nil
	}
	// No address: the failure that says most. A server error or silence
	// on either question may yet hide an address; "not found" on both
	// (or no such record) does not.
	for _, err := range []error{err4, v6.err} {
		var de *net.DNSError
		if errors.As(err, &de) && !de.IsNotFound {
			return nil, 0, err
		}
	}
	if err4 != nil {
		return nil, 0, err4
	}
	if v6.err != nil {
		return nil, 0, v6.err
	}
	return nil, 0, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// query asks the servers in turn for the records of type qtype of name
// until one answers it (with records, with none, or that it does not
// exist), and reads the addresses and TTL from that answer.
func (c *DNSClient) query(ctx context.Context, name string, qtype uint16) ([]netip.Addr, time.Duration, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.SetEdns0(1232, false)
	var last error = &net.DNSError{Err: "no name server answered", Name: name, IsTemporary: true}
	for range c.attempts {
		for _, server := range c.servers {
			if err := ctx.Err(); err != nil {
				return nil, 0, &net.DNSError{Err: err.Error(), Name: name, IsTimeout: true}
			}
			r, _, err := c.udp.ExchangeContext(ctx, m, server)
			if err == nil && r.Truncated {
				r, _, err = c.tcp.ExchangeContext(ctx, m, server)
			}
			if err != nil {
				de := &net.DNSError{Err: err.Error(), Name: name, Server: server, IsTemporary: true}
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					de.IsTimeout = true
				}
				last = de
				continue
			}
			switch r.Rcode {
			case dns.RcodeSuccess:
				addrs, ttl := readAnswer(r, dns.Fqdn(name), qtype)
				if len(addrs) == 0 {
					return nil, 0, &net.DNSError{Err: "no such host", Name: name, Server: server, IsNotFound: true}
				}
				return addrs, ttl, nil
			case dns.RcodeNameError:
				return nil, 0, &net.DNSError{Err: "no such host", Name: name, Server: server, IsNotFound: true}
			default: // SERVFAIL, REFUSED, ...: the next server may know
				last = &net.DNSError{Err: "server answered " + rcodeName(r.Rcode), Name: name, Server: server, IsTemporary: true}
			}
		}
	}
	return nil, 0, last
}

// maxCNAMEs bounds the chain of aliases followed in one answer.
const maxCNAMEs = 8

// readAnswer returns the addresses of type qtype that an answer gives for
// qname, following its CNAME chain, and the smallest TTL of the records on
// that path.
func readAnswer(r *dns.Msg, qname string, qtype uint16) ([]netip.Addr, time.Duration) {
	target := qname
	ttl := uint32(1<<32 - 1)
	for range maxCNAMEs {
		next := ""
		for _, rr := range r.Answer {
			if cn, ok := rr.(*dns.CNAME); ok && strings.EqualFold(cn.Hdr.Name, target) {
				next, ttl = cn.Target, min(ttl, cn.Hdr.Ttl)
				break
			}
		}
		if next == "" {
			break
		}
		target = next
	}
	var addrs []netip.Addr
	for _, rr := range r.Answer {
		if !strings.EqualFold(rr.Header().Name, target) || rr.Header().Rrtype != qtype {
			continue
		}
		var ip net.IP
		switch a := rr.(type) {
		case *dns.A:
			ip = a.A
		case *dns.AAAA:
			ip = a.AAAA
		}
		if addr, ok := netip.AddrFromSlice(ip); ok {
			addrs = append(addrs, addr.Unmap())
			ttl = min(ttl, rr.Header().Ttl)
		}
	}
	if len(addrs) == 0 {
		return nil, 0
	}
	// A TTL of 0 (do not cache) reads as a second, so that it stays apart
	// from "cannot tell"; the cache's floor applies to it like any other.
	return addrs, time.Duration(max(ttl, 1)) * time.Second
}

func rcodeName(rc int) string {
	if s, ok := dns.RcodeToString[rc]; ok {
		return s
	}
	return strconv.Itoa(rc)
}
