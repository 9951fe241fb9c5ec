package synthweb

import (
	"io"
	"testing"
)

// BenchmarkPage measures planning and rendering one 40 KB page, the work
// behind every HTML response.
func BenchmarkPage(b *testing.B) {
	w := startWeb(b, Config{Seed: 1, Hosts: 4, MinPageBytes: 40 << 10, MaxPageBytes: 40 << 10})
	h := w.hosts[0]
	p := int32(firstRandomPage)
	pl := &pagePlan{}
	buf := make([]byte, 0, 64<<10)
	b.SetBytes(40 << 10)
	b.ReportAllocs()
	for b.Loop() {
		w.plan(h, p, pl)
		buf = w.renderPage(buf[:0], h, p, pl)
	}
	if len(buf) != 40<<10 {
		b.Fatalf("rendered %d bytes", len(buf))
	}
}

// BenchmarkServe measures fetching pages over one keep-alive connection.
func BenchmarkServe(b *testing.B) {
	w := startWeb(b, Config{Seed: 1, Hosts: 4})
	c := newClient(b, w)
	var urls []string
	for _, p := range w.AllPages() {
		if p.Status == 200 && p.ContentType == "text/html; charset=utf-8" {
			urls = append(urls, p.URL)
		}
	}
	var n int64
	i := 0
	for b.Loop() {
		resp, err := c.Get(urls[i%len(urls)])
		if err != nil {
			b.Fatal(err)
		}
		m, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		n += m
		i++
	}
	b.SetBytes(n / int64(max(i, 1)))
}
