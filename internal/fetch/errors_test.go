package fetch

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestKindNames(t *testing.T) {
	// Metric labels: these must never change.
	want := map[Kind]string{
		KindUnknown:  "unknown",
		KindDNS:      "dns",
		KindRefused:  "refused",
		KindConnect:  "connect",
		KindTimeout:  "timeout",
		KindTLS:      "tls",
		KindProtocol: "protocol",
		KindCanceled: "canceled",
		KindBadURL:   "bad_url",
		Kind(99):     "unknown",
	}
	for k, name := range want {
		if k.String() != name {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), k.String(), name)
		}
	}
}

func TestErrorAndKindOf(t *testing.T) {
	e := &Error{Kind: KindDNS, URL: "http://x.test/", Err: io.ErrUnexpectedEOF}
	if got, want := e.Error(), "fetch http://x.test/: unexpected EOF"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("crawl: %w", e)
	if KindOf(wrapped) != KindDNS || !errors.Is(wrapped, io.ErrUnexpectedEOF) {
		t.Errorf("KindOf/Is through wrapping failed")
	}
	if KindOf(io.EOF) != KindUnknown || KindOf(nil) != KindUnknown {
		t.Errorf("foreign errors must be KindUnknown")
	}
}

// TestUnsent: a failure before there was a connection to send the
// request on (refused, a TLS handshake that never ends) says the server
// holds no request; one after it was sent (the answer never came) does
// not.
func TestUnsent(t *testing.T) {
	cfg := testConfig()
	cfg.TLSHandshakeTimeout = 200 * time.Millisecond
	cfg.ResponseHeaderTimeout = 200 * time.Millisecond
	f := newFetcher(t, cfg)
	silent := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, done <-chan struct{}) { <-done })
	for _, c := range []struct {
		name, url string
		kind      Kind
		unsent    bool
	}{
		{"refused", "http://" + freePort(t) + "/", KindConnect, true},
		{"handshake never ends", "https://" + silent.addr() + "/", KindTimeout, true},
		{"no answer to the request", "http://" + silent.addr() + "/", KindTimeout, false},
	} {
		_, err := f.Get(context.Background(), c.url, nil)
		if KindOf(err) != c.kind || Unsent(err) != c.unsent {
			t.Errorf("%s: %v (kind %v), unsent %v; want kind %v, unsent %v", c.name, err, KindOf(err), Unsent(err), c.kind, c.unsent)
		}
	}
}

// TestErrorText: the error of each kind of failure, against loopback
// servers, has its kind and a text that names the URL once and the cause
// once, right after the URL: no package's name repeated ("tls: ... tls:
// ... tls:"), nor the kind before a cause that already says it
// ("connect: dial tcp ...: connect: connection refused"). A TLS failure
// says which address the handshake was with.
func TestErrorText(t *testing.T) {
	ca := newTestCA(t, "weft test CA")
	stranger := newTestCA(t, "a CA no one trusts")
	serveTLS := func(cert tls.Certificate, maxVersion uint16) string {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t.Errorf("the server was asked for %s", r.URL)
		}))
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshakes are the point
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS10, MaxVersion: maxVersion}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		return port
	}
	silent := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, done <-chan struct{}) { <-done })
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)
	plainAddr := plain.Listener.Addr().String()
	refused := freePort(t)
	_, refusedPort, _ := net.SplitHostPort(refused)

	cfg := testConfig()
	cfg.TLSConfig = &tls.Config{RootCAs: ca.pool()}
	cfg.Resolve = map[string]string{"site.test": "127.0.0.1", "denied.test": "127.0.0.2"}
	cfg.DenyCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}
	f := newFetcher(t, cfg) // the generous bounds of testConfig: no handshake is cut on a busy machine
	cfg.TLSHandshakeTimeout, cfg.ResponseHeaderTimeout = 300*time.Millisecond, 300*time.Millisecond
	quick := newFetcher(t, cfg)
	cfg.ResponseHeaderTimeout, cfg.Timeout = 10*time.Second, 300*time.Millisecond
	short := newFetcher(t, cfg) // whose whole request ends first

	hour := time.Hour
	for _, c := range []struct {
		name  string
		url   string
		kind  Kind
		cause string   // the cause, which the text must hold once
		f     *Fetcher // nil: f
	}{
		{"connect refused", "http://site.test:" + refusedPort + "/", KindConnect, "dial tcp " + refused + ": connect: connection refused", nil},
		{"dns", "http://nosuch.test/", KindDNS, "lookup nosuch.test: no such host", nil},
		{"address guard", "http://denied.test/", KindRefused, "dial tcp 127.0.0.2:80: prohibited IP address: 127.0.0.2 is denied by 127.0.0.2/32", nil},
		{"tls unknown authority", "https://site.test:" + serveTLS(stranger.validLeaf(t, "site.test"), 0) + "/robots.txt", KindTLS,
			"certificate signed by unknown authority (TLS handshake with 127.0.0.1:", nil},
		{"tls wrong host", "https://site.test:" + serveTLS(ca.validLeaf(t, "other.test"), 0) + "/", KindTLS,
			"certificate is valid for other.test, not site.test (TLS handshake with 127.0.0.1:", nil},
		{"tls expired", "https://site.test:" + serveTLS(ca.leaf(t, []string{"site.test"}, time.Now().Add(-2*hour), time.Now().Add(-hour)), 0) + "/", KindTLS,
			"certificate has expired or is not yet valid: current time ", nil},
		{"tls 1.0 only", "https://site.test:" + serveTLS(ca.validLeaf(t, "site.test"), tls.VersionTLS10) + "/", KindTLS,
			"refused by the server: protocol version not supported (TLS handshake with 127.0.0.1:", nil},
		{"not a TLS server", "https://" + plainAddr + "/", KindTLS, "the server's answer is not TLS (TLS handshake with " + plainAddr + ")", nil},
		{"tls handshake timeout", "https://" + silent.addr() + "/", KindTimeout,
			"not complete within 300ms (TLS handshake with " + silent.addr() + ")", quick},
		{"response header timeout", "http://" + silent.addr() + "/", KindTimeout, "net/http: timeout awaiting response headers", quick},
		{"request timeout", "http://" + silent.addr() + "/", KindTimeout, "no response within 300ms", short},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := cmp.Or(c.f, f).Get(context.Background(), c.url, nil)
			if KindOf(err) != c.kind {
				t.Fatalf("kind %v, want %v (err %v)", KindOf(err), c.kind, err)
			}
			text := err.Error()
			t.Log(text)
			if !strings.HasPrefix(text, "fetch "+c.url+": ") || strings.Count(text, c.url) != 1 {
				t.Errorf("%q: want it to begin with fetch %s: and name the URL once", text, c.url)
			}
			if !strings.HasPrefix(text, "fetch "+c.url+": "+c.cause) || strings.Count(text, c.cause) != 1 {
				t.Errorf("%q: want the cause %q once, right after the URL", text, c.cause)
			}
			for _, word := range []string{"tls", "x509", "dns", "connect", "timeout", "refused", "handshake"} {
				if n := strings.Count(strings.ToLower(text), word+":"); n > 1 {
					t.Errorf("%q: %q %d times", text, word+":", n)
				}
			}
			// The crawl's summary puts the kind before it ("tls: fetch
			// ..."): a TLS error must not say it again.
			if c.kind == KindTLS && strings.Contains(strings.ToLower(text), "tls:") {
				t.Errorf("%q: names tls as a prefix; labelled with its kind it would read tls: twice", text)
			}
		})
	}
}

// TestNoSuchHost tells a name that does not exist from a resolver that
// failed, through the errors a fetch wraps them in.
func TestNoSuchHost(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&Error{Kind: KindDNS, Err: &dialError{KindDNS, &net.DNSError{Err: "no such host", Name: "a.invalid", IsNotFound: true}}}, true},
		{&Error{Kind: KindDNS, Err: &net.DNSError{Err: "i/o timeout", Name: "a.test", IsTimeout: true}}, false},
		{&Error{Kind: KindDNS, Err: &net.DNSError{Err: "server misbehaving", Name: "a.test", IsTemporary: true}}, false},
		{&Error{Kind: KindConnect, Err: errors.New("connection refused")}, false},
		{nil, false},
	} {
		if got := NoSuchHost(tc.err); got != tc.want {
			t.Errorf("NoSuchHost(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
