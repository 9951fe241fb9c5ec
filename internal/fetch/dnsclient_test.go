package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// zone is a name server's data: per name, its records, in zone-file
// syntax; a name with "SERVFAIL" fails, one not listed does not exist.
type zone map[string][]string

// dnsServer is a name server on loopback, UDP and TCP on one port, that
// answers from a zone and logs every question it was asked, with the
// transport it came over.
type dnsServer struct {
	addr string
	mu   sync.Mutex
	log  []string // "udp a.test. A"
}

func startDNS(t *testing.T, z zone) *dnsServer {
	t.Helper()
	s := &dnsServer{}
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		question := q.Question[0]
		s.mu.Lock()
		s.log = append(s.log, fmt.Sprintf("%s %s %s", w.LocalAddr().Network(), question.Name, dns.TypeToString[question.Qtype]))
		s.mu.Unlock()
		m := new(dns.Msg)
		m.SetReply(q)
		records, ok := z[question.Name]
		switch {
		case !ok:
			m.Rcode = dns.RcodeNameError
		case len(records) == 1 && records[0] == "SERVFAIL":
			m.Rcode = dns.RcodeServerFailure
		}
		// The records on the question's CNAME chain, as a recursive
		// server gives them.
		name := question.Name
		for range maxCNAMEs {
			next := ""
			for _, text := range z[name] {
				rr, err := dns.NewRR(name + " " + text)
				if err != nil {
					continue
				}
				switch {
				case rr.Header().Rrtype == dns.TypeCNAME:
					m.Answer = append(m.Answer, rr)
					next = rr.(*dns.CNAME).Target
				case rr.Header().Rrtype == question.Qtype:
					m.Answer = append(m.Answer, rr)
				}
			}
			if next == "" {
				break
			}
			name = next
		}
		if w.LocalAddr().Network() == "udp" {
			size := dns.MinMsgSize
			if opt := q.IsEdns0(); opt != nil {
				size = int(opt.UDPSize())
			}
			m.Truncate(size)
		}
		w.WriteMsg(m)
	})
	// UDP and TCP on one port: the UDP port the kernel picks may be taken
	// for TCP by another test's listener, so try a few.
	var pc net.PacketConn
	var ln net.Listener
	for try := 0; ; try++ {
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		s.addr = pc.LocalAddr().String()
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		pc.Close()
		if try == 20 {
			t.Fatal(err)
		}
	}
	udp := &dns.Server{PacketConn: pc, Handler: handler}
	tcp := &dns.Server{Listener: ln, Handler: handler}
	var wg sync.WaitGroup
	for _, srv := range []*dns.Server{udp, tcp} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv.ActivateAndServe()
		}()
		<-started
	}
	t.Cleanup(func() {
		udp.Shutdown()
		tcp.Shutdown()
		wg.Wait()
	})
	return s
}

// asked returns the questions logged, in order, and forgets them.
func (s *dnsServer) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.log
	s.log = nil
	slices.Sort(l)
	return l
}

func manyA(n int) []string {
	rrs := make([]string, n)
	for i := range rrs {
		rrs[i] = fmt.Sprintf("300 IN A 127.0.%d.%d", 10+i/250, 1+i%250)
	}
	return rrs
}

// TestDNSClient asks a name server on loopback: the answer's addresses,
// IPv4 first, with the smallest TTL on the path (CNAMEs included); a zero
// TTL read as a second; a name that does not exist, or has no address,
// not found; a truncated answer asked again over TCP; a failing server
// passed over for the next; a name of the hosts file answered without a
// query and without a TTL.
func TestDNSClient(t *testing.T) {
	z := zone{
		"a.test.":     {"7 IN A 127.0.0.10", "9 IN A 127.0.0.11", "20 IN AAAA ::1"},
		"alias.test.": {"3 IN CNAME a.test."},
		"zero.test.":  {"0 IN A 127.0.0.12"},
		"v6.test.":    {"30 IN AAAA ::1"},
		"mx.test.":    {"30 IN MX 10 a.test."},
		"big.test.":   manyA(150),
	}
	ok := startDNS(t, z)
	failing := startDNS(t, zone{"a.test.": {"SERVFAIL"}, "alias.test.": {"SERVFAIL"}, "zero.test.": {"SERVFAIL"},
		"v6.test.": {"SERVFAIL"}, "mx.test.": {"SERVFAIL"}, "big.test.": {"SERVFAIL"}})
	hosts := map[string][]netip.Addr{"files.test": {netip.MustParseAddr("127.0.0.99")}}
	c := NewDNSClient([]string{failing.addr, ok.addr}, hosts, 2*time.Second, 1)
	ctx := t.Context()

	for _, tc := range []struct {
		name  string
		addrs []string
		ttl   time.Duration
	}{
		{"a.test", []string{"127.0.0.10", "127.0.0.11", "::1"}, 7 * time.Second},
		{"Alias.Test.", []string{"127.0.0.10", "127.0.0.11", "::1"}, 3 * time.Second},
		{"zero.test", []string{"127.0.0.12"}, time.Second},
		{"v6.test", []string{"::1"}, 30 * time.Second},
		{"files.test", []string{"127.0.0.99"}, 0},
	} {
		addrs, ttl, err := c.LookupTTL(ctx, tc.name)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var got []string
		for _, a := range addrs {
			got = append(got, a.String())
		}
		if !slices.Equal(got, tc.addrs) || ttl != tc.ttl {
			t.Errorf("%s: %v for %v, want %v for %v", tc.name, got, ttl, tc.addrs, tc.ttl)
		}
	}
	if l := ok.asked(); !slices.Contains(l, "udp a.test. A") || !slices.Contains(l, "udp a.test. AAAA") || slices.ContainsFunc(l, func(q string) bool { return strings.Contains(q, "files.test") }) {
		t.Errorf("the name server was asked %v", l)
	}
	if l := failing.asked(); !slices.Contains(l, "udp a.test. A") {
		t.Errorf("the failing server, first in the list, was asked %v", l)
	}

	addrs, ttl, err := c.LookupTTL(ctx, "big.test")
	if err != nil || len(addrs) != 150 || ttl != 300*time.Second {
		t.Errorf("big.test: %d addresses for %v, %v; want 150 for 5m", len(addrs), ttl, err)
	}
	if l := ok.asked(); !slices.Contains(l, "udp big.test. A") || !slices.Contains(l, "tcp big.test. A") {
		t.Errorf("a truncated answer was not asked again over TCP: %v", l)
	}

	for _, name := range []string{"gone.test", "mx.test"} {
		_, _, err := c.LookupTTL(ctx, name)
		var de *net.DNSError
		if !errors.As(err, &de) || !de.IsNotFound {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	// Every server failing: a temporary error, not "not found".
	failing.asked()
	bad := NewDNSClient([]string{failing.addr}, nil, 2*time.Second, 2)
	_, _, err = bad.LookupTTL(ctx, "a.test")
	var de *net.DNSError
	if !errors.As(err, &de) || de.IsNotFound || !de.IsTemporary {
		t.Errorf("every server failing: %v, want a temporary error", err)
	}
	if n := len(failing.asked()); n != 4 {
		t.Errorf("every server failing, asked twice for A and AAAA: %d questions, want 4", n)
	}
}

// ttlResolver answers a.test with a TTL and counts its lookups.
type ttlResolver struct {
	mu    sync.Mutex
	ttl   time.Duration
	calls int
}

func (r *ttlResolver) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	a, _, err := r.LookupTTL(ctx, host)
	return a, err
}

func (r *ttlResolver) LookupTTL(context.Context, string) ([]netip.Addr, time.Duration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	return []netip.Addr{addrA}, r.ttl, nil
}

// TestDNSCacheFollowsTTL keeps an answer for its TTL, within the cache's
// floor and ceiling (newTestCache: 5 s and 1 h), and one without a TTL for
// the fallback (1 m).
func TestDNSCacheFollowsTTL(t *testing.T) {
	for _, tc := range []struct {
		ttl, kept time.Duration
	}{
		{7 * time.Second, 7 * time.Second},
		{time.Second, 5 * time.Second},
		{48 * time.Hour, time.Hour},
		{0, time.Minute},
	} {
		r := &ttlResolver{ttl: tc.ttl}
		c, clk := newTestCache(r)
		lookup := func() int {
			t.Helper()
			if _, err := c.lookup(t.Context(), "a.test"); err != nil {
				t.Fatal(err)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.calls
		}
		lookup()
		clk.advance(tc.kept - time.Millisecond)
		if n := lookup(); n != 1 {
			t.Errorf("TTL %v: asked again %v later, before %v", tc.ttl, tc.kept-time.Millisecond, tc.kept)
		}
		clk.advance(time.Millisecond)
		if n := lookup(); n != 2 {
			t.Errorf("TTL %v: not asked again after %v", tc.ttl, tc.kept)
		}
	}
}

// TestFetchThroughDNSClient fetches a page on loopback by a name that a
// name server on loopback resolves: two requests, one lookup (A and
// AAAA, once each).
func TestFetchThroughDNSClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ns := startDNS(t, zone{"site.test.": {"60 IN A 127.0.0.1"}})
	cfg := testConfig()
	cfg.Resolver = NewDNSClient([]string{ns.addr}, nil, 2*time.Second, 1)
	f := newFetcher(t, cfg)
	for range 2 {
		if r := get(t, f, "http://site.test:"+port+"/"); r.StatusCode != 200 || string(r.Body) != "hello" {
			t.Fatalf("%d %q", r.StatusCode, r.Body)
		}
	}
	if l := ns.asked(); !slices.Equal(l, []string{"udp site.test. A", "udp site.test. AAAA"}) {
		t.Errorf("the name server was asked %v, want A and AAAA once", l)
	}
}

// TestSystemDNSClient reads the servers, timeout and attempts of a
// resolv.conf and the names of a hosts file.
func TestSystemDNSClient(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "resolv.conf")
	hosts := filepath.Join(dir, "hosts")
	os.WriteFile(conf, []byte("search example.org\nnameserver 127.0.0.53\nnameserver ::1\noptions timeout:1 attempts:3\n"), 0o644)
	os.WriteFile(hosts, []byte("# comment\n127.0.0.1 localhost Vm.\nnot-an-ip foo\n::1 localhost ip6-localhost # trailing\n"), 0o644)
	c, err := SystemDNSClient(conf, hosts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.servers, []string{"127.0.0.53:53", "[::1]:53"}) || c.attempts != 3 || c.udp.Timeout != time.Second {
		t.Errorf("servers %v, attempts %d, timeout %v", c.servers, c.attempts, c.udp.Timeout)
	}
	want := map[string]string{"localhost": "[127.0.0.1 ::1]", "vm": "[127.0.0.1]", "ip6-localhost": "[::1]"}
	if len(c.hosts) != len(want) {
		t.Errorf("hosts %v", c.hosts)
	}
	for name, addrs := range want {
		if got := fmt.Sprint(c.hosts[name]); got != addrs {
			t.Errorf("hosts[%s] = %s, want %s", name, got, addrs)
		}
	}
	// No hosts file: none; no resolv.conf: an error naming it.
	if c, err := SystemDNSClient(conf, filepath.Join(dir, "none")); err != nil || len(c.hosts) != 0 {
		t.Errorf("without a hosts file: %v, %v", c, err)
	}
	if _, err := SystemDNSClient(filepath.Join(dir, "none"), hosts); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("without resolv.conf: %v", err)
	}
}
