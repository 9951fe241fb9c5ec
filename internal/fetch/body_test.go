package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

func gzipBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zlibBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func flateBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.DefaultCompression)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func brotliBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := brotli.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// serveBytes serves body with the given Content-Encoding, chunked if asked.
func serveBytes(t testing.TB, encoding string, body []byte, chunked bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if encoding != "" {
			w.Header().Set("Content-Encoding", encoding)
		}
		w.Header().Set("Content-Type", "text/html")
		if !chunked {
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		}
		for rest := body; len(rest) > 0; {
			n := min(len(rest), 8<<10)
			if _, err := w.Write(rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
			if chunked {
				w.(http.Flusher).Flush()
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestDecoding(t *testing.T) {
	page := []byte(strings.Repeat("<p>hello, archive</p>\n", 2000))
	gz := gzipBytes(t, page)
	for _, tc := range []struct {
		name, encoding string
		wire           []byte
		want           []byte
	}{
		{"gzip", "gzip", gz, page},
		{"x-gzip", "x-gzip", gz, page},
		{"gzip multistream", "gzip", append(gzipBytes(t, page[:1000]), gzipBytes(t, page[1000:])...), page},
		{"deflate zlib", "deflate", zlibBytes(t, page), page},
		{"deflate raw", "deflate", flateBytes(t, page), page},
		{"br", "br", brotliBytes(t, page), page},
		{"gzip then br", "gzip, br", brotliBytes(t, gz), page},
		{"identity", "identity", page, page},
		{"upper case", "GZIP", gz, page},
	} {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s chunked=%v", tc.name, chunked), func(t *testing.T) {
				srv := serveBytes(t, tc.encoding, tc.wire, chunked)
				r := get(t, newFetcher(t, testConfig()), srv.URL)
				if !bytes.Equal(r.Body, tc.wire) {
					t.Errorf("Body (%d bytes) is not the wire entity (%d bytes)", len(r.Body), len(tc.wire))
				}
				if !bytes.Equal(r.Decoded, tc.want) || r.DecodeErr != nil || r.Truncated != "" {
					t.Errorf("Decoded %d bytes, want %d; DecodeErr %v; Truncated %q", len(r.Decoded), len(tc.want), r.DecodeErr, r.Truncated)
				}
			})
		}
	}
}

// Decode undoes a body's codings as Get does, for a body read back from
// an archive, within MaxBodyBytes.
func TestDecodeArchived(t *testing.T) {
	page := []byte(strings.Repeat("abcdefgh", 1000))
	f := newFetcher(t, testConfig())
	for _, tc := range []struct {
		encoding string
		wire     []byte
	}{{"gzip", gzipBytes(t, page)}, {"gzip, br", brotliBytes(t, gzipBytes(t, page))}, {"", page}} {
		h := http.Header{}
		if tc.encoding != "" {
			h.Set("Content-Encoding", tc.encoding)
		}
		if got, err := f.Decode(h, tc.wire); err != nil || !bytes.Equal(got, page) {
			t.Errorf("%q: %d bytes, %v", tc.encoding, len(got), err)
		}
	}
	cfg := testConfig()
	cfg.MaxBodyBytes = 100
	h := http.Header{"Content-Encoding": {"gzip"}}
	if _, err := newFetcher(t, cfg).Decode(h, gzipBytes(t, page)); !errors.Is(err, ErrDecodedTooLarge) {
		t.Errorf("over MaxBodyBytes: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	page := []byte(strings.Repeat("abcdefgh", 1000))
	gz := gzipBytes(t, page)
	corrupt := bytes.Clone(gz)
	corrupt[len(corrupt)-5] ^= 0xff // break the CRC
	for _, tc := range []struct {
		name, encoding string
		wire           []byte
		wantDecoded    []byte // nil: do not check
		wantErr        error
	}{
		{"unknown coding passes through", "zstd", page, page, ErrUnsupportedEncoding},
		{"mislabelled plain body passes through", "gzip", page, page, gzip.ErrHeader},
		{"bad checksum", "gzip", corrupt, nil, gzip.ErrChecksum},
		{"truncated", "gzip", gz[:len(gz)/2], nil, io.ErrUnexpectedEOF},
		{"truncated after the header", "gzip", gz[:12], []byte{}, io.ErrUnexpectedEOF},
		{"corrupt raw deflate", "deflate", []byte("\xff\xff\xff\xff not deflate"), []byte{}, flate.CorruptInputError(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serveBytes(t, tc.encoding, tc.wire, false)
			r := get(t, newFetcher(t, testConfig()), srv.URL)
			if !errors.Is(r.DecodeErr, tc.wantErr) {
				t.Fatalf("DecodeErr = %v, want %v", r.DecodeErr, tc.wantErr)
			}
			if !strings.Contains(r.DecodeErr.Error(), srv.URL) {
				t.Errorf("DecodeErr %q does not name the URL", r.DecodeErr)
			}
			if tc.wantDecoded != nil && !bytes.Equal(r.Decoded, tc.wantDecoded) {
				t.Errorf("Decoded = %d bytes, want %d", len(r.Decoded), len(tc.wantDecoded))
			}
			if len(r.Decoded) > len(page) || !bytes.HasPrefix(page, r.Decoded) && !bytes.Equal(r.Decoded, tc.wire) {
				t.Errorf("Decoded is neither a prefix of the page nor the wire bytes")
			}
		})
	}
}

// gzipBomb returns n concatenated gzip members of 1 MiB of zeros each:
// about n KiB on the wire, n MiB decoded.
func gzipBomb(t testing.TB, n int) []byte {
	member := gzipBytes(t, make([]byte, 1<<20))
	return bytes.Repeat(member, n)
}

func TestGzipBomb(t *testing.T) {
	bomb := gzipBomb(t, 1024) // 1 GiB decoded
	t.Logf("bomb: %d bytes on the wire, 1 GiB decoded", len(bomb))
	for _, tc := range []struct {
		name      string
		max       int64
		truncated string
	}{
		// The wire entity itself is over the cap.
		{"wire over cap", 64 << 10, TruncatedLength},
		// The wire entity fits; only its decoding is over the cap. Body is
		// complete (the archive record is whole), Decoded is capped.
		{"decoded over cap", 4 << 20, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serveBytes(t, "gzip", bomb, false)
			cfg := testConfig()
			cfg.MaxBodyBytes = tc.max
			f := newFetcher(t, cfg)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			r := get(t, f, srv.URL)
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if r.Truncated != tc.truncated {
				t.Errorf("Truncated = %q, want %q", r.Truncated, tc.truncated)
			}
			if int64(len(r.Body)) > tc.max || int64(len(r.Decoded)) != tc.max {
				t.Errorf("Body %d, Decoded %d bytes; cap %d", len(r.Body), len(r.Decoded), tc.max)
			}
			if !errors.Is(r.DecodeErr, ErrDecodedTooLarge) {
				t.Errorf("DecodeErr = %v, want ErrDecodedTooLarge", r.DecodeErr)
			}
			// Generous bounds: the point is "not 1 GiB, not seconds".
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
			if elapsed > 2*slack {
				t.Errorf("took %v", elapsed)
			}
		})
	}
}

func TestBodyCap(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 100) // 1000 bytes
	for _, chunked := range []bool{false, true} {
		srv := serveBytes(t, "", body, chunked)
		for _, tc := range []struct {
			max       int64
			wantLen   int
			truncated string
		}{
			{1000, 1000, ""},
			{1001, 1000, ""},
			{999, 999, TruncatedLength},
			{1, 1, TruncatedLength},
		} {
			cfg := testConfig()
			cfg.MaxBodyBytes = tc.max
			r := get(t, newFetcher(t, cfg), srv.URL)
			if len(r.Body) != tc.wantLen || r.Truncated != tc.truncated || !bytes.HasPrefix(body, r.Body) {
				t.Errorf("chunked=%v max=%d: Body %d bytes, Truncated %q; want %d, %q",
					chunked, tc.max, len(r.Body), r.Truncated, tc.wantLen, tc.truncated)
			}
		}
	}
}

func TestEndlessBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	cfg := testConfig()
	cfg.MaxBodyBytes = 100 << 10
	start := time.Now()
	r := get(t, newFetcher(t, cfg), srv.URL)
	if len(r.Body) != 100<<10 || r.Truncated != TruncatedLength {
		t.Errorf("Body %d bytes, Truncated %q", len(r.Body), r.Truncated)
	}
	if d := time.Since(start); d > slack {
		t.Errorf("took %v", d)
	}
}

// drip writes a response head announcing n body bytes, then one body byte
// every gap, until n or done.
func drip(n int, gap time.Duration) func(net.Conn, <-chan struct{}) {
	return func(c net.Conn, done <-chan struct{}) {
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", n)
		for range n {
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
			if !sleep(gap, done) {
				return
			}
		}
	}
}

func TestSlowDripCutBySilence(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, "tcp", "127.0.0.1:0", drip(100, 300*time.Millisecond)) // 30 s in all
	cfg := testConfig()
	cfg.IdleTimeout = 100 * time.Millisecond
	r := getUnderLoad(t, newFetcher(t, cfg), "http://"+srv.addr()+"/")
	if r.Truncated != TruncatedTime || len(r.Body) == 0 || len(r.Body) > 2 {
		t.Errorf("Truncated %q, Body %q", r.Truncated, r.Body)
	}
	if d := r.Duration; d > slack {
		t.Errorf("took %v, want about IdleTimeout", d)
	}
}

// A body that keeps coming, with gaps shorter than IdleTimeout, is read
// whole even though it takes longer than IdleTimeout.
func TestSteadyDripNotCut(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, "tcp", "127.0.0.1:0", drip(15, 100*time.Millisecond)) // 1.5 s in all
	cfg := testConfig()
	cfg.IdleTimeout = time.Second
	r := get(t, newFetcher(t, cfg), "http://"+srv.addr()+"/")
	if r.Truncated != "" || len(r.Body) != 15 || r.Duration < 1300*time.Millisecond {
		t.Errorf("Truncated %q, Body %d bytes, Duration %v", r.Truncated, len(r.Body), r.Duration)
	}
}

func TestFastDripCutByTimeout(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, "tcp", "127.0.0.1:0", drip(10000, 10*time.Millisecond)) // 100 s in all
	cfg := testConfig()
	cfg.IdleTimeout = 2 * time.Second
	cfg.Timeout = 400 * time.Millisecond
	r := getUnderLoad(t, newFetcher(t, cfg), "http://"+srv.addr()+"/")
	d := r.Duration
	if r.Truncated != TruncatedTime || len(r.Body) < 2 {
		t.Errorf("Truncated %q, Body %d bytes", r.Truncated, len(r.Body))
	}
	if d < 350*time.Millisecond || d > slack {
		t.Errorf("took %v, want about Timeout (400ms)", d)
	}
}

func TestNeverAnswers(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, done <-chan struct{}) { <-done })
	cfg := testConfig()
	cfg.ResponseHeaderTimeout = 200 * time.Millisecond
	start := time.Now()
	_, err := newFetcher(t, cfg).Get(context.Background(), "http://"+srv.addr()+"/", nil)
	wantKind(t, err, KindTimeout)
	if d := time.Since(start); d > slack {
		t.Errorf("took %v, want about ResponseHeaderTimeout", d)
	}
}

func TestSlowDripHeaders(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, done <-chan struct{}) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(c, "X-%d: y\r\n", i); err != nil {
				return
			}
			if !sleep(20*time.Millisecond, done) {
				return
			}
		}
	})
	cfg := testConfig()
	// IdleTimeout stays long: the server is never silent for it.
	cfg.ResponseHeaderTimeout = 300 * time.Millisecond
	start := time.Now()
	_, err := newFetcher(t, cfg).Get(context.Background(), "http://"+srv.addr()+"/", nil)
	wantKind(t, err, KindTimeout)
	if d := time.Since(start); d > slack {
		t.Errorf("took %v, want about ResponseHeaderTimeout", d)
	}
}

func TestDisconnectMidBody(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
	part := strings.Repeat("y", 100)
	t.Run("close", func(t *testing.T) {
		srv := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, _ <-chan struct{}) {
			io.WriteString(c, head+part)
		})
		r := get(t, newFetcher(t, testConfig()), "http://"+srv.addr()+"/")
		if r.Truncated != TruncatedDisconnect || string(r.Body) != part {
			t.Errorf("Truncated %q, Body %d bytes", r.Truncated, len(r.Body))
		}
	})
	t.Run("reset", func(t *testing.T) {
		srv := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, done <-chan struct{}) {
			io.WriteString(c, head+part)
			sleep(50*time.Millisecond, done)
			c.(*net.TCPConn).SetLinger(0) // Close sends RST
		})
		r := get(t, newFetcher(t, testConfig()), "http://"+srv.addr()+"/")
		// After an RST the kernel may drop data not yet read.
		if r.Truncated != TruncatedDisconnect || len(r.Body) > len(part) {
			t.Errorf("Truncated %q, Body %d bytes", r.Truncated, len(r.Body))
		}
	})
	t.Run("bad chunk", func(t *testing.T) {
		srv := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, _ <-chan struct{}) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n")
		})
		r := get(t, newFetcher(t, testConfig()), "http://"+srv.addr()+"/")
		if r.Truncated != TruncatedDisconnect || string(r.Body) != "hello" {
			t.Errorf("Truncated %q, Body %q", r.Truncated, r.Body)
		}
	})
}

// TestCanceledMidBody: a fetch canceled while its body is being read
// fails as canceled, from the body read. The cancel comes once the server
// has written far more of the body than the loopback's socket buffers
// hold (a few MiB): the client has then read past the header for sure,
// with no guessed sleep.
func TestCanceledMidBody(t *testing.T) {
	const sent, length = 32 << 20, 64 << 20
	wrote := make(chan struct{})
	srv := newRawServer(t, "tcp", "127.0.0.1:0", func(c net.Conn, done <-chan struct{}) {
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", length)
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096)
		for n := 0; n < sent; n += len(chunk) {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
		close(wrote)
		<-done
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-wrote
		cancel()
	}()
	cfg := testConfig()
	cfg.MaxBodyBytes = 2 * length
	_, err := newFetcher(t, cfg).Get(ctx, "http://"+srv.addr()+"/", nil)
	wantKind(t, err, KindCanceled)
	if !strings.Contains(err.Error(), "reading body") {
		t.Errorf("err %v: want the cancel seen by the body read", err)
	}
}

func TestReadCapped(t *testing.T) {
	var p pools
	data := make([]byte, 3*chunkSize+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	n := int64(len(data))
	for _, tc := range []struct {
		limit, hint int64
	}{
		{n, -1}, {n, 0}, {n, n}, {n + 1, n}, {n - 1, n}, {n - 1, -1},
		{chunkSize, -1}, {chunkSize - 1, -1}, {chunkSize + 1, -1}, {1, -1}, {0, -1},
		{10, 1 << 40}, // a hint over the cap is not trusted for the allocation
		{2 * n, 5},    // more than announced
		{2 * n, 2 * n},
	} {
		for name, r := range map[string]io.Reader{
			"whole":    bytes.NewReader(data),
			"one byte": iotest.OneByteReader(bytes.NewReader(data)),
			"halves":   iotest.HalfReader(bytes.NewReader(data)),
		} {
			if name == "one byte" && tc.limit > chunkSize+1 {
				continue // slow and adds nothing
			}
			b, over, err := p.readCapped(r, tc.limit, tc.hint)
			want := data[:min(n, tc.limit)]
			if err != nil || !bytes.Equal(b, want) || over != (n > tc.limit) || int64(cap(b)) > max(tc.limit, tc.hint)+1 {
				t.Errorf("%s limit %d hint %d: len %d cap %d over %v err %v; want len %d",
					name, tc.limit, tc.hint, len(b), cap(b), over, err, len(want))
			}
		}
	}
	for _, hint := range []int64{-1, 100} {
		b, _, err := p.readCapped(io.MultiReader(bytes.NewReader(data[:10]), errReader{}), 100, hint)
		if !errors.Is(err, errTest) || !bytes.Equal(b, data[:10]) {
			t.Errorf("hint %d: read error: %d bytes, err %v", hint, len(b), err)
		}
	}
}

func BenchmarkReadCapped(b *testing.B) {
	var p pools
	data := make([]byte, 40<<10)
	for _, hint := range []int64{-1, int64(len(data))} {
		b.Run(fmt.Sprintf("hint=%d", hint), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.readCapped(bytes.NewReader(data), 10<<20, hint)
			}
		})
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errTest }

// A request on a connection that sat idle for most of IdleTimeout still
// gives the server the whole IdleTimeout to answer, on the same connection:
// the silence clock restarts when the request is written.
func TestIdleTimeoutRestartsWithRequest(t *testing.T) {
	t.Parallel()
	var newConns, requests atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 2 {
			time.Sleep(time.Second)
		}
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	cfg := testConfig()
	cfg.IdleTimeout = 2 * time.Second
	f := newFetcher(t, cfg)
	get(t, f, srv.URL)
	time.Sleep(1500 * time.Millisecond) // idle, but less than IdleTimeout
	r := get(t, f, srv.URL)             // answered 1 s later: 2.5 s after the last read
	if string(r.Body) != "ok" || r.Truncated != "" {
		t.Errorf("Body %q Truncated %q", r.Body, r.Truncated)
	}
	if n, m := newConns.Load(), requests.Load(); n != 1 || m != 2 {
		t.Errorf("%d connections, %d requests; want 1 and 2 (no retry on a new connection)", n, m)
	}
}
