package warc

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	nlnwa "github.com/nlnwa/gowarc/v3"
)

// cpuMeter reports "cpu-ns/op": process CPU time (all goroutines, GC
// included) per operation.
type cpuMeter struct {
	start time.Duration
	ok    bool
}

func startCPU() cpuMeter {
	t, ok := processCPU()
	return cpuMeter{t, ok}
}

func (m cpuMeter) report(b *testing.B) {
	t, ok := processCPU()
	if m.ok && ok && b.N > 0 {
		b.ReportMetric(float64(t-m.start)/float64(b.N), "cpu-ns/op")
	}
}

// benchExchange is a 40 KB HTML page with realistic headers.
func benchExchange() Exchange {
	p := htmlPage(42, 40_000)
	return pageExchange("http://www.example.com/articles/2026/03/some-article-title.html", 1, p)
}

// BenchmarkWriteExchange is the whole path, file write included, per
// compression level. MB/s is payload bytes; disk-B/op is what lands on disk.
func BenchmarkWriteExchange(b *testing.B) {
	ex := benchExchange()
	for _, level := range []int{0, 2, 3, -1, 9} {
		name := fmt.Sprintf("level=%d", level)
		if level == 0 {
			name = fmt.Sprintf("level=default(%d)", DefaultCompressionLevel)
		}
		b.Run(name, func(b *testing.B) {
			w, err := NewWriter(Config{Dir: b.TempDir(), CompressionLevel: level})
			if err != nil {
				b.Fatal(err)
			}
			defer mustClose(b, w)
			b.SetBytes(int64(len(ex.Payload)))
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				if _, err := w.WriteExchange(ex); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
			b.ReportMetric(float64(w.Bytes())/float64(b.N), "disk-B/op")
			b.ReportMetric(float64(b.N)*float64(len(ex.Payload))/float64(w.Bytes()), "ratio")
		})
	}
}

// BenchmarkWriteExchangeParallel runs WriteExchange from GOMAXPROCS
// goroutines. "compress-outside-lock" is the Writer as built;
// "compress-inside-lock" wraps each call in one more mutex, which is what
// compressing under the append lock would cost.
func BenchmarkWriteExchangeParallel(b *testing.B) {
	ex := benchExchange()
	for _, serialise := range []bool{false, true} {
		name := "compress-outside-lock"
		if serialise {
			name = "compress-inside-lock"
		}
		b.Run(name, func(b *testing.B) {
			w, err := NewWriter(Config{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer mustClose(b, w)
			var mu sync.Mutex
			b.SetBytes(int64(len(ex.Payload)))
			b.ReportAllocs()
			cpu := startCPU()
			defer cpu.report(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if serialise {
						mu.Lock()
					}
					_, err := w.WriteExchange(ex)
					if serialise {
						mu.Unlock()
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkEncode is the record encoding alone (digests, headers, gzip)
// without the file write, next to the same two records built and
// marshalled with nlnwa/gowarc, at the same gzip level and digest.
func BenchmarkEncode(b *testing.B) {
	ex := benchExchange()
	b.Run("weft", func(b *testing.B) {
		e, err := newEncoder(DefaultCompressionLevel)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(ex.Payload)))
		b.ReportAllocs()
		cpu := startCPU()
		for b.Loop() {
			e.out.Reset()
			if _, _, err := e.exchange(&ex); err != nil {
				b.Fatal(err)
			}
		}
		cpu.report(b)
	})
	b.Run("nlnwa-builder", func(b *testing.B) {
		gz, _ := gzip.NewWriterLevel(nil, DefaultCompressionLevel)
		var out bytes.Buffer
		b.SetBytes(int64(len(ex.Payload)))
		b.ReportAllocs()
		cpu := startCPU()
		defer cpu.report(b)
		for b.Loop() {
			out.Reset()
			req, resp := nlnwaRecords(b, &ex)
			for _, r := range []nlnwa.WarcRecord{req, resp} {
				gz.Reset(&out)
				if _, _, err := nlnwa.NewMarshaler().Marshal(gz, r, 0); err != nil {
					b.Fatal(err)
				}
				if err := gz.Close(); err != nil {
					b.Fatal(err)
				}
				r.Close()
			}
		}
	})
}

// nlnwaRecords builds ex's request and response records with nlnwa's
// record builder the way its documentation suggests. It is not safe to
// call concurrently (see record.go).
func nlnwaRecords(tb testing.TB, ex *Exchange) (req, resp nlnwa.WarcRecord) {
	opts := []nlnwa.WarcRecordOption{
		nlnwa.WithDefaultDigestAlgorithm("sha1"),
		nlnwa.WithAddMissingDigest(true),
	}
	rb := nlnwa.NewRecordBuilder(nlnwa.Response, opts...)
	rb.AddWarcHeader(nlnwa.WarcTargetURI, ex.URL)
	rb.AddWarcHeaderTime(nlnwa.WarcDate, ex.Date)
	rb.AddWarcHeader(nlnwa.WarcIPAddress, ex.IP)
	rb.AddWarcHeader(nlnwa.ContentType, contentTypeResponse)
	rb.Write(ex.ResponseHeader)
	rb.Write(ex.Payload)
	resp, _, err := rb.Build()
	if err != nil {
		tb.Fatal(err)
	}
	qb := nlnwa.NewRecordBuilder(nlnwa.Request, opts...)
	qb.AddWarcHeader(nlnwa.WarcTargetURI, ex.URL)
	qb.AddWarcHeaderTime(nlnwa.WarcDate, ex.Date)
	qb.AddWarcHeader(nlnwa.ContentType, contentTypeRequest)
	qb.AddWarcHeader(nlnwa.WarcConcurrentTo, "<"+resp.WarcHeader().GetId(nlnwa.WarcRecordID)+">")
	qb.Write(ex.RequestHeader)
	req, _, err = qb.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return req, resp
}

// TestNlnwaDigests records what nlnwa's builder computes, for comparison:
// without Transfer-Encoding its payload digest is that of the stored body,
// as ours is; for a chunked block it hashes the raw chunked bytes, which is
// why we store de-chunked bodies without Transfer-Encoding.
func TestNlnwaDigests(t *testing.T) {
	ex := benchExchange()
	_, resp := nlnwaRecords(t, &ex)
	if got := resp.WarcHeader().Get(nlnwa.WarcPayloadDigest); got != sha1Base32(ex.Payload) {
		t.Errorf("nlnwa payload digest %s, sha1 of Payload %s", got, sha1Base32(ex.Payload))
	}
	resp.Close()

	chunked := ex
	chunked.ResponseHeader = []byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
	chunked.Payload = []byte("5\r\nhello\r\n0\r\n\r\n")
	_, resp = nlnwaRecords(t, &chunked)
	if got := resp.WarcHeader().Get(nlnwa.WarcPayloadDigest); got != sha1Base32(chunked.Payload) || got == sha1Base32([]byte("hello")) {
		t.Errorf("nlnwa's chunked payload digest is %s; it used to hash the raw chunked bytes (%s)", got, sha1Base32(chunked.Payload))
	}
	resp.Close()
}

// BenchmarkCompressionLevel compresses a 40 KB page alone, to separate
// gzip's cost from the rest: as HTML, and as an already gzip-encoded body
// (what a server sends when the crawler accepts gzip).
func BenchmarkCompressionLevel(b *testing.B) {
	html := htmlPage(42, 40_000)
	gzipped := gzipBytes(b, htmlPage(43, 150_000)) // about 40 KB
	for _, body := range []struct {
		name string
		p    []byte
	}{{"html", html}, {"gzipped", gzipped}} {
		for _, level := range []int{1, 2, 3, 5, -1, 9} {
			b.Run(fmt.Sprintf("%s/level=%d", body.name, level), func(b *testing.B) {
				gz, _ := gzip.NewWriterLevel(nil, level)
				var out bytes.Buffer
				b.SetBytes(int64(len(body.p)))
				cpu := startCPU()
				for b.Loop() {
					out.Reset()
					gz.Reset(&out)
					gz.Write(body.p)
					gz.Close()
				}
				cpu.report(b)
				b.ReportMetric(float64(len(body.p))/float64(out.Len()), "ratio")
			})
		}
		// zstd at its fastest level, one frame a record and no dictionary,
		// as a .warc.zst writer would make it: what it would save over gzip
		// (docs/encodings.md).
		b.Run(body.name+"/zstd-fastest", func(b *testing.B) {
			zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
			if err != nil {
				b.Fatal(err)
			}
			defer zw.Close()
			var out []byte
			b.SetBytes(int64(len(body.p)))
			cpu := startCPU()
			for b.Loop() {
				out = zw.EncodeAll(body.p, out[:0])
			}
			cpu.report(b)
			b.ReportMetric(float64(len(body.p))/float64(len(out)), "ratio")
		})
	}
}
