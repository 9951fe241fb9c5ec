package crawl

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/judge"
)

// twoSchemes is one server answering http and https on one port, so that
// http://name:port/ and https://name:port/ are one authority, as they are
// on the default ports of a real site. Its certificate is httptest's, for
// *.example.com. It logs every request with its scheme.
type twoSchemes struct {
	name, authority string
	roots           *x509.CertPool
	srv             *http.Server
	done            chan struct{}

	mu  sync.Mutex
	log []schemeReq
}

type schemeReq struct {
	scheme, path string
	start, end   time.Time
}

func newTwoSchemes(t *testing.T, ip, name string, h func(scheme string, rw http.ResponseWriter, r *http.Request)) *twoSchemes {
	t.Helper()
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.StartTLS() // for its certificate only
	cert, roots := tlsSrv.TLS.Certificates[0], x509.NewCertPool()
	roots.AddCert(tlsSrv.Certificate())
	tlsSrv.Close()

	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &twoSchemes{name: name, authority: name + ":" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), roots: roots, done: make(chan struct{})}
	ts.srv = &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start, scheme := time.Now(), "http"
		if r.TLS != nil {
			scheme = "https"
		}
		h(scheme, rw, r)
		ts.mu.Lock()
		ts.log = append(ts.log, schemeReq{scheme: scheme, path: r.URL.RequestURI(), start: start, end: time.Now()})
		ts.mu.Unlock()
	})}
	mux := &sniffListener{Listener: ln, tls: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}}
	go func() { defer close(ts.done); ts.srv.Serve(mux) }()
	t.Cleanup(func() { ts.srv.Close(); <-ts.done })
	return ts
}

func (ts *twoSchemes) url(scheme, path string) string { return scheme + "://" + ts.authority + path }

// paths returns the paths asked for with scheme, sorted.
func (ts *twoSchemes) paths(scheme string) []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []string
	for _, r := range ts.log {
		if r.scheme == scheme {
			out = append(out, r.path)
		}
	}
	slices.Sort(out)
	return out
}

// sniffListener hands out TLS connections for clients that open with a
// TLS handshake record, and plain ones for the rest.
type sniffListener struct {
	net.Listener
	tls *tls.Config
}

func (l *sniffListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		br := bufio.NewReader(c)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		first, err := br.Peek(1)
		c.SetReadDeadline(time.Time{})
		if err != nil {
			c.Close()
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			continue
		}
		pc := &peekedConn{Conn: c, r: br}
		if first[0] == 0x16 { // a TLS handshake record
			return tls.Server(pc, l.tls), nil
		}
		return pc, nil
	}
}

type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// http and https on one host and port have a robots.txt each, and each
// file judges its own scheme's URLs only; the two are one server, under
// one politeness clock.
func TestRobotsPerScheme(t *testing.T) {
	const delay = 30 * time.Millisecond
	ts := newTwoSchemes(t, "127.0.0.7", "mixed.example.com", func(scheme string, rw http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			robotsFile(rw, "User-agent: *\nDisallow: /no-"+scheme+"/\n")
		case "/":
			page(rw, "/open", "/no-http/x", "/no-https/x")
		default:
			page(rw)
		}
	})
	cfg := bare(Config{
		Seeds:     []string{ts.url("http", "/"), ts.url("https", "/")},
		DataDir:   t.TempDir(),
		Workers:   4,
		Delay:     delay,
		UserAgent: "weft/test (+https://example.org/weft-crawler)",
	})
	cfg.NoSitemaps = true
	cfg.Fetch.Resolve = map[string]string{ts.name: "127.0.0.7"}
	cfg.Fetch.Resolver = noDNS{}
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Fetch.TLSConfig = &tls.Config{RootCAs: ts.roots}
	sum := runCrawl(t, cfg)

	for scheme, want := range map[string][]string{
		"http":  {"/", "/no-https/x", "/open", "/robots.txt"},
		"https": {"/", "/no-http/x", "/open", "/robots.txt"},
	} {
		if got := ts.paths(scheme); !slices.Equal(got, want) {
			t.Errorf("%s requests %v, want %v", scheme, got, want)
		}
	}
	if sum.Robots["rules"] != 2 || sum.Rejected[judge.Robots] != 2 {
		t.Errorf("robots %v, rejected %v: want two files with rules, each disallowing one link", sum.Robots, sum.Rejected)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	reqs := slices.Clone(ts.log)
	slices.SortFunc(reqs, func(a, b schemeReq) int { return a.start.Compare(b.start) })
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].start.Sub(reqs[i-1].end); gap < delay {
			t.Errorf("%s %s began %v after %s %s ended, want >= %v: the schemes share one server's clock",
				reqs[i].scheme, reqs[i].path, gap, reqs[i-1].scheme, reqs[i-1].path, delay)
		}
	}
}
