package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"code.dny.dev/ssrf"
)

// okServer answers every request with 200 "ok".
func okServer(c net.Conn, _ <-chan struct{}) {
	io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
}

// assertNoConnection proves that srv accepted nothing so far: it connects
// itself and checks that its own connection is the first one accepted.
func assertNoConnection(t *testing.T, srv *rawServer) {
	t.Helper()
	c, err := net.Dial("tcp", srv.addr())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "PROBE\r\n\r\n")
	io.ReadAll(c) // the server answers and closes
	c.Close()
	if n := srv.accepted.Load(); n != 1 {
		t.Fatalf("server accepted %d connections, want only the probe", n)
	}
	if got := string(srv.request(0)); got != "PROBE\r\n\r\n" {
		t.Fatalf("first connection sent %q, not the probe", got)
	}
}

func only(p string) []netip.Prefix { return []netip.Prefix{netip.MustParsePrefix(p)} }

func TestSSRFGuard(t *testing.T) {
	srv := newRawServer(t, "tcp", "127.0.0.1:0", okServer)
	_, port, _ := net.SplitHostPort(srv.addr())

	t.Run("IP literal refused", func(t *testing.T) {
		cfg := testConfig()
		cfg.AllowCIDRs = only("127.0.0.2/32")
		_, err := newFetcher(t, cfg).Get(context.Background(), "http://"+srv.addr()+"/", nil)
		wantKind(t, err, KindRefused)
		if !errors.Is(err, ssrf.ErrProhibitedIP) {
			t.Errorf("err %v does not wrap ssrf.ErrProhibitedIP", err)
		}
		if !strings.Contains(err.Error(), "http://"+srv.addr()+"/") {
			t.Errorf("error %q does not name the URL", err)
		}
		assertNoConnection(t, srv)
	})
	t.Run("default config refuses loopback", func(t *testing.T) {
		cfg := testConfig()
		cfg.AllowCIDRs = nil
		_, err := newFetcher(t, cfg).Get(context.Background(), "http://"+srv.addr()+"/", nil)
		wantKind(t, err, KindRefused)
	})
	t.Run("Resolve map refused", func(t *testing.T) {
		cfg := testConfig()
		cfg.AllowCIDRs = nil
		cfg.Resolve = map[string]string{"h.test": "127.0.0.1"}
		_, err := newFetcher(t, cfg).Get(context.Background(), "http://h.test:"+port+"/", nil)
		wantKind(t, err, KindRefused)
	})
	t.Run("resolver answer refused", func(t *testing.T) {
		cfg := testConfig()
		cfg.AllowCIDRs = only("127.0.0.2/32")
		cfg.Resolver = &fakeResolver{answers: map[string][]netip.Addr{
			"evil.test": {netip.MustParseAddr("127.0.0.1")},
			// IPv4-mapped IPv6 must get the IPv4 verdict.
			"mapped.test": {netip.MustParseAddr("::ffff:127.0.0.1")},
		}}
		f := newFetcher(t, cfg)
		for _, h := range []string{"evil.test", "mapped.test"} {
			_, err := f.Get(context.Background(), "http://"+h+":"+port+"/", nil)
			wantKind(t, err, KindRefused)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		cfg := testConfig()
		cfg.Resolve = map[string]string{"h.test": "127.0.0.1"}
		cfg.Resolver = &fakeResolver{answers: map[string][]netip.Addr{
			"mapped.test": {netip.MustParseAddr("::ffff:127.0.0.1")},
		}}
		f := newFetcher(t, cfg)
		for _, u := range []string{
			"http://h.test:" + port + "/",
			"http://H.Test.:" + port + "/",
			"http://mapped.test:" + port + "/",
			"http://" + srv.addr() + "/",
		} {
			r := get(t, f, u)
			if string(r.Body) != "ok" || r.RemoteAddr != srv.addr() {
				t.Errorf("%s: Body %q RemoteAddr %q", u, r.Body, r.RemoteAddr)
			}
		}
		if !strings.Contains(string(get(t, f, "http://h.test:"+port+"/").RequestHeader), "\r\nHost: h.test:"+port+"\r\n") {
			t.Errorf("Host header is not the name")
		}
	})
}

// A name with a forbidden and an allowed address reaches only the allowed one.
func TestSSRFSkipsRefusedAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	good := startRawServer(t, ln, okServer)
	_, port, _ := net.SplitHostPort(good.addr())
	bad := newRawServer(t, "tcp", "127.0.0.1:"+port, okServer)

	cfg := testConfig()
	cfg.AllowCIDRs = only("127.0.0.2/32")
	cfg.Resolver = &fakeResolver{answers: map[string][]netip.Addr{
		"mixed.test": {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")},
	}}
	r := get(t, newFetcher(t, cfg), "http://mixed.test:"+port+"/")
	if r.RemoteAddr != good.addr() {
		t.Errorf("RemoteAddr = %q, want %q", r.RemoteAddr, good.addr())
	}
	assertNoConnection(t, bad)
}

// A redirect from an allowed server to a forbidden address is returned,
// not followed; fetching the Location is then refused.
func TestSSRFRedirectHop(t *testing.T) {
	forbidden := newRawServer(t, "tcp", "127.0.0.1:0", okServer)
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	startRawServer(t, ln, func(c net.Conn, _ <-chan struct{}) {
		io.WriteString(c, "HTTP/1.1 302 Found\r\nLocation: http://"+forbidden.addr()+"/internal\r\nContent-Length: 0\r\n\r\n")
	})
	cfg := testConfig()
	cfg.AllowCIDRs = only("127.0.0.2/32")
	f := newFetcher(t, cfg)
	r := get(t, f, "http://"+ln.Addr().String()+"/")
	if r.StatusCode != 302 || r.Location != "http://"+forbidden.addr()+"/internal" {
		t.Fatalf("status %d Location %q", r.StatusCode, r.Location)
	}
	_, err = f.Get(context.Background(), r.Location, nil)
	wantKind(t, err, KindRefused)
	assertNoConnection(t, forbidden)
}

func TestSSRFIPv6Loopback(t *testing.T) {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("IPv6 loopback not available: %v", err)
	}
	srv := startRawServer(t, ln, okServer)
	_, port, _ := net.SplitHostPort(srv.addr())
	url := "http://[::1]:" + port + "/"

	cfg := testConfig() // allows 127.0.0.0/8 only
	cfg.Resolve = map[string]string{"v6.test": "::1"}
	f := newFetcher(t, cfg)
	_, err = f.Get(context.Background(), url, nil)
	wantKind(t, err, KindRefused)
	_, err = f.Get(context.Background(), "http://v6.test:"+port+"/", nil)
	wantKind(t, err, KindRefused)
	assertNoConnection(t, srv)

	cfg.AllowCIDRs = append(loopback, netip.MustParsePrefix("::1/128"))
	f = newFetcher(t, cfg)
	for _, u := range []string{url, "http://v6.test:" + port + "/"} {
		r := get(t, f, u)
		if string(r.Body) != "ok" || r.RemoteAddr != "[::1]:"+port {
			t.Errorf("%s: Body %q RemoteAddr %q", u, r.Body, r.RemoteAddr)
		}
	}
}

// TestPermits: the guard's answer before any request, for an IP literal
// or a pinned name; another name is left to connect time.
func TestPermits(t *testing.T) {
	f, err := New(Config{UserAgent: "weft/test", AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")},
		Resolve: map[string]string{"pinned.test": "127.0.0.3", "ok.test": "127.0.0.2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for host, allowed := range map[string]bool{
		"127.0.0.1": false, "127.0.0.2": true, "[::1]": false, "::ffff:127.0.0.1": false, "169.254.169.254": false,
		"10.1.2.3": false, "0.0.0.0": false, "pinned.test": false, "ok.test": true, "unpinned.test": true,
	} {
		if err := f.Permits(host); (err == nil) != allowed {
			t.Errorf("Permits(%q) = %v, want allowed %v", host, err, allowed)
		}
	}
}

// TestSSRFRanges judges one address of every range the guard must refuse
// with the default configuration, through the function the socket's
// Control hook runs before connecting, and through Permits. Nothing is
// dialled: an address outside loopback is never connected to, even if the
// guard were broken.
func TestSSRFRanges(t *testing.T) {
	cfg := testConfig()
	cfg.AllowCIDRs = nil
	f := newFetcher(t, cfg)
	refused := []string{
		"127.0.0.1", "127.255.255.254", // loopback
		"10.0.0.1", "10.255.255.254", "172.16.0.1", "172.31.255.254", "192.168.0.1", "192.168.255.254", // RFC 1918
		"169.254.169.254", "169.254.0.1", // link-local, the cloud metadata address among them
		"100.64.0.1", "100.127.255.254", // CGNAT shared space
		"198.18.0.1", "198.19.255.254", // benchmarking
		"192.0.2.1", "198.51.100.7", "203.0.113.9", // documentation
		"0.0.0.0", "0.1.2.3", // "this network"
		"192.0.0.8", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255", // protocol, multicast, reserved, broadcast
		"::1", "::", // IPv6 loopback and unspecified
		"fc00::1", "fd12:3456:789a::1", // unique local
		"fe80::1", "febf::1", // link-local
		"ff02::1",                                                       // multicast
		"2001:db8::1",                                                   // documentation
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", // IPv4-mapped
		"::ffff:0.0.0.0", "::127.0.0.1", // mapped unspecified, IPv4-compatible
		"64:ff9b::7f00:1", // NAT64 of 127.0.0.1
		"2002:7f00:1::1",  // 6to4 of 127.0.0.1
	}
	for _, s := range refused {
		ip := netip.MustParseAddr(s)
		network := "tcp4"
		if ip.Is6() {
			network = "tcp6"
		}
		if err := f.dialer.guard.control(network, netip.AddrPortFrom(ip, 80).String(), nil); !errors.Is(err, ssrf.ErrProhibitedIP) {
			t.Errorf("connect to %s: guard said %v, want refused", s, err)
		}
		if err := f.Permits(s); KindOf(err) != KindRefused {
			t.Errorf("Permits(%s) = %v, want refused", s, err)
		}
	}
	// Public addresses pass (judged only; never dialled).
	for _, s := range []string{"1.1.1.1", "93.184.215.14", "2606:4700::1111"} {
		ip := netip.MustParseAddr(s)
		network := "tcp4"
		if ip.Is6() {
			network = "tcp6"
		}
		if err := f.dialer.guard.control(network, netip.AddrPortFrom(ip, 443).String(), nil); err != nil {
			t.Errorf("connect to %s refused: %v", s, err)
		}
	}
}

// TestSSRFTranslatedIPv4: with NAT64's or 6to4's prefix allowed (as an
// IPv6-only network needs), the IPv4 address such an address carries is
// judged as well, by the built-in rules and the deny list. Nothing is
// dialled.
func TestSSRFTranslatedIPv4(t *testing.T) {
	cfg := testConfig()
	cfg.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("2002::/16")}
	cfg.DenyCIDRs = only("1.2.3.0/24")
	f := newFetcher(t, cfg)
	for addr, refused := range map[string]bool{
		"64:ff9b::a9fe:a9fe": true,  // 169.254.169.254
		"64:ff9b::7f00:1":    true,  // 127.0.0.1
		"64:ff9b::a00:1":     true,  // 10.0.0.1
		"64:ff9b::102:304":   true,  // 1.2.3.4, denied
		"2002:a9fe:a9fe::1":  true,  // 6to4 of 169.254.169.254
		"64:ff9b::808:808":   false, // 8.8.8.8
		"2002:808:808::1":    false,
	} {
		err := f.dialer.guard.control("tcp6", netip.AddrPortFrom(netip.MustParseAddr(addr), 80).String(), nil)
		if (err != nil) != refused {
			t.Errorf("connect to %s: %v, want refused %v", addr, err, refused)
		}
	}
}

// TestSSRFDenyWinsOverAllow: a denied prefix inside an allowed one is
// refused, by literal, by pinned name and by a resolver's answer in either
// IPv4 form, and the server behind it sees no connection.
func TestSSRFDenyWinsOverAllow(t *testing.T) {
	forbidden := newRawServer(t, "tcp", "127.0.0.1:0", okServer)
	_, port, _ := net.SplitHostPort(forbidden.addr())
	cfg := testConfig() // allows 127.0.0.0/8
	cfg.DenyCIDRs = only("127.0.0.1/32")
	cfg.Resolve = map[string]string{"pinned.test": "127.0.0.1"}
	cfg.Resolver = &fakeResolver{answers: map[string][]netip.Addr{
		"a.test":      {netip.MustParseAddr("127.0.0.1")},
		"mapped.test": {netip.MustParseAddr("::ffff:127.0.0.1")},
	}}
	f := newFetcher(t, cfg)
	for _, h := range []string{"127.0.0.1", "pinned.test", "a.test", "mapped.test", "[::ffff:127.0.0.1]"} {
		_, err := f.Get(context.Background(), "http://"+h+":"+port+"/", nil)
		wantKind(t, err, KindRefused)
	}
	if err := f.Permits("pinned.test"); KindOf(err) != KindRefused {
		t.Errorf("Permits(pinned.test) = %v, want refused", err)
	}
	assertNoConnection(t, forbidden)

	// A deny prefix written in the mapped form still catches the plain one.
	cfg.DenyCIDRs = only("::ffff:127.0.0.1/128")
	f = newFetcher(t, cfg)
	_, err := f.Get(context.Background(), "http://127.0.0.1:"+port+"/", nil)
	wantKind(t, err, KindRefused)
	if n := forbidden.accepted.Load(); n != 1 {
		t.Errorf("forbidden server accepted %d connections, want only the probe", n)
	}

	for _, p := range []netip.Prefix{{}, netip.MustParsePrefix("::ffff:0:0/95")} {
		bad := cfg
		bad.DenyCIDRs = []netip.Prefix{p}
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "DenyCIDRs[0]") {
			t.Errorf("Validate(%v) = %v, want the invalid DenyCIDRs entry named", p, err)
		}
	}
}

// rebindResolver answers first with one address and then with another:
// DNS rebinding, where a name passes a check and then points elsewhere.
type rebindResolver struct {
	mu      sync.Mutex
	answers []netip.Addr
	calls   int
}

func (r *rebindResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.answers[min(r.calls, len(r.answers)-1)]
	r.calls++
	return []netip.Addr{a}, nil
}

// TestSSRFRebinding: the guard judges the address each connection is made
// to, not an earlier answer for the name. The name first resolves to an
// allowed server, then to a forbidden one; the second request is refused
// and the forbidden server sees no connection.
func TestSSRFRebinding(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	good := startRawServer(t, ln, okServer)
	_, port, _ := net.SplitHostPort(good.addr())
	forbidden := newRawServer(t, "tcp", "127.0.0.1:"+port, okServer)

	cfg := testConfig()
	cfg.DenyCIDRs = only("127.0.0.1/32")
	cfg.DNSCacheTTL = time.Nanosecond // every request looks the name up again
	res := &rebindResolver{answers: []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.1")}}
	cfg.Resolver = res
	f := newFetcher(t, cfg)
	if err := f.Permits("rebind.test"); err != nil {
		t.Fatalf("Permits(rebind.test) = %v: an unpinned name is judged at connect time", err)
	}
	u := "http://rebind.test:" + port + "/"
	if r := get(t, f, u); r.RemoteAddr != good.addr() {
		t.Fatalf("first request reached %s, want %s", r.RemoteAddr, good.addr())
	}
	f.Close() // no idle connection to reuse: the next request must dial
	// The 1 ns TTL passes: the subject, not a wait.
	time.Sleep(time.Millisecond)
	_, err = f.Get(context.Background(), u, nil)
	wantKind(t, err, KindRefused)
	if res.calls < 2 {
		t.Errorf("resolver asked %d times, want a second lookup", res.calls)
	}
	assertNoConnection(t, forbidden)
}
