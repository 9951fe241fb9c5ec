package crawl

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
)

// rawSite is a web server on loopback that writes each response as raw
// bytes to its socket, not through net/http, and logs exactly what it
// received and sent on each path: the truth the archive is held to.
type rawSite struct {
	ln     net.Listener
	routes map[string]string // path -> the whole response, as sent
	wg     sync.WaitGroup

	mu       sync.Mutex
	received map[string][]byte
	sent     map[string][]byte
}

func startRawSite(t *testing.T, routes map[string]string) *rawSite {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawSite{ln: ln, routes: routes, received: map[string][]byte{}, sent: map[string][]byte{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				s.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
	})
	return s
}

// serve answers the requests of one keep-alive connection in turn.
func (s *rawSite) serve(c net.Conn) {
	var head []byte
	buf := make([]byte, 1)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
		head = append(head, buf[0])
		if !bytes.HasSuffix(head, []byte("\r\n\r\n")) {
			continue
		}
		line, _, _ := bytes.Cut(head, []byte("\r\n"))
		fields := strings.Fields(string(line))
		path := "?"
		if len(fields) == 3 {
			path = fields[1]
		}
		resp, ok := s.routes[path]
		if !ok {
			resp = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
		}
		s.mu.Lock() // logged before it is sent, so before the crawler has it
		s.received[path] = head
		s.sent[path] = []byte(resp)
		s.mu.Unlock()
		if _, err := io.WriteString(c, resp); err != nil {
			return
		}
		head = nil
	}
}

// chunk renders body in chunks of n bytes, the first with an extension.
func chunk(body string, n int) string {
	var b strings.Builder
	for i := 0; i < len(body); i += n {
		part := body[i:min(i+n, len(body))]
		ext := ""
		if i == 0 {
			ext = ";name=\"first\""
		}
		fmt.Fprintf(&b, "%X%s\r\n%s\r\n", len(part), ext, part)
	}
	return b.String()
}

// TestArchiveHoldsTheBytesSent crawls a server that writes raw bytes:
// odd header case, duplicate fields, a folded line, bare LF line ends,
// chunked bodies with extensions and trailers, a gzip body sent chunked,
// brotli, zstd sent chunked, and gzip under brotli.
// Every response record's block must equal, byte for byte, what the
// server's log says it sent, and every request record what it received;
// the payload digest is the de-chunked entity body's, content coding
// kept. One header block that WARC readers would split early (a folded
// line of a lone space and a bare LF) is archived as parsed and counted.
func TestArchiveHoldsTheBytesSent(t *testing.T) {
	page := `<html><head><title>raw</title></head><body>` +
		`<a href="/lf">lf</a> <a href="/gz">gz</a> <a href="/odd">odd</a>` +
		`<a href="/br">br</a> <a href="/zst">zstd</a> <a href="/stack">gzip, br</a></body></html>`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, "<html><body>compressed, then chunked</body></html>")
	zw.Close()
	var br, stack bytes.Buffer
	bw := brotli.NewWriter(&br)
	io.WriteString(bw, "<html><body>in brotli</body></html>")
	bw.Close()
	bw = brotli.NewWriter(&stack)
	bw.Write(gz.Bytes())
	bw.Close()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	zst := enc.EncodeAll([]byte("<html><body>in zstd, then chunked</body></html>"), nil)
	enc.Close()
	routes := map[string]string{
		"/robots.txt": "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nTRANSFER-ENCODING: chunked\r\n\r\n" +
			chunk("User-agent: *\nDisallow: /private\n", 10) + "0\r\n\r\n",
		"/": "HTTP/1.1 200 OK\r\n" +
			"Content-Type: text/html; charset=utf-8\r\n" +
			"x-powered-by: raw\r\n" +
			"Set-Cookie: a=1\r\n" +
			"ETag: \"v1\"\r\n" +
			"Set-Cookie: b=2\r\n" +
			"X-Folded: one\r\n" +
			"   two\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"Trailer: X-Sum\r\n" +
			"\r\n" +
			chunk(page, 37) + "0;end\r\nX-Sum: 7\r\n\r\n",
		"/lf": "HTTP/1.1 200 OK\nContent-Type: text/html\nContent-Length: 21\nconnection: keep-alive\n\n<p>bare line ends</p>",
		"/gz": "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" +
			chunk(gz.String(), 16) + "0\r\n\r\n",
		"/odd": "HTTP/1.1 200 OK\nContent-Type: text/html\nX-Odd: a\n \nContent-Length: 11\n\n<p>odd</p>\n",
		"/br":  fmt.Sprintf("HTTP/1.1 200 OK\r\ncontent-encoding: br\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n", br.Len()) + br.String(),
		"/zst": "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: zstd\r\nTransfer-Encoding: chunked\r\n\r\n" +
			chunk(string(zst), 7) + "0\r\n\r\n",
		"/stack": fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip, br\r\nContent-Length: %d\r\n\r\n", stack.Len()) + stack.String(),
	}
	site := startRawSite(t, routes)
	dir := t.TempDir()
	cfg := bare(Config{
		Seeds: []string{"http://" + site.ln.Addr().String() + "/"}, DataDir: dir, Workers: 2, Delay: time.Millisecond,
		UserAgent: "weft/test (+https://example.org/weft-crawler)", NoSitemaps: true, NearDupThreshold: -1,
	})
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rendered != 1 {
		t.Errorf("%d exchanges archived as parsed, want 1 (/odd)", sum.Rendered)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "warc", "*.warc.gz"))
	seen := map[string]bool{}
	for _, f := range files {
		for _, r := range readWARC(t, f) {
			typ, uri := r.header.Get("WARC-Type"), r.header.Get("WARC-Target-URI")
			if typ != "request" && typ != "response" {
				continue
			}
			path := uri[strings.Index(uri[len("http://"):], "/")+len("http://"):]
			site.mu.Lock()
			received, sent := site.received[path], site.sent[path]
			site.mu.Unlock()
			switch typ {
			case "request":
				if path != "/odd" && !bytes.Equal(r.block, received) {
					t.Errorf("%s: request record\n%q\nserver received\n%q", path, r.block, received)
				}
			case "response":
				seen[path] = true
				if p := r.header.Get("WARC-Protocol"); p != "http/1.1" {
					t.Errorf("%s: WARC-Protocol %q", path, p)
				}
				if path == "/odd" {
					if bytes.Equal(r.block, sent) || !bytes.HasSuffix(r.block, []byte("\r\n\r\n<p>odd</p>\n")) {
						t.Errorf("/odd: block %q: want it as parsed", r.block)
					}
					continue
				}
				if !bytes.Equal(r.block, sent) {
					t.Errorf("%s: response record\n%q\nserver sent\n%q", path, r.block, sent)
				}
			}
		}
	}
	for path := range routes {
		if !seen[path] {
			t.Errorf("%s: no response record", path)
		}
	}
	// The payloads read back: de-chunked, content coding kept, digests
	// checked (warc.ReadRecord).
	a, err := archive.Open(dir, canon.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for path, want := range map[string]string{"/": page, "/gz": gz.String(), "/lf": "<p>bare line ends</p>",
		"/br": br.String(), "/zst": string(zst), "/stack": stack.String()} {
		l, err := a.Get("http://"+site.ln.Addr().String()+path, time.Time{})
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if string(l.Record.Payload) != want {
			t.Errorf("%s: payload read back %q, want %q", path, l.Record.Payload, want)
		}
		if d := l.Capture.Digest; d != sha1.Sum([]byte(want)) {
			t.Errorf("%s: capture digest %x, want the de-chunked payload's", path, d)
		}
	}
}
