package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/testwait"
)

func TestGetOrdinary(t *testing.T) {
	var gotHeader http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader = r.Header.Clone()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("ETag", `"abc"`)
		io.WriteString(w, "<html>hello</html>")
	}))
	defer srv.Close()
	f := newFetcher(t, testConfig())

	hdr := http.Header{"If-None-Match": {`"xyz"`}, "accept": {"text/plain"}}
	before := time.Now()
	r, err := f.Get(context.Background(), srv.URL+"/a?b=c", hdr)
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != 200 || r.Status != "200 OK" || r.Proto != "HTTP/1.1" {
		t.Errorf("status = %d %q %q", r.StatusCode, r.Status, r.Proto)
	}
	if string(r.Body) != "<html>hello</html>" || &r.Decoded[0] != &r.Body[0] || r.DecodeErr != nil {
		t.Errorf("Body %q, Decoded %q (must be the same slice), DecodeErr %v", r.Body, r.Decoded, r.DecodeErr)
	}
	if r.Truncated != "" || r.Location != "" {
		t.Errorf("Truncated %q Location %q", r.Truncated, r.Location)
	}
	if r.URL != srv.URL+"/a?b=c" || r.RemoteAddr != srv.Listener.Addr().String() {
		t.Errorf("URL %q RemoteAddr %q", r.URL, r.RemoteAddr)
	}
	if r.Start.Before(before) || r.Duration <= 0 || r.Duration > slack {
		t.Errorf("Start %v Duration %v", r.Start, r.Duration)
	}
	if r.Header.Get("ETag") != `"abc"` {
		t.Errorf("Header = %v", r.Header)
	}
	for k, want := range map[string]string{
		"User-Agent":      testConfig().UserAgent,
		"Accept":          "text/plain", // caller header replaces the default
		"Accept-Encoding": "gzip, deflate, br, zstd",
		"If-None-Match":   `"xyz"`,
	} {
		if got := gotHeader.Get(k); got != want {
			t.Errorf("server saw %s %q, want %q", k, got, want)
		}
	}
	rh := string(r.ResponseHeader)
	if !strings.HasPrefix(rh, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(rh, "\r\n\r\n") ||
		!strings.Contains(rh, "\r\nEtag: \"abc\"\r\n") || !strings.Contains(rh, "Content-Length: 18\r\n") {
		t.Errorf("ResponseHeader = %q", rh)
	}
	q := string(r.RequestHeader)
	if !strings.HasPrefix(q, "GET /a?b=c HTTP/1.1\r\nHost: "+srv.Listener.Addr().String()+"\r\n") ||
		!strings.HasSuffix(q, "\r\n\r\n") || !strings.Contains(q, "\r\nIf-None-Match: \"xyz\"\r\n") {
		t.Errorf("RequestHeader = %q", q)
	}
}

// The recorded request must be byte for byte what went over the wire.
func TestRequestHeaderIsWhatWasSent(t *testing.T) {
	// The server closes each connection after one answer, and says so: a
	// client that reused it could meet the close with its second request
	// (it failed once in CI with "connect: EOF").
	srv := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, _ <-chan struct{}) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
	})
	f := newFetcher(t, testConfig())
	r, err := f.Get(context.Background(), "http://"+srv.addr()+"/p%20q?x=1#frag",
		http.Header{"X-B": {"2", "3"}, "x-a": {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	if sent := srv.request(0); !bytes.Equal(r.RequestHeader, sent) {
		t.Errorf("RequestHeader\n%q\nserver received\n%q", r.RequestHeader, sent)
	}
	// Credentials in the URL become an Authorization header: recorded too.
	r, err = f.Get(context.Background(), "http://user:pw@"+srv.addr()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	sent := srv.request(1)
	if !bytes.Equal(r.RequestHeader, sent) || !bytes.Contains(sent, []byte("\r\nAuthorization: Basic dXNlcjpwdw==\r\n")) {
		t.Errorf("RequestHeader\n%q\nserver received\n%q", r.RequestHeader, sent)
	}
}

func TestKeepAliveReuse(t *testing.T) {
	var newConns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	f := newFetcher(t, testConfig())
	for range 5 {
		get(t, f, srv.URL)
	}
	if n := newConns.Load(); n != 1 {
		t.Errorf("5 sequential GETs opened %d connections, want 1", n)
	}
	f.Close()
	get(t, f, srv.URL)
	if n := newConns.Load(); n != 2 {
		t.Errorf("after Close, %d connections in all, want 2", n)
	}
}

func TestMaxConnsPerHost(t *testing.T) {
	var active, peak atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := active.Add(1)
		defer active.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
	}))
	defer srv.Close()
	cfg := testConfig()
	cfg.MaxConnsPerHost = 2
	f := newFetcher(t, cfg)
	errs := make(chan error, 5)
	for range 5 {
		go func() {
			_, err := f.Get(context.Background(), srv.URL, nil)
			errs <- err
		}()
	}
	// Wait for two requests to be in the handler, then give a third the
	// chance to arrive too if the cap did not hold (a span in which
	// nothing may happen: no event to wait for).
	testwait.Eventually(t, time.Minute, "two requests in the handler", func() bool { return active.Load() >= 2 })
	time.Sleep(100 * time.Millisecond)
	close(release)
	for range 5 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if p := peak.Load(); p != 2 {
		t.Errorf("peak concurrent requests = %d, want 2", p)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a/b/rel":
			w.Header().Set("Location", "../next?x=1")
			w.WriteHeader(http.StatusFound)
		case "/dir/abs":
			w.Header().Set("Location", "http://example.test/elsewhere")
			w.WriteHeader(http.StatusMovedPermanently)
		case "/dir/schemerel":
			w.Header().Set("Location", "//other.test/x")
			w.WriteHeader(http.StatusSeeOther)
		case "/dir/none":
			w.WriteHeader(http.StatusNotModified)
		default:
			hits.Add(1)
		}
	}))
	defer srv.Close()
	f := newFetcher(t, testConfig())
	for _, tc := range []struct{ path, loc string }{
		{"/a/b/rel", srv.URL + "/a/next?x=1"},
		{"/dir/abs", "http://example.test/elsewhere"},
		{"/dir/schemerel", "http://other.test/x"},
		{"/dir/none", ""},
	} {
		r := get(t, f, srv.URL+tc.path)
		if r.StatusCode/100 != 3 || r.Location != tc.loc {
			t.Errorf("%s: status %d Location %q, want 3xx %q", tc.path, r.StatusCode, r.Location, tc.loc)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("a redirect was followed")
	}
	// 2xx with a Location header: not a redirect.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/x")
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv2.Close()
	if r := get(t, f, srv2.URL); r.Location != "" {
		t.Errorf("201 Location = %q, want empty", r.Location)
	}
}

func TestTLSAndHTTP2(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "proto=%s", r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshakes below are expected
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())

	// By default HTTP/1.1 alone is offered, and the exchange is recorded
	// above TLS as it crossed the connection.
	cfg := testConfig()
	cfg.TLSConfig = &tls.Config{RootCAs: pool}
	f := newFetcher(t, cfg)
	r := get(t, f, srv.URL+"/")
	if r.Proto != "HTTP/1.1" || string(r.Body) != "proto=HTTP/1.1" || r.Protocol != "http/1.1" || r.TLS != "tls/1.3" || r.CipherSuite == "" {
		t.Errorf("Proto %q Body %q Protocol %q TLS %q CipherSuite %q", r.Proto, r.Body, r.Protocol, r.TLS, r.CipherSuite)
	}
	if !strings.HasPrefix(string(r.ResponseHeader), "HTTP/1.1 200 OK\r\n") || !bytes.HasPrefix(r.RequestHeader, []byte("GET / HTTP/1.1\r\n")) || r.RemoteAddr != srv.Listener.Addr().String() {
		t.Errorf("ResponseHeader %q RequestHeader %q RemoteAddr %q", r.ResponseHeader, r.RequestHeader, r.RemoteAddr)
	}
	// HTTP2 offers h2 too: the exchange is rendered in HTTP/1.1 form, its
	// protocol named.
	cfg.HTTP2 = true
	r = get(t, newFetcher(t, cfg), srv.URL+"/")
	if r.Proto != "HTTP/2.0" || string(r.Body) != "proto=HTTP/2.0" || r.Protocol != "h2" || r.TLS != "tls/1.3" {
		t.Errorf("h2: Proto %q Body %q Protocol %q TLS %q", r.Proto, r.Body, r.Protocol, r.TLS)
	}
	if !strings.HasPrefix(string(r.ResponseHeader), "HTTP/1.1 200 OK\r\n") || !bytes.HasPrefix(r.RequestHeader, []byte("GET / HTTP/1.1\r\n")) {
		t.Errorf("h2: ResponseHeader %q RequestHeader %q", r.ResponseHeader, r.RequestHeader)
	}

	t.Run("unknown authority", func(t *testing.T) {
		_, err := newFetcher(t, testConfig()).Get(context.Background(), srv.URL, nil)
		wantKind(t, err, KindTLS)
		var uae x509.UnknownAuthorityError
		if !errors.As(err, &uae) {
			t.Errorf("err %v does not wrap x509.UnknownAuthorityError", err)
		}
	})
	t.Run("not a TLS server", func(t *testing.T) {
		plain := httptest.NewServer(http.NotFoundHandler())
		defer plain.Close()
		_, err := f.Get(context.Background(), strings.Replace(plain.URL, "http:", "https:", 1), nil)
		wantKind(t, err, KindTLS)
	})
	t.Run("handshake timeout", func(t *testing.T) {
		silent := newRawServer(t, "tcp", "127.0.0.1:0", nil) // never completes a request head
		cfg := testConfig()
		cfg.TLSHandshakeTimeout = 150 * time.Millisecond
		start := time.Now()
		_, err := newFetcher(t, cfg).Get(context.Background(), "https://"+silent.addr()+"/", nil)
		wantKind(t, err, KindTimeout)
		if d := time.Since(start); d > slack {
			t.Errorf("took %v", d)
		}
	})
}

func TestBadURL(t *testing.T) {
	f := newFetcher(t, testConfig())
	for _, u := range []string{
		"ftp://127.0.0.1/x",
		"http:///nohost",
		"http://:80/",
		"://bad",
		"http://[::1",
		"mailto:x@example.test",
	} {
		_, err := f.Get(context.Background(), u, nil)
		wantKind(t, err, KindBadURL)
		if !strings.Contains(err.Error(), u) {
			t.Errorf("error %q does not name the URL", err)
		}
	}
	for _, h := range []http.Header{
		{"X-Bad": {"a\r\nInjected: 1"}},
		{"Bad Name": {"x"}},
	} {
		_, err := f.Get(context.Background(), "http://127.0.0.1:1/", h)
		wantKind(t, err, KindBadURL)
	}
}

func TestConnectFailures(t *testing.T) {
	f := newFetcher(t, testConfig())
	t.Run("refused by peer", func(t *testing.T) {
		_, err := f.Get(context.Background(), "http://"+freePort(t)+"/", nil)
		wantKind(t, err, KindConnect)
		if !strings.HasPrefix(err.Error(), "fetch http://127.0.0.1:") {
			t.Errorf("Error() = %q", err)
		}
	})
	t.Run("closed before response", func(t *testing.T) {
		srv := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, _ <-chan struct{}) {})
		_, err := f.Get(context.Background(), "http://"+srv.addr()+"/", nil)
		wantKind(t, err, KindConnect)
	})
	t.Run("malformed response", func(t *testing.T) {
		srv := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, _ <-chan struct{}) {
			io.WriteString(c, "SMTP ready\r\n\r\n")
		})
		_, err := f.Get(context.Background(), "http://"+srv.addr()+"/", nil)
		wantKind(t, err, KindProtocol)
	})
	t.Run("headers too big", func(t *testing.T) {
		srv := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, _ <-chan struct{}) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: "+strings.Repeat("a", 4096)+"\r\nContent-Length: 0\r\n\r\n")
		})
		cfg := testConfig()
		cfg.MaxHeaderBytes = 1024
		_, err := newFetcher(t, cfg).Get(context.Background(), "http://"+srv.addr()+"/", nil)
		wantKind(t, err, KindProtocol)
	})
	t.Run("caller canceled", func(t *testing.T) {
		srv := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, done <-chan struct{}) { <-done })
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := f.Get(ctx, "http://"+srv.addr()+"/", nil)
		wantKind(t, err, KindCanceled)
		_, err = f.Get(ctx, "http://"+srv.addr()+"/", nil) // already canceled
		wantKind(t, err, KindCanceled)
	})
	t.Run("caller deadline", func(t *testing.T) {
		srv := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, done <-chan struct{}) { <-done })
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := f.Get(ctx, "http://"+srv.addr()+"/", nil)
		wantKind(t, err, KindCanceled)
	})
}

func TestLookupFollowsResolve(t *testing.T) {
	f, err := New(Config{UserAgent: "weft-test/1", Resolve: map[string]string{"a.test": "127.0.0.9"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for host, want := range map[string]string{"a.test": "127.0.0.9", "A.TEST": "127.0.0.9", "127.0.0.5": "127.0.0.5", "::1": "::1"} {
		got, err := f.Lookup(t.Context(), host)
		if err != nil || got.String() != want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", host, got, err, want)
		}
	}
}

// TestNoTransparentRetry: when a server cuts a reused connection before
// answering, net/http would send the GET again at once, a request no
// politeness clock saw. The fetcher's requests are not replayable: the
// server sees one request and the caller an error, to retry after its gap.
func TestNoTransparentRetry(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	f := newFetcher(t, testConfig())
	get(t, f, srv.URL+"/1") // leaves the connection idle, to be reused
	if _, err := f.Get(context.Background(), srv.URL+"/2", nil); err == nil {
		t.Error("a request whose connection was cut succeeded: it was sent again")
	}
	if got := n.Load(); got != 2 {
		t.Errorf("the server saw %d requests, want 2", got)
	}
	if r := get(t, f, srv.URL+"/3"); string(r.Body) != "ok" || len(r.RequestHeader) == 0 || bytes.Contains(r.RequestHeader, []byte("Content-Length")) || bytes.Contains(r.RequestHeader, []byte("Transfer-Encoding")) {
		t.Errorf("a GET after: body %q, request header %q", r.Body, r.RequestHeader)
	}
}

// TestRequestNeverChunked: the GET weft sends, and archives, is a request
// line and headers only, however slow the machine: no Transfer-Encoding,
// no chunk, one blank line at its end. (Without TransferEncoding
// "identity", net/http probes the empty body for 200 ms and, when the probe
// loses the race, sends the GET chunked; a body whose Read takes 300 ms
// stands for that here.)
func TestRequestNeverChunked(t *testing.T) {
	f, err := New(Config{UserAgent: "weft/test"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	req, err := f.newRequest(t.Context(), "http://a.test/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Body = slowEmpty{}
	var b bytes.Buffer
	if err := req.Write(&b); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, "Transfer-Encoding") || !strings.HasSuffix(s, "\r\n\r\n") || strings.Count(s, "\r\n\r\n") != 1 {
		t.Errorf("request as written:\n%q", s)
	}
}

// slowEmpty is an empty body that takes 300 ms to say so.
type slowEmpty struct{}

func (slowEmpty) Read([]byte) (int, error) { time.Sleep(300 * time.Millisecond); return 0, io.EOF }
func (slowEmpty) Close() error             { return nil }
