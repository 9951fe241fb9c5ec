package crawl

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/scope"
)

// tallyListener counts the connections a forbidden server accepts, and
// answers each with a page of links, so that a connection that slipped
// through would also lead the crawl further in.
type tallyListener struct {
	ln       net.Listener
	accepted atomic.Int64
	wg       sync.WaitGroup
}

func listenTally(t *testing.T, addr string) *tallyListener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	tl := &tallyListener{ln: ln}
	tl.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tl.accepted.Add(1)
			tl.wg.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(2 * time.Second))
				body := `<a href="/secret">secret</a>`
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
				io.Copy(io.Discard, c)
			})
		}
	})
	t.Cleanup(func() { ln.Close(); tl.wg.Wait() })
	return tl
}

// rebinder answers a name with one address until flip, and with another
// after: DNS rebinding. Other names get fixed answers.
type rebinder struct {
	mu          sync.Mutex
	name        string
	first, then netip.Addr
	flipped     bool
	calls       int // lookups of name after flip
	fixed       map[string]netip.Addr
}

func (r *rebinder) flip() {
	r.mu.Lock()
	r.flipped = true
	r.mu.Unlock()
}

func (r *rebinder) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if host == r.name {
		if !r.flipped {
			return []netip.Addr{r.first}, nil
		}
		r.calls++
		return []netip.Addr{r.then}, nil
	}
	if a, ok := r.fixed[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestSSRFNoConnection crawls a host whose pages point at a forbidden
// server every way there is: a pinned name, the address as a literal in
// dotted, hex, octal, decimal and IPv4-mapped IPv6 forms, with user info,
// through a redirect to a pinned name and one to a name DNS resolves to
// it, through a name whose DNS answer changes after the first lookup, and
// under schemes other than http. The forbidden server is a loopback address
// the test denies inside an allowed 127.0.0.0/8. It must accept no
// connection at all, and the crawl must say what it refused.
func TestSSRFNoConnection(t *testing.T) {
	const badIP = "127.0.4.1"
	var port string // the forbidden server's, also b.test's: a rebinding keeps the port
	res := &rebinder{name: "rb.test", then: netip.MustParseAddr(badIP),
		fixed: map[string]netip.Addr{"evil.test": netip.MustParseAddr(badIP)}}
	mw := newMiniWeb(t, map[string]func(*miniWeb, http.ResponseWriter, *http.Request){
		"a.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				rw.Header().Set("Content-Type", "text/html")
				var b strings.Builder
				for _, href := range []string{
					"http://f.test:" + port + "/pinned",
					"http://" + badIP + ":" + port + "/dotted",
					"http://0x7f.0.0x4.0x1:" + port + "/hex",
					"http://0177.0.04.01:" + port + "/octal",
					"http://2130707457:" + port + "/decimal",
					"http://127.1025:" + port + "/short",
					"http://[::ffff:127.0.4.1]:" + port + "/mapped",
					"http://user:pw@f.test:" + port + "/userinfo",
					"http://evil.test:" + port + "/dns",
					"http://rb.test:" + port + "/",
					"ftp://" + badIP + ":" + port + "/ftp",
					"gopher://" + badIP + ":" + port + "/gopher",
					"file:///etc/passwd",
					"/go-pinned", "/go-dns",
				} {
					fmt.Fprintf(&b, "<a href=%q>x</a>\n", href)
				}
				io.WriteString(rw, b.String())
			case "/go-pinned":
				http.Redirect(rw, r, "http://f.test:"+port+"/redirected", http.StatusFound)
			case "/go-dns":
				http.Redirect(rw, r, "http://evil.test:"+port+"/redirected", http.StatusMovedPermanently)
			default:
				http.NotFound(rw, r)
			}
		},
		// b.test also answers for rb.test, whose lookups point here until
		// it has served rb.test's robots.txt, and closes every connection
		// so that each request dials (and looks the name up) again.
		"b.test": func(w *miniWeb, rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Connection", "close")
			if strings.HasPrefix(r.Host, "rb.test:") {
				defer res.flip()
			}
			switch r.URL.Path {
			case "/":
				rw.Header().Set("Content-Type", "text/html")
				io.WriteString(rw, `<a href="/next">next</a> <a href="/more">more</a>`)
			default:
				http.NotFound(rw, r)
			}
		},
	})
	port = mw.auth["b.test"][strings.LastIndexByte(mw.auth["b.test"], ':')+1:]
	bad := listenTally(t, badIP+":"+port)

	cfg := bare(Config{
		Seeds:     []string{mw.url("a.test", "/")},
		DataDir:   t.TempDir(),
		Workers:   4,
		Delay:     5 * time.Millisecond,
		UserAgent: "weft/test (+https://example.org/weft-crawler)",
	})
	cfg.Scope.Mode = scope.Any
	cfg.NoSitemaps = true
	cfg.Fetch.Resolve = map[string]string{"a.test": mw.resolve["a.test"], "b.test": mw.resolve["b.test"], "f.test": badIP}
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Fetch.DenyCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.4.0/24")}
	cfg.Fetch.DNSCacheTTL = time.Nanosecond
	res.first = netip.MustParseAddr(mw.resolve["b.test"])
	cfg.Fetch.Resolver = res
	cfg.RobotsAttempts, cfg.RobotsRetryWait = 1, testRobotsWait
	sum := runCrawl(t, cfg)

	if n := bad.accepted.Load(); n != 0 {
		t.Fatalf("the forbidden server accepted %d connections", n)
	}
	// Every literal form and the pinned name are refused before queueing:
	// dotted, hex, octal, decimal, short and mapped, the pinned name bare
	// and with user info, and the pinned redirect target.
	if got := sum.Rejected[judge.Forbidden]; got != 9 {
		t.Errorf("%d URLs refused as forbidden, want 9 (rejections %v)", got, sum.Rejected)
	}
	// ftp, gopher and file are not fetched.
	if got := sum.Rejected[judge.Filter] + sum.Rejected[judge.Invalid]; got < 3 {
		t.Errorf("%d URLs refused by scheme, want 3 (rejections %v)", got, sum.Rejected)
	}
	// evil.test is resolved at connect time and refused there; rb.test's
	// robots.txt reached b.test on the first answer, its pages met the
	// second one, which the guard refused.
	if sum.Errors["refused"] == 0 || sum.Robots["disallow-all"] == 0 {
		t.Errorf("errors %v, robots %v: want connect-time refusals", sum.Errors, sum.Robots)
	}
	res.mu.Lock()
	calls := res.calls
	res.mu.Unlock()
	if calls == 0 {
		t.Errorf("rb.test was not looked up after its answer changed")
	}
	if n := len(mw.requests("b.test")); n != 1 {
		t.Errorf("b.test got %d requests, want rb.test's robots.txt only, on the first answer", n)
	}
}
