package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func benchServer(b *testing.B, encoding string, body []byte, length bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if encoding != "" {
			w.Header().Set("Content-Encoding", encoding)
		}
		if length {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

var page40k = []byte(strings.Repeat("<p><a href=\"/some/link\">a link</a> and text</p>\n", 800))[:40<<10]

// BenchmarkGet: keep-alive GETs of a 40 KB page, from a server in the same
// process (its work and allocations are in the figures too).
func BenchmarkGet(b *testing.B) {
	for _, bc := range []struct {
		name, encoding string
		body           []byte
		length         bool
	}{
		{"plain-chunked", "", page40k, false},
		{"plain-length", "", page40k, true},
		{"gzip-chunked", "gzip", gzipBytes(b, page40k), false},
		{"br-chunked", "br", brotliBytes(b, page40k), false},
		{"zstd-chunked", "zstd", zstdBytes(b, page40k), false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := benchServer(b, bc.encoding, bc.body, bc.length)
			f := newFetcher(b, testConfig())
			ctx := context.Background()
			b.ReportAllocs()
			b.SetBytes(int64(len(page40k)))
			for b.Loop() {
				r, err := f.Get(ctx, srv.URL+"/page", nil)
				if err != nil || len(r.Decoded) != len(page40k) {
					b.Fatalf("err %v, %d bytes", err, len(r.Decoded))
				}
			}
		})
	}
}

// TestGetCopiesNoRequestBody: a GET's empty body (noReplay, which keeps
// net/http from replaying it) is copied to the connection without the
// 32 KB buffer io.Copy would allocate for it, on every request.
func TestGetCopiesNoRequestBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	f := newFetcher(t, testConfig())
	get := func() {
		if r, err := f.Get(context.Background(), srv.URL+"/", nil); err != nil || string(r.Decoded) != "ok" {
			t.Fatalf("Get: %v", err)
		}
	}
	get() // the connection, kept alive from here on
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 200
	for range n {
		get()
	}
	runtime.ReadMemStats(&after)
	// The client's and this process's server's allocations: about 12 KB
	// a request without the copy buffer, 45 KB with it.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 24<<10 {
		t.Errorf("%d bytes allocated a request: the empty request body is copied through a buffer", per)
	}
}
