package warc

import (
	"fmt"
	"testing"

	"github.com/weft-crawler/weft/internal/synthweb"
)

// seedsExchanges returns exchanges of the first n HTML pages of a seeds
// world (synthweb.WorldSeeds, weft bench's default), the records the
// crawl's WARC cost is measured on.
func seedsExchanges(tb testing.TB, n int) []Exchange {
	tb.Helper()
	w, err := synthweb.Start(synthweb.Config{Seed: 1, Hosts: 2, PagesPerHost: 200, World: synthweb.WorldSeeds})
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Close()
	var out []Exchange
	for _, p := range w.AllPages() {
		if p.Status != 200 || len(p.ContentType) < 9 || p.ContentType[:9] != "text/html" {
			continue
		}
		if b := w.Body(p.URL); len(b) > 0 {
			out = append(out, pageExchange(p.URL, len(out), b))
		}
		if len(out) == n {
			break
		}
	}
	if len(out) < n {
		tb.Fatalf("%d seeds pages, want %d", len(out), n)
	}
	return out
}

// BenchmarkSeedsExchange writes exchanges of seeds-world pages at the
// default level (0: gzip level 1) and at the library's default, 6.
func BenchmarkSeedsExchange(b *testing.B) {
	exs := seedsExchanges(b, 64)
	var size int64
	for _, ex := range exs {
		size += int64(len(ex.Payload))
	}
	for _, level := range []int{0, 6} {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) {
			w, err := NewWriter(Config{Dir: b.TempDir(), CompressionLevel: level})
			if err != nil {
				b.Fatal(err)
			}
			defer mustClose(b, w)
			b.SetBytes(size / int64(len(exs)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := w.WriteExchange(exs[i%len(exs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N)*float64(size/int64(len(exs)))/float64(w.Bytes()), "ratio")
		})
	}
}

// BenchmarkWriteOutlinks writes the metadata record the crawler writes
// for a page of the seeds world: about 100 outlinks.
func BenchmarkWriteOutlinks(b *testing.B) {
	m := Metadata{URL: "http://h000.weft.test:8080/news/business/", Date: testDate, ConcurrentTo: "<urn:uuid:00000000-0000-4000-8000-000000000000>"}
	for i := range 100 {
		m.Fields = append(m.Fields, [2]string{"outlink", fmt.Sprintf("http://h%03d.weft.test:8080/news/2026/%02d/story-%d.html", i%7, i%12, i*37)})
	}
	w, err := NewWriter(Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer mustClose(b, w)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.WriteMetadata(m); err != nil {
			b.Fatal(err)
		}
	}
}
