package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tlsSite is an HTTPS server on loopback with the certificate given, which
// counts the requests it answers.
type tlsSite struct {
	srv      *httptest.Server
	port     string
	requests atomic.Int32
}

func newTLSSite(t *testing.T, cert tls.Certificate, http2 bool) *tlsSite {
	t.Helper()
	s := &tlsSite{}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		io.WriteString(w, "hello over "+r.Proto)
	}))
	s.srv.EnableHTTP2 = http2
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	_, s.port, _ = net.SplitHostPort(s.srv.Listener.Addr().String())
	return s
}

func (s *tlsSite) url(host string) string { return "https://" + host + ":" + s.port + "/" }

// LoadCAFiles adds a private CA to the system's roots: a server whose
// certificate it issued verifies, where the system's roots alone refuse
// it.
func TestLoadCAFilesTrustsAPrivateCA(t *testing.T) {
	ca := newTestCA(t, "private CA")
	site := newTLSSite(t, ca.validLeaf(t, "docs.test"), false)
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, append([]byte("# our CA\n"), ca.PEM...), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Resolve = map[string]string{"docs.test": "127.0.0.1"}
	_, err := newFetcher(t, cfg).Get(context.Background(), site.url("docs.test"), nil)
	wantKind(t, err, KindTLS)

	pool, err := LoadCAFiles(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg.TLSConfig = &tls.Config{RootCAs: pool}
	r, err := newFetcher(t, cfg).Get(context.Background(), site.url("docs.test"), nil)
	if err != nil {
		t.Fatalf("with the CA file: %v", err)
	}
	if string(r.Body) != "hello over HTTP/1.1" || r.CertificateError != nil {
		t.Errorf("body %q, certificate error %v", r.Body, r.CertificateError)
	}
	if system, err := x509.SystemCertPool(); err == nil && system.Equal(pool) {
		t.Error("the pool is the system's: the CA was not added")
	}
}

// A CA file that is missing, cannot be read, or holds no certificate is an
// error naming the file, and why.
func TestLoadCAFilesBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.pem", string(newTestCA(t, "good").PEM))
	for _, c := range []struct {
		file, why string
	}{
		{filepath.Join(dir, "missing.pem"), "no such file"},
		{dir, "is a directory"},
		{write("empty.pem", ""), "no PEM block"},
		{write("der.crt", "\x30\x82\x01\x0a"), "no PEM block"},
		{write("key.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), "its first PEM block is a PRIVATE KEY"},
		{write("broken.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), "no certificate in it that parses"},
	} {
		_, err := LoadCAFiles(good, c.file)
		if err == nil || !strings.Contains(err.Error(), c.file) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: error %v, want one naming the file and %q", c.file, err, c.why)
		}
	}
}

// A host of InsecureTLS is fetched although its certificate fails
// verification, and the Response says why it failed; the same server is
// refused to a Fetcher without it. Verification is still done: a valid
// certificate on such a host has no error.
func TestInsecureTLS(t *testing.T) {
	ca := newTestCA(t, "trusted CA")
	stranger := newTestCA(t, "unknown CA")
	hour := time.Hour
	for _, c := range []struct {
		name    string
		cert    tls.Certificate
		wantErr error // the x509 error the Response carries; nil: none
	}{
		{"unknown authority", stranger.validLeaf(t, "site.test"), x509.UnknownAuthorityError{}},
		{"another host's name", ca.validLeaf(t, "other.test"), x509.HostnameError{}},
		{"expired", ca.leaf(t, []string{"site.test"}, time.Now().Add(-2*hour), time.Now().Add(-hour)), x509.CertificateInvalidError{}},
		{"valid", ca.validLeaf(t, "site.test"), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			site := newTLSSite(t, c.cert, false)
			cfg := testConfig()
			cfg.TLSConfig = &tls.Config{RootCAs: ca.pool()}
			cfg.Resolve = map[string]string{"site.test": "127.0.0.1"}
			strict := newFetcher(t, cfg)
			cfg.InsecureTLS = []string{"site.test"}
			loose := newFetcher(t, cfg)

			_, err := strict.Get(context.Background(), site.url("site.test"), nil)
			if c.wantErr != nil {
				wantKind(t, err, KindTLS)
			} else if err != nil {
				t.Fatalf("a valid certificate: %v", err)
			}
			for i := range 2 { // the second on the kept-alive connection
				r, err := loose.Get(context.Background(), site.url("site.test"), nil)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if string(r.Body) != "hello over HTTP/1.1" {
					t.Errorf("request %d: body %q", i, r.Body)
				}
				switch {
				case c.wantErr == nil && r.CertificateError != nil:
					t.Errorf("request %d: certificate error %v on a valid certificate", i, r.CertificateError)
				case c.wantErr != nil && !errorIsType(r.CertificateError, c.wantErr):
					t.Errorf("request %d: certificate error %v (%T), want a %T", i, r.CertificateError, r.CertificateError, c.wantErr)
				}
			}
		})
	}
}

// errorIsType reports whether err's chain holds an error of target's type.
func errorIsType(err, target error) bool {
	switch target.(type) {
	case x509.UnknownAuthorityError:
		var e x509.UnknownAuthorityError
		return errors.As(err, &e)
	case x509.HostnameError:
		var e x509.HostnameError
		return errors.As(err, &e)
	case x509.CertificateInvalidError:
		var e x509.CertificateInvalidError
		return errors.As(err, &e) && e.Reason == x509.Expired
	}
	return false
}

// InsecureTLS matches what it names and nothing more: a host, the hosts
// under a domain (not the domain), an address, every host; a host it
// does not name is refused as always. It never lets the crawler past the
// address guard, and a host it names speaks HTTP/1.1 even when HTTP/2 is
// offered, so the failure is on the record.
func TestInsecureTLSMatching(t *testing.T) {
	stranger := newTestCA(t, "unknown CA")
	site := newTLSSite(t, stranger.validLeaf(t, "a.docs.test"), true)
	hosts := []string{"a.docs.test", "docs.test", "other.test", "127.0.0.1"}
	for _, c := range []struct {
		entries []string
		ok      []string // the hosts fetched; the others fail with KindTLS
	}{
		{nil, nil},
		{[]string{"a.docs.test"}, []string{"a.docs.test"}},
		{[]string{"A.Docs.Test."}, []string{"a.docs.test"}},
		{[]string{"*.docs.test"}, []string{"a.docs.test"}},
		{[]string{"docs.test"}, []string{"docs.test"}},
		{[]string{"127.0.0.1"}, []string{"127.0.0.1"}},
		{[]string{"*"}, hosts},
	} {
		cfg := testConfig()
		cfg.HTTP2 = true
		cfg.Resolve = map[string]string{"a.docs.test": "127.0.0.1", "docs.test": "127.0.0.1", "other.test": "127.0.0.1"}
		cfg.InsecureTLS = c.entries
		f := newFetcher(t, cfg)
		for _, h := range hosts {
			r, err := f.Get(context.Background(), site.url(h), nil)
			want := false
			for _, ok := range c.ok {
				want = want || ok == h
			}
			switch {
			case want && err != nil:
				t.Errorf("%v: %s: %v, want it fetched", c.entries, h, err)
			case want && (r.CertificateError == nil || r.Protocol != "http/1.1"):
				t.Errorf("%v: %s: certificate error %v, protocol %s; want the failure kept, over http/1.1", c.entries, h, r.CertificateError, r.Protocol)
			case !want && KindOf(err) != KindTLS:
				t.Errorf("%v: %s: %v, want a TLS error", c.entries, h, err)
			}
		}
	}

	// The guard judges a host InsecureTLS names like any other.
	cfg := testConfig()
	cfg.Resolve = map[string]string{"denied.test": "127.0.0.1"}
	cfg.DenyCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	cfg.InsecureTLS = []string{"*"}
	before := site.requests.Load()
	_, err := newFetcher(t, cfg).Get(context.Background(), site.url("denied.test"), nil)
	wantKind(t, err, KindRefused)
	if site.requests.Load() != before {
		t.Error("the server was asked although its address is denied")
	}
}

// Config.Validate names an InsecureTLS entry that is not a host, a
// domain wildcard, an address or "*".
func TestInsecureTLSValidate(t *testing.T) {
	for _, good := range []string{"*", "docs.test", "*.docs.test", "bücher.test", "127.0.0.1", "::1", "[::1]"} {
		cfg := testConfig()
		cfg.InsecureTLS = []string{good}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for _, bad := range []string{"", "docs.test:443", "*docs.test", "a.*.test", "**", "*.", "https://docs.test/", "fe80::1%eth0"} {
		cfg := testConfig()
		cfg.InsecureTLS = []string{"docs.test", bad}
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), "Config.InsecureTLS[1]") {
			t.Errorf("%q: error %v, want one naming Config.InsecureTLS[1]", bad, err)
		}
	}
}
