package crawl

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/media"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// TestMediaPolicy: by default the PDF every host links to is fetched,
// archived whole (once, the other hosts' copies as revisits) and counted
// by its media type; a policy that refuses
// PDFs still requests them (the type is known only from the answer) but
// reads no body: each is archived as its header alone, marked truncated,
// and counted as refused. Politeness holds throughout, from the server's
// log.
func TestMediaPolicy(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		web := startWeb(t, synthweb.Config{Seed: 12, Hosts: 4, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
			RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
		const delay = 10 * time.Millisecond
		cfg := testConfig(t, web, 4, delay)
		if refuse {
			p, err := media.New(nil, []string{"application/pdf"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Media = p
		}
		sum := runCrawl(t, cfg)
		pdfs := 0
		requests := pageRequests(web)
		for _, p := range web.AllPages() {
			if p.Role == "pdf" && p.Reachable && !p.Disallowed {
				pdfs++
				if requests[p.URL] != 1 {
					t.Errorf("refuse %t: %s requested %d times, want once", refuse, p.URL, requests[p.URL])
				}
			}
		}
		if pdfs < 2 {
			t.Fatalf("%d PDFs to fetch: the test proves little", pdfs)
		}
		if got := sum.Archived["application/pdf"]; refuse == (got != 0) || (!refuse && got != int64(pdfs)) {
			t.Errorf("refuse %t: %d PDFs archived whole (summary %v), want %d", refuse, got, sum.Archived, pdfs)
		}
		if got := sum.Refused["application/pdf"]; (refuse && got != int64(pdfs)) || (!refuse && got != 0) {
			t.Errorf("refuse %t: %d PDFs refused, want %d", refuse, got, pdfs)
		}
		files, _ := filepath.Glob(filepath.Join(cfg.DataDir, "warc", "*.warc.gz"))
		archived := 0
		for _, f := range files {
			for _, r := range readWARC(t, f) {
				typ := r.header.Get("WARC-Type")
				if (typ != "response" && typ != "revisit") || !strings.HasSuffix(r.header.Get("WARC-Target-URI"), ".pdf") {
					continue
				}
				archived++
				if typ == "revisit" { // every host serves the same PDF: archived once
					continue
				}
				_, body, _ := strings.Cut(string(r.block), "\r\n\r\n")
				if refuse && (body != "" || r.header.Get("WARC-Truncated") != "length") {
					t.Errorf("refused %s: %d body bytes archived, WARC-Truncated %q", r.header.Get("WARC-Target-URI"), len(body), r.header.Get("WARC-Truncated"))
				}
				if !refuse && (body == "" || r.header.Get("WARC-Truncated") != "") {
					t.Errorf("%s: archived with %d body bytes, WARC-Truncated %q", r.header.Get("WARC-Target-URI"), len(body), r.header.Get("WARC-Truncated"))
				}
			}
		}
		if archived != pdfs {
			t.Errorf("refuse %t: %d PDF responses in the WARC files, want %d", refuse, archived, pdfs)
		}
		for _, s := range synthweb.Audit(web, delay).Breaches() {
			t.Errorf("politeness: %s", s)
		}
	}
}
