package crawl

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/memnet"
)

// selfSigned is a certificate for name that no root vouches for.
func selfSigned(t *testing.T, name string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestUnreachableHostsAreCountedAndNamed: hosts that cannot be reached (a
// refused connection, a certificate no root vouches for, a TLS handshake
// that never ends) are errors of their kind, each request a line of the
// fetch log naming its host and kind, and each host is named with its
// cause in the summary, its seed refused as robots-unreachable. Their
// robots.txt is tried --robots-attempts times on the --robots-retry
// schedule: a connection that never carried a request is no strain, so
// the latency factor does not stretch the waits to minutes, and the
// crawl drains within seconds, on fake time.
func TestUnreachableHostsAreCountedAndNamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		serve := func(addr string, tlsCfg *tls.Config, h http.HandlerFunc) {
			ln, err := n.Listen("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			if tlsCfg != nil {
				ln = tls.NewListener(ln, tlsCfg)
			}
			srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
		}
		serve("127.0.4.1:80", nil, func(rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/" {
				page(rw, "https://badcert.test/a", "https://hang.test/a", "http://refused.test/a", "/b")
				return
			}
			if r.URL.Path == "/b" {
				page(rw)
				return
			}
			http.NotFound(rw, r)
		})
		serve("127.0.4.2:443", &tls.Config{Certificates: []tls.Certificate{selfSigned(t, "badcert.test")}}, func(rw http.ResponseWriter, r *http.Request) {
			t.Errorf("badcert.test was asked for %s", r.URL.Path)
		})
		// hang.test accepts and never says a word: a TLS handshake that
		// never ends. Each connection is an attempt.
		hang, err := n.Listen("tcp", "127.0.4.3:443")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var attempts []time.Time
		var conns []net.Conn
		go func() {
			for {
				c, err := hang.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				attempts, conns = append(attempts, time.Now()), append(conns, c)
				mu.Unlock()
			}
		}()
		t.Cleanup(func() {
			hang.Close()
			for _, c := range conns {
				c.Close()
			}
		})

		cfg := bare(Config{
			Seeds:   []string{"http://ok.test/", "https://badcert.test/", "https://hang.test/", "http://refused.test/"},
			DataDir: t.TempDir(), Delay: time.Second, UserAgent: "weft/test (+https://example.org/weft-crawler)",
			RobotsRetryWait: 2 * time.Second, NoSitemaps: true,
		})
		cfg.Fetch.Resolve = map[string]string{"ok.test": "127.0.4.1", "badcert.test": "127.0.4.2", "hang.test": "127.0.4.3", "refused.test": "127.0.4.4"}
		cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		cfg.Fetch.Dialer = n
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		sum, err := c.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		if sum.StoppedBy != "drained" || sum.Pages != 2 {
			t.Errorf("stopped by %s after %v with %d pages; want drained, ok.test's two", sum.StoppedBy, took, sum.Pages)
		}
		// Three attempts each (the default --robots-attempts).
		for kind, want := range map[string]int64{"connect": 3, "tls": 3, "timeout": 3} {
			if sum.Errors[kind] != want {
				t.Errorf("errors %v: want %d of kind %s", sum.Errors, want, kind)
			}
		}
		if p := c.Progress(); p.Errors != 9 || p.LastError == "" {
			t.Errorf("progress: %d errors, last %q; want 9 and the last named", p.Errors, p.LastError)
		}
		named := map[string]string{}
		for _, h := range sum.HostsDownNamed {
			named[h.Host] = h.Cause
		}
		for host, cause := range map[string]string{"https://badcert.test": "tls", "https://hang.test": "timeout", "http://refused.test": "connect"} {
			if named[host] != cause {
				t.Errorf("the summary names %v as not crawled; want %s for %s", sum.HostsDownNamed, cause, host)
			}
		}
		var out strings.Builder
		sum.Write(&out)
		if !strings.Contains(out.String(), "https://hang.test") {
			t.Errorf("the printed summary does not name hang.test:\n%s", out.String())
		}
		if sum.Rejected[judge.Unreachable] < 3 {
			t.Errorf("rejected %v: want the three seeds (and links) refused as %s", sum.Rejected, judge.Unreachable)
		}
		lines := map[string]int{}
		for _, r := range readFetchLog(t, cfg.DataDir) {
			if strings.HasPrefix(r.Outcome, "error:") && r.Robots != "" {
				lines[r.Host+" "+r.Outcome]++
			}
		}
		for _, want := range []string{"badcert.test error:tls", "hang.test error:timeout", "refused.test error:connect"} {
			if lines[want] != 3 {
				t.Errorf("fetch log: %v; want 3 robots.txt lines %q", lines, want)
			}
		}
		// The waits between hang.test's attempts are --robots-retry's
		// (2 s, then 4 s) after each 10 s handshake, not the latency
		// factor's five times 10 s, doubling.
		mu.Lock()
		defer mu.Unlock()
		if len(attempts) != 3 {
			t.Fatalf("hang.test: %d connections, want 3", len(attempts))
		}
		for i, want := range []time.Duration{12 * time.Second, 14 * time.Second} {
			if gap := attempts[i+1].Sub(attempts[i]); gap > want+time.Second {
				t.Errorf("hang.test's attempt %d came %v after the one before, want about %v", i+2, gap, want)
			}
		}
	})
}
