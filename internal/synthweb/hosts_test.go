package synthweb

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/robots"
)

func startHosts(t *testing.T, cfg HostsConfig) *HostsWeb {
	t.Helper()
	w, err := StartHosts(cfg)
	if err != nil {
		t.Fatalf("StartHosts: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return w
}

// hostsClient reaches the web's hosts by name through its resolver, as a
// crawler given Resolver() would.
func hostsClient(w *HostsWeb) *http.Client {
	res := w.Resolver()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ips, err := res.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(ips[0].String(), port))
	}}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func hostsGet(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

func TestHostIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		i    int
		ok   bool
	}{
		{"h0.bench.test", 0, true},
		{"h123456.bench.test", 123456, true},
		{"H7.Bench.Test.", 7, true},
		{"h01.bench.test", 0, false},
		{"h+1.bench.test", 0, false},
		{"h-1.bench.test", 0, false},
		{"h.bench.test", 0, false},
		{"x1.bench.test", 0, false},
		{"h1.bench.test.example", 0, false},
		{"h1.other.test", 0, false},
		{"h1234567890.bench.test", 0, false},
	} {
		i, ok := HostIndex(tc.name)
		if i != tc.i || ok != tc.ok {
			t.Errorf("HostIndex(%q) = %d, %v; want %d, %v", tc.name, i, ok, tc.i, tc.ok)
		}
	}
}

func TestHostsResolver(t *testing.T) {
	a := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")}
	r := HostsResolver{Addrs: a, Hosts: 10}
	got, err := r.LookupNetIP(t.Context(), "ip", "h3.bench.test")
	if err != nil || len(got) != 1 || got[0] != a[1] {
		t.Errorf("h3: %v, %v; want [%v]", got, err, a[1])
	}
	for _, name := range []string{"h10.bench.test", "example.org", "synthweb.stats"} {
		_, err := r.LookupNetIP(t.Context(), "ip", name)
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Errorf("%s: err %v, want a not-found DNSError", name, err)
		}
	}
}

func TestHostsConfigValidate(t *testing.T) {
	for _, c := range []HostsConfig{{Hosts: -1}, {Listeners: 251}, {Hosts: 3, Hubs: 4}} {
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "HostsConfig.") {
			t.Errorf("%+v: err %v, want one naming the field", c, err)
		}
	}
}

// TestHostsWebShape reads every host of a small web by name: each
// robots.txt has 50 to 100 rules that allow the host's pages and
// disallow hostsDisallowed for weft; each page links to its host's pages
// and to other hosts; the counters see every request, and a second
// robots.txt for a host counts once among the hosts.
func TestHostsWebShape(t *testing.T) {
	const hosts = 40
	w := startHosts(t, HostsConfig{Seed: 3, Hosts: hosts, Listeners: 2, Hubs: 2})
	c := hostsClient(w)
	defer c.CloseIdleConnections()
	if len(w.Seeds()) != 2 || !strings.HasPrefix(w.Seeds()[1], "http://h1.bench.test:") {
		t.Fatalf("seeds %v", w.Seeds())
	}
	base := func(i int) string { return w.pageURL(i, 0)[:len(w.pageURL(i, 0))-1] }
	var pages int64
	linkedHosts := map[string]bool{}
	for i := range hosts {
		code, body := hostsGet(t, c, base(i)+"/robots.txt")
		if code != 200 {
			t.Fatalf("host %d robots.txt: status %d", i, code)
		}
		rules := 0
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, "Allow:") || strings.HasPrefix(l, "Disallow:") {
				rules++
			}
		}
		if rules < hostsMinRules || rules > hostsMaxRules {
			t.Errorf("host %d: %d rules, want %d to %d", i, rules, hostsMinRules, hostsMaxRules)
		}
		pol := robots.Parse([]byte(body), "weft", 200, time.Now())
		for _, d := range []string{"/private/1.html", "/search?q=x"} {
			if pol.Allowed(d) {
				t.Errorf("host %d: robots.txt allows %s", i, d)
			}
		}
		if robots.Parse([]byte(body), "BadBot", 200, time.Now()).Allowed("/") {
			t.Errorf("host %d: BadBot may fetch /", i)
		}
		n := w.pageCount(i)
		if n < hostsMinPages || n > hostsMaxPages {
			t.Fatalf("host %d: %d pages", i, n)
		}
		for p := range n {
			if !pol.Allowed(pagePath(p)) {
				t.Errorf("host %d: robots.txt disallows its page %s", i, pagePath(p))
			}
			code, body := hostsGet(t, c, base(i)+pagePath(p))
			pages++
			if code != 200 || !strings.Contains(body, `href="/private/`) {
				t.Fatalf("host %d page %d: status %d, body %.200q", i, p, code, body)
			}
			for q := range n {
				if !strings.Contains(body, `href="`+pagePath(q)+`"`) {
					t.Errorf("host %d page %d: no link to page %d", i, p, q)
				}
			}
			for _, part := range strings.Split(body, `href="http://`)[1:] {
				h, _, _ := strings.Cut(part, ":")
				linkedHosts[h] = true
			}
		}
	}
	for i := 1; i < hosts; i++ {
		if !linkedHosts[hostName(i)] {
			t.Errorf("no page links to host %d: the crawl cannot reach it", i)
		}
	}
	hostsGet(t, c, base(0)+"/robots.txt")
	if code, _ := hostsGet(t, c, base(0)+"/private/0.html"); code != 404 {
		t.Errorf("a disallowed path: status %d, want 404", code)
	}
	if code, _ := hostsGet(t, c, base(0)+"/sitemap.xml"); code != 404 {
		t.Errorf("/sitemap.xml: status %d, want 404", code)
	}
	hostsGet(t, c, base(0)+"/")
	s := w.Summary()
	want := HostsSummary{Hosts: hosts, PagesInWeb: pages, Requests: hosts + 1 + pages + 3, Robots: hosts + 1, Pages: pages + 1, Repeats: 1,
		Disallowed: 1, Other: 1, HostsRobots: hosts, HostsVisited: hosts, HostsComplete: hosts}
	if s != want {
		t.Errorf("summary\n %+v, want\n %+v", s, want)
	}
}

// TestHostsWebDeterministic: the same seed gives the same bodies.
func TestHostsWebDeterministic(t *testing.T) {
	a := &HostsWeb{cfg: HostsConfig{Seed: 9, Hosts: 100}.withDefaults(), text: newTextTable(9)}
	b := &HostsWeb{cfg: HostsConfig{Seed: 9, Hosts: 100}.withDefaults(), text: newTextTable(9)}
	for i := range 100 {
		if string(a.robotsTxt(nil, i)) != string(b.robotsTxt(nil, i)) || string(a.page(nil, i, 0, 3)) != string(b.page(nil, i, 0, 3)) {
			t.Fatalf("host %d differs between two webs of one seed", i)
		}
	}
	c := &HostsWeb{cfg: HostsConfig{Seed: 10, Hosts: 100}.withDefaults(), text: newTextTable(10)}
	if string(a.robotsTxt(nil, 5)) == string(c.robotsTxt(nil, 5)) {
		t.Errorf("seeds 9 and 10 give host 5 the same robots.txt")
	}
}
