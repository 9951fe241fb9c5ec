package fetch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// testConfig returns a Config that allows loopback.
func testConfig() Config {
	return Config{
		UserAgent:  "weft-test/1.0 (+http://127.0.0.1/bot)",
		AllowCIDRs: loopback,
		// Generous: the machine is shared and tests run under -race. A
		// test that wants a timeout to fire sets that one short.
		ConnectTimeout:        10 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
		IdleTimeout:           10 * time.Second,
		Timeout:               20 * time.Second,
		// Any name not mapped by a test must fail here, never reach DNS.
		Resolver: &fakeResolver{},
	}
}

func newFetcher(t testing.TB, cfg Config) *Fetcher {
	t.Helper()
	f, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

func get(t testing.TB, f *Fetcher, url string) *Response {
	t.Helper()
	r, err := f.Get(context.Background(), url, nil)
	if err != nil {
		t.Fatalf("Get %s: %v", url, err)
	}
	return r
}

func wantKind(t testing.TB, err error, want Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want kind %v", want)
	}
	if got := KindOf(err); got != want {
		t.Fatalf("kind = %v, want %v (err: %v)", got, want, err)
	}
}

// rawServer is a TCP server on loopback for behaviour httptest cannot
// produce. Each accepted connection has its request head read and kept in
// requests, then is handed to handle with the server's done channel, which
// is closed at cleanup: handlers that wait must also wait on it.
type rawServer struct {
	ln       net.Listener
	accepted atomic.Int32
	done     chan struct{}
	wg       sync.WaitGroup

	mu       sync.Mutex
	conns    []net.Conn
	requests [][]byte
}

func newRawServer(t testing.TB, network, addr string, handle func(c net.Conn, done <-chan struct{})) *rawServer {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	return startRawServer(t, ln, handle)
}

func startRawServer(t testing.TB, ln net.Listener, handle func(c net.Conn, done <-chan struct{})) *rawServer {
	s := &rawServer{ln: ln, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				head, err := readHead(c)
				if err != nil {
					return
				}
				s.mu.Lock()
				s.requests = append(s.requests, head)
				s.mu.Unlock()
				if handle != nil {
					handle(c, s.done)
				}
			}()
		}
	}()
	t.Cleanup(func() {
		close(s.done)
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) addr() string { return s.ln.Addr().String() }

func (s *rawServer) request(i int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.requests) {
		return nil
	}
	return s.requests[i]
}

// readHead reads one request head byte by byte, so nothing after it is
// consumed, and returns it including the final CRLF CRLF.
func readHead(c net.Conn) ([]byte, error) {
	br := bufio.NewReaderSize(c, 16)
	var head []byte
	for !bytes.HasSuffix(head, []byte("\r\n\r\n")) {
		b, err := br.ReadByte()
		if err != nil {
			return head, err
		}
		head = append(head, b)
	}
	return head, nil
}

// sleep waits d or until done is closed; it reports whether d passed.
func sleep(d time.Duration, done <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// fakeResolver answers from a map and counts lookups per name. Names not
// in the map are not found. If gate is non-nil, lookups wait for it.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]netip.Addr
	errs    map[string]error
	calls   map[string]int
	gate    chan struct{}
	started chan string
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	if r.calls == nil {
		r.calls = make(map[string]int)
	}
	r.calls[host]++
	addrs, ok := r.answers[host]
	err := r.errs[host]
	gate, started := r.gate, r.started
	r.mu.Unlock()
	if started != nil {
		started <- host
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// freePort returns a loopback address on which nothing listens.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

var errTest = errors.New("test error")

// slack bounds how long a test may take for an operation that should end
// after a short timeout: far less than the hostile server would take if the
// timeout failed, far more than scheduling delays on a loaded machine.
const slack = 5 * time.Second

// getUnderLoad is get for tests whose timeouts are so short that a loaded
// machine may delay the server's response headers past them. Such attempts
// (KindTimeout, no response) are retried a few times; a cut body is not an
// error and is returned at once.
func getUnderLoad(t testing.TB, f *Fetcher, url string) *Response {
	t.Helper()
	for attempt := 1; ; attempt++ {
		r, err := f.Get(context.Background(), url, nil)
		if err == nil {
			return r
		}
		if KindOf(err) != KindTimeout || attempt == 5 {
			t.Fatalf("Get %s: %v", url, err)
		}
		t.Logf("attempt %d: %v (busy machine?); retrying", attempt, err)
	}
}
