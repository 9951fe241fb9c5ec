package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
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
