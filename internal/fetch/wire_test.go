package fetch

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http/httputil"
	"strings"
	"sync"
	"testing"
)

// wireServer is a keep-alive server on loopback that writes each
// response as given, byte for byte, and logs the bytes it received and
// sent: the truth a recorded exchange is held to.
type wireServer struct {
	ln        net.Listener
	responses []string // the i-th request on any connection gets responses[i]
	wg        sync.WaitGroup

	mu       sync.Mutex
	n        int
	received [][]byte
	sent     [][]byte
	conns    int
}

func newWireServer(t *testing.T, responses ...string) *wireServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &wireServer{ln: ln, responses: responses}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				for {
					head, err := readHead(c)
					if err != nil {
						return
					}
					s.mu.Lock()
					i := s.n
					s.n++
					s.received = append(s.received, head)
					if i < len(s.responses) { // logged before it is sent, so before the client has it
						s.sent = append(s.sent, []byte(s.responses[i]))
					}
					s.mu.Unlock()
					if i >= len(s.responses) {
						return
					}
					if _, err := io.WriteString(c, s.responses[i]); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

func (s *wireServer) log(i int) (received, sent []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received[i], s.sent[i]
}

// The responses of TestWireBytesExact: what servers send that net/http's
// parser normalises away.
const (
	// Odd case, a duplicate field, a folded line, chunk extensions, a
	// chunk size in upper-case hex with padding, and trailers.
	wireChunked = "HTTP/1.1 200 OK\r\n" +
		"content-TYPE: text/html\r\n" +
		"X-Dup: one\r\n" +
		"ETag: \"abc\"\r\n" +
		"X-Dup: two\r\n" +
		"X-Folded: first part\r\n" +
		"\tsecond part\r\n" +
		"Transfer-Encoding: chunked\r\n" +
		"Trailer: X-Checksum\r\n" +
		"\r\n" +
		"7;name=value\r\n<p>hel \r\n" +
		"00A\r\nlo, world!\r\n" +
		"3;a=\"quoted\";b\r\n</p\r\n" +
		"1\r\n>\r\n" +
		"0;last\r\n" +
		"X-Checksum: 42\r\n" +
		"\r\n"
	wireChunkedBody = "<p>hel lo, world!</p>"
	// Bare LF line ends and a Content-Length body.
	wireLF     = "HTTP/1.1 404 Not Found\nServer: raw\nContent-Length: 9\nconnection: keep-alive\n\nnot here\n"
	wireLFBody = "not here\n"
	// An interim response before the final one: only the final one is
	// the response record's.
	wireEarlyHints = "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
	wireFinal      = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nCache-Control: max-age=60\r\n\r\nok"
)

// TestWireBytesExact holds the recorded exchanges to the server's own log
// of what it received and sent, over one keep-alive connection: the
// request as written, and the response with its case, order,
// duplicates, folded lines, line ends, chunk framing and trailers.
func TestWireBytesExact(t *testing.T) {
	srv := newWireServer(t, wireChunked, wireLF, wireEarlyHints+wireFinal, wireChunked)
	f := newFetcher(t, testConfig())
	for i, want := range []struct{ resp, body string }{
		{wireChunked, wireChunkedBody},
		{wireLF, wireLFBody},
		{wireFinal, "ok"},
	} {
		r := get(t, f, fmt.Sprintf("http://%s/%d", srv.ln.Addr(), i))
		received, sent := srv.log(i)
		if !bytes.Equal(r.RequestHeader, received) {
			t.Errorf("%d: request recorded\n%q\nserver received\n%q", i, r.RequestHeader, received)
		}
		wire := append(append([]byte{}, r.ResponseHeader...), r.Body...)
		if r.WireBody != nil {
			wire = append(r.ResponseHeader[:len(r.ResponseHeader):len(r.ResponseHeader)], r.WireBody...)
		}
		if string(wire) != want.resp || !strings.HasSuffix(string(sent), want.resp) {
			t.Errorf("%d: response recorded\n%q\nserver sent\n%q", i, wire, sent)
		}
		if string(r.Body) != want.body || r.Protocol != "http/1.1" || r.TLS != "" {
			t.Errorf("%d: Body %q Protocol %q TLS %q", i, r.Body, r.Protocol, r.TLS)
		}
		if (r.WireBody != nil) != (i == 0) {
			t.Errorf("%d: WireBody %q", i, r.WireBody)
		}
	}
	if r := get(t, f, "http://"+srv.ln.Addr().String()+"/3"); r.Header.Get("X-Folded") != "first part second part" || len(r.Header.Values("X-Dup")) != 2 {
		t.Errorf("parsed header %v", r.Header)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.conns != 1 {
		t.Errorf("%d connections: the exchanges were not all on one", srv.conns)
	}
}

// TestWireBodyCutAtCap: a chunked body over MaxBodyBytes is recorded
// up to where the body was cut, so that its chunks hold exactly Body.
func TestWireBodyCutAtCap(t *testing.T) {
	body := strings.Repeat("0123456789", 50)
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
	for i := 0; i < len(body); i += 70 {
		part := body[i:min(i+70, len(body))]
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(part), part)
	}
	b.WriteString("0\r\n\r\n")
	srv := newWireServer(t, b.String())
	cfg := testConfig()
	cfg.MaxBodyBytes = 200
	r := get(t, newFetcher(t, cfg), "http://"+srv.ln.Addr().String()+"/")
	if r.Truncated != TruncatedLength || string(r.Body) != body[:200] {
		t.Fatalf("Truncated %q Body %q", r.Truncated, r.Body)
	}
	_, sent := srv.log(0)
	if !bytes.HasPrefix(sent, append(r.ResponseHeader[:len(r.ResponseHeader):len(r.ResponseHeader)], r.WireBody...)) {
		t.Errorf("recorded %q is not a prefix of what was sent", r.WireBody)
	}
	if got := dechunk(t, r.WireBody, false); got != body[:200] {
		t.Errorf("WireBody de-chunks to %q", got)
	}
}

// dechunk reads a chunked body with net/http's own reader; cut says it
// may end early.
func dechunk(t *testing.T, b []byte, whole bool) string {
	t.Helper()
	out, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(b)))
	if err != nil && (whole || err != io.ErrUnexpectedEOF) {
		t.Fatalf("de-chunk %q: %v", b, err)
	}
	return string(out)
}

// TestWireRecordsAnySplit feeds random chunked responses to a wire in
// random pieces, as reads of a connection come: the header block is found
// wherever its end falls, and the body recorded de-chunks to the payload,
// whole or cut anywhere.
func TestWireRecordsAnySplit(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	for range 2000 {
		payload := make([]byte, r.IntN(300))
		for i := range payload {
			payload[i] = byte('a' + r.IntN(26))
		}
		lf := "\r\n"
		if r.IntN(4) == 0 {
			lf = "\n"
		}
		var b bytes.Buffer
		if r.IntN(3) == 0 {
			b.WriteString("HTTP/1.1 100 Continue" + lf + lf)
		}
		head := "HTTP/1.1 200 OK" + lf + "transfer-encoding: chunked" + lf + "X-A: b" + lf + lf
		b.WriteString(head)
		for i := 0; i < len(payload); {
			n := min(1+r.IntN(40), len(payload)-i)
			ext := ""
			if r.IntN(3) == 0 {
				ext = ";x=y"
			}
			fmt.Fprintf(&b, "%x%s\r\n%s\r\n", n, ext, payload[i:i+n])
			i += n
		}
		b.WriteString("0\r\n")
		if r.IntN(2) == 0 {
			b.WriteString("X-T: 1\r\n")
		}
		b.WriteString("\r\n")
		all := b.Bytes()

		w := &wire{}
		for i := 0; i < len(all); {
			n := min(1+r.IntN(20), len(all)-i)
			w.read(all[i : i+n])
			i += n
		}
		if string(w.resp[:w.head]) != head || !w.copying {
			t.Fatalf("header %q (copying %t), want %q", w.resp[:w.head], w.copying, head)
		}
		raw := w.resp[w.head:]
		if end := chunkedPrefix(raw, len(payload), true); end != len(raw) {
			t.Fatalf("whole body ends at %d of %d: %q", end, len(raw), raw)
		}
		cut := r.IntN(len(payload) + 1)
		if got := dechunk(t, raw[:chunkedPrefix(raw, cut, false)], false); got != string(payload[:cut]) {
			t.Fatalf("cut at %d: de-chunks to %q, want %q", cut, got, payload[:cut])
		}
	}
}

// TestWireSkipsBodyWithoutCoding: a body with no transfer coding is
// counted, not copied (Get keeps it as Body).
func TestWireSkipsBodyWithoutCoding(t *testing.T) {
	w := &wire{}
	w.read([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe"))
	w.read([]byte("llo"))
	if string(w.resp) != "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n" || w.skipped != 5 || w.copying {
		t.Errorf("resp %q skipped %d copying %t", w.resp, w.skipped, w.copying)
	}
}

// capsByType is a BodyPolicy of fixed caps by media type.
type capsByType map[string]int64

func (c capsByType) BodyLimit(mt string) (int64, bool) {
	n, ok := c[mt]
	return n, ok
}

// TestBodyPolicy: the body policy's cap for a media type replaces
// MaxBodyBytes, above it or below it; a cap of 0 refuses the body unread;
// a type it does not name is left to MaxBodyBytes.
func TestBodyPolicy(t *testing.T) {
	big := strings.Repeat("x", 300)
	srv := newWireServer(t,
		"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 300\r\n\r\n"+big,
		"HTTP/1.1 200 OK\r\nContent-Type: Application/PDF\r\nContent-Length: 300\r\n\r\n"+big,
		"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 300\r\n\r\n"+big,
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 300\r\n\r\n"+big)
	cfg := testConfig()
	cfg.MaxBodyBytes = 100
	cfg.Bodies = capsByType{"text/html": 10, "application/pdf": 1000, "image/png": 0}
	f := newFetcher(t, cfg)
	for i, want := range []struct {
		n         int
		truncated string
		refused   bool
	}{{10, TruncatedLength, false}, {300, "", false}, {0, TruncatedLength, true}, {100, TruncatedLength, false}} {
		r := get(t, f, fmt.Sprintf("http://%s/%d", srv.ln.Addr(), i))
		if len(r.Body) != want.n || r.Truncated != want.truncated || r.Refused != want.refused {
			t.Errorf("%d (%s): %d bytes, truncated %q, refused %t; want %d, %q, %t",
				i, r.Header.Get("Content-Type"), len(r.Body), r.Truncated, r.Refused, want.n, want.truncated, want.refused)
		}
	}
}
