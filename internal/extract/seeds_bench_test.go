package extract

import (
	"testing"

	"github.com/weft-crawler/weft/internal/synthweb"
)

// seedsPages returns the bodies of the first n HTML pages of a seeds world
// (synthweb.WorldSeeds, the default world of weft bench), the pages the
// crawl's extraction cost is measured on.
func seedsPages(tb testing.TB, n int) [][]byte {
	tb.Helper()
	w, err := synthweb.Start(synthweb.Config{Seed: 1, Hosts: 2, PagesPerHost: 200, World: synthweb.WorldSeeds})
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Close()
	var pages [][]byte
	for _, p := range w.AllPages() {
		if p.Status != 200 || p.ContentType == "" || p.ContentType[:9] != "text/html" {
			continue
		}
		if b := w.Body(p.URL); len(b) > 0 {
			pages = append(pages, b)
		}
		if len(pages) == n {
			break
		}
	}
	if len(pages) < n {
		tb.Fatalf("%d seeds pages, want %d", len(pages), n)
	}
	return pages
}

// BenchmarkSeedsPage reads pages of the seeds world as the crawler does:
// links and the word hashes of the visible text.
func BenchmarkSeedsPage(b *testing.B) {
	pages := seedsPages(b, 64)
	var size int64
	for _, p := range pages {
		size += int64(len(p))
	}
	b.SetBytes(size / int64(len(pages)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		HTML(pages[i%len(pages)], "weft", Limits{Words: DefaultMaxWords})
		i++
	}
}

// BenchmarkSeedsWords hashes the words of seeds-world pages, markup and
// all, as TextWords does for plain text.
func BenchmarkSeedsWords(b *testing.B) {
	pages := seedsPages(b, 64)
	var size int64
	for _, p := range pages {
		size += int64(len(p))
	}
	b.SetBytes(size / int64(len(pages)))
	b.ReportAllocs()
	words := make([]uint64, 0, DefaultMaxWords)
	i := 0
	for b.Loop() {
		words = appendWordHashes(words[:0], pages[i%len(pages)], DefaultMaxWords)
		i++
	}
}
