package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"

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
